// The optimizer step's Python loops: JITLamb's scripted function per tensor (DeepLearningExamples'
// Transformer-XL), torch.nn.utils.clip_grad_norm_ per tensor or over foreach ops, and a
// multi-tensor op priced as one Python call that launches its kernels from C++.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/kernel_plan.hpp"
#include "models/training_step.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Launch;
using trainsim::models::optimizer_launches;
using trainsim::models::Scenario;
using trainsim::test::scenario;

namespace {

std::vector<Launch> launches_of(const Scenario& s) {
  std::vector<Launch> out;
  optimizer_launches(s, static_cast<double>(s.model.params()), s.model.param_tensors(), out);
  return out;
}

double launch_count(const std::vector<Launch>& launches) {
  double n = 0;
  for (const Launch& l : launches)
    n += l.count;
  return n;
}

}  // namespace

TEST_CASE("JITLamb launches its scripted function's five kernels per tensor from Python") {
  const Scenario s = scenario({"framework=pytorch_eager", "precision=fp32", "optimizer=jit_lamb"});
  REQUIRE(s.optimizer == trainsim::models::Optimizer::jit_lamb);
  const int tensors = s.model.param_tensors();
  const std::vector<Launch> jit = launches_of(s);
  REQUIRE(jit.size() == 5);
  const char* names[] = {"jit_lamb moments and step", "jit_lamb weight norm", "jit_lamb step norm",
                         "jit_lamb trust ratio", "jit_lamb update"};
  for (std::size_t i = 0; i < jit.size(); ++i) {
    CHECK(std::string(jit[i].what) == names[i]);
    CHECK(jit[i].count == tensors);
    // Each a Python-level call: the profile's host time per optimizer kernel, whatever the
    // framework's multi-tensor optimizer kernels.
    CHECK(jit[i].host_s == Approx(s.framework.host_optimizer_per_kernel_s));
  }
  CHECK(jit[1].cls == trainsim::sim::KernelClass::reduction);
  CHECK(jit[2].cls == trainsim::sim::KernelClass::reduction);
  // The same state as Adam and apex's FusedLAMB: two fp32 moments.
  const Scenario fused = scenario({"framework=pytorch_eager", "precision=fp32", "optimizer=lamb"});
  CHECK(trainsim::models::optimizer_state_bytes_per_param(s) ==
        trainsim::models::optimizer_state_bytes_per_param(fused));
  // 48 fp32 bytes per parameter in five passes (28 + 4 + 4 + 0 + 12): on ResNet-50's 161 tensors
  // of 25.6 M parameters at least that traffic's time at the device's bandwidth, and many times
  // FusedLAMB's launches.
  const double bytes = 48.0 * static_cast<double>(s.model.params());
  CHECK(trainsim::models::device_seconds(jit) >
        bytes / s.cluster.accelerator.memory_bw_bytes_per_s);
  CHECK(launch_count(jit) > 10 * launch_count(launches_of(fused)));
  // Under torch.amp the gradients are unscaled first.
  const std::vector<Launch> amp =
      launches_of(scenario({"framework=pytorch_eager", "precision=fp16", "optimizer=jit_lamb"}));
  REQUIRE(amp.size() == 6);
  CHECK(std::string(amp.front().what) == "grad unscale");
}

TEST_CASE("clip_grad_norm_ adds a norm and a scaling per tensor, or two foreach ops") {
  const std::vector<std::string> base{"framework=pytorch_eager", "precision=fp16",
                                      "optimizer=adam"};
  std::vector<std::string> none = base, each = base, multi_sets = base;
  none.push_back("gradient_clipping=none");
  each.push_back("gradient_clipping=per_tensor");
  multi_sets.push_back("gradient_clipping=foreach");
  const Scenario none_s = scenario(none), each_s = scenario(each), foreach_s = scenario(multi_sets);
  CHECK(none_s.gradient_clipping == trainsim::models::GradientClipping::none);
  CHECK(scenario(base).gradient_clipping == trainsim::models::GradientClipping::none);
  const int tensors = each_s.model.param_tensors();
  const std::vector<Launch> plain = launches_of(none_s), per_tensor = launches_of(each_s),
                            multi = launches_of(foreach_s);
  // The clip's kernels come between the unscale and the optimizer's ops.
  REQUIRE(per_tensor.size() == plain.size() + 3);
  CHECK(std::string(per_tensor[0].what) == "grad unscale");
  CHECK(std::string(per_tensor[1].what) == "clip grad norms");
  CHECK(std::string(per_tensor[2].what) == "clip total norm");
  CHECK(std::string(per_tensor[3].what) == "clip grad scale");
  CHECK(std::string(per_tensor[4].what) == std::string(plain[1].what));
  CHECK(per_tensor[1].count == tensors);
  CHECK(per_tensor[2].count == 5);  // stack, the total norm, + 1e-6, the division, clamp
  CHECK(per_tensor[3].count == tensors);
  CHECK(launch_count(per_tensor) == launch_count(plain) + 2 * tensors + 5);
  CHECK(per_tensor[1].host_s == Approx(each_s.framework.host_optimizer_per_kernel_s));
  CHECK(per_tensor[1].cls == trainsim::sim::KernelClass::reduction);
  // foreach: ResNet-50's 161 tensors of 25.6 M parameters fill two multi_tensor_apply launches
  // per op (110 tensors of depth 1), each op one Python call.
  REQUIRE(multi.size() == plain.size() + 3);
  CHECK(multi[1].count == 2);
  CHECK(multi[3].count == 2);
  CHECK(launch_count(multi) == launch_count(plain) + 2 + 5 + 2);
  CHECK(trainsim::models::host_seconds(multi) < trainsim::models::host_seconds(per_tensor) / 10);
  // Both read the fp32 gradient once for the norms and read and write it once to scale it.
  const double grad_bytes = 4.0 * static_cast<double>(each_s.model.params());
  CHECK(per_tensor[1].device_s * per_tensor[1].count >
        grad_bytes / each_s.cluster.accelerator.memory_bw_bytes_per_s);
  CHECK(multi[3].device_s * multi[3].count >
        2 * grad_bytes / each_s.cluster.accelerator.memory_bw_bytes_per_s);
  // The loop's launches run after backward's sync (pytorch_eager: syncs_per_step 1), so clipping
  // per tensor lengthens the step.
  const auto step_s = [](const Scenario& sc) {
    return trainsim::models::simulate_training(sc).step_time_s;
  };
  CHECK(step_s(each_s) > step_s(none_s));
  CHECK(step_s(foreach_s) >= step_s(none_s));
}

TEST_CASE("A multi-tensor op is one Python call that launches its kernels from C++") {
  // torch.optim's foreach Adam on ResNet-50 (161 tensors): each of its eight ops launches two to
  // five kernels (kernel_plan.cpp, foreach_launches), the first at the Python call's host time and
  // the rest at the library launch cost.
  const Scenario s = scenario({"framework=pytorch_eager", "precision=fp32", "optimizer=adam"});
  const double call_s = s.framework.host_optimizer_per_kernel_s;
  const double launch_s = s.framework.host_library_launch_s;
  REQUIRE(launch_s < call_s);
  for (const Launch& l : launches_of(s)) {
    INFO(l.what);
    REQUIRE(l.count >= 2);
    CHECK(l.host_s * l.count == Approx(call_s + (l.count - 1) * launch_s));
  }
  // Per tensor (TensorFlow's graph optimizer: one ApplyAdam-style kernel per variable) every
  // launch is a call of its own.
  const Scenario tf = scenario({"framework=tensorflow_graph", "precision=fp32", "optimizer=adam"});
  for (const Launch& l : launches_of(tf))
    CHECK(l.host_s == Approx(tf.framework.host_optimizer_per_kernel_s));
}
