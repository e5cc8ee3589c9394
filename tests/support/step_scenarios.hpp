#pragma once
// Scenarios and step-report helpers shared by the step simulator's tests.
#include <string>
#include <vector>

#include <algorithm>

#include "cli/profiles_source.hpp"
#include "cli/scenario_source.hpp"
#include "models/kernel_plan.hpp"
#include "models/training_step.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/profile_library.hpp"

namespace trainsim::test {

// The scenario `file` (the built-in demo when empty) with `sets` applied, as the CLI loads it.
inline models::Scenario scenario(const std::vector<std::string>& sets,
                                 const std::string& file = "") {
  return cli::load_scenario_source(file, sets, library());
}

inline std::string example(const char* name) {
  return std::string(TRAINSIM_SOURCE_DIR) + "/examples/" + name;
}

// The kernels every layer of `s`'s model launches in `pass` for `batch` samples, in layer order.
inline std::vector<models::Launch> model_launches(const models::Scenario& s, models::Pass pass,
                                                  double batch) {
  std::vector<models::Launch> out;
  for (const auto& l : s.model.layers)
    models::layer_launches(s, l, pass, batch, out);
  return out;
}

// Every part of the breakdown: they add up to the step time.
inline double breakdown_sum(const models::StepReport& r) {
  const auto& b = r.breakdown;
  return b.compute_s + b.recompute_s + b.host_s + b.exposed_comm_s + b.input_stall_s + b.bubble_s +
         b.optimizer_s + b.tp_comm_s + b.zero_comm_s;
}

// One micro-batch's gradient accumulation: per layer, one kernel per parameter tensor reading
// the new gradient and the sum and writing the sum, launched back to back (a run takes the
// longer of its device time and the host's launches; `device_only`: the device time alone).
inline double accumulate_s(const models::Scenario& s, bool device_only = false) {
  double total = 0;
  for (const auto& l : s.model.layers) {
    if (l.params <= 0 || l.param_tensors <= 0) continue;
    sim::Kernel add;
    add.cls = sim::KernelClass::elementwise;
    add.dtype = sim::Dtype::fp32;
    add.bytes =
        3 * models::gradient_bytes_per_param(s) * static_cast<double>(l.params) / l.param_tensors;
    const double t = sim::kernel_time_s(s.cluster.accelerator, add);
    const double n = l.param_tensors;
    total +=
        device_only ? n * t : std::max(n * t, (n - 1) * s.framework.host_backward_per_kernel_s + t);
  }
  return total;
}

}  // namespace trainsim::test
