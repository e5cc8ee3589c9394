#pragma once
// Scenarios and step-report helpers shared by the step simulator's tests.
#include <string>
#include <vector>

#include "cli/profiles_source.hpp"
#include "cli/scenario_source.hpp"
#include "models/training_step.hpp"

namespace trainsim::test {

// The scenario `file` (the built-in demo when empty) with `sets` applied, as the CLI loads it.
inline models::Scenario scenario(const std::vector<std::string>& sets,
                                 const std::string& file = "") {
  static const auto profiles = cli::load_profile_library({});
  return cli::load_scenario_source(file, sets, profiles);
}

inline std::string example(const char* name) {
  return std::string(TRAINSIM_SOURCE_DIR) + "/examples/" + name;
}

// Every part of the breakdown: they add up to the step time.
inline double breakdown_sum(const models::StepReport& r) {
  const auto& b = r.breakdown;
  return b.compute_s + b.recompute_s + b.host_s + b.exposed_comm_s + b.input_stall_s + b.bubble_s +
         b.optimizer_s + b.tp_comm_s + b.zero_comm_s;
}

}  // namespace trainsim::test
