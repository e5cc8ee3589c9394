// NVIDIA Apex AMP at opt_level O1 (framework pytorch_apex_amp): every patched torch function runs
// a Python wrapper that casts its arguments, host time on each forward launch of a 16-bit step
// (framework host.amp_cast_per_kernel). DeepLearningExamples' Tacotron 2 recipe trained its AMP
// rows so, and on A100 they are slower than its TF32 rows at the same batch (26,484 against
// 31,499 mel frames/s, PyTorch/SpeechSynthesis/Tacotron2/README.md at 729963d, line 696): the
// decoder loop is host-bound, and O1 lengthens the host's part.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/kernel_plan.hpp"
#include "support/run_cli.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Launch;
using trainsim::models::Pass;

namespace {

// Tacotron 2 on one A100 of a DGX A100 as `trainsim validate` maps DeepLearningExamples' rows:
// no input pipeline, batch 128, Adam.
trainsim::models::Scenario tacotron_a100(const std::string& framework,
                                         const std::string& precision) {
  static const std::string file = trainsim::test::write_temp_file(R"({
    "name": "tacotron2-a100", "cluster": "dgx-a100", "model": "tacotron2",
    "batch_per_replica": 128, "optimizer": "adam", "parallelism": {"data": 1},
    "steps": 3, "warmup_steps": 1})");
  return trainsim::test::scenario({"framework=" + framework, "precision=" + precision}, file);
}

std::vector<Launch> all_launches(const trainsim::models::Scenario& s, Pass pass) {
  auto out = trainsim::test::model_launches(s, pass, 8);
  REQUIRE(!out.empty());
  return out;
}

}  // namespace

TEST_CASE("Apex O1 adds its cast wrapper's host time to each forward launch of a 16-bit step") {
  const auto apex = tacotron_a100("pytorch_apex_amp", "fp16");
  const auto native = tacotron_a100("pytorch_eager", "fp16");
  // The two profiles differ only in the mixed-precision layer's per-op cost and in where the
  // weight casts come from (Apex's Python wrapper; torch.amp's C++ dispatch).
  const double extra_s =
      apex.framework.host_amp_cast_per_kernel_s - native.framework.host_amp_cast_per_kernel_s;
  REQUIRE(extra_s > 10e-6);
  REQUIRE(apex.framework.host_forward_per_kernel_s == native.framework.host_forward_per_kernel_s);
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const auto a = all_launches(apex, pass);
    const auto n = all_launches(native, pass);
    REQUIRE(a.size() == n.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].device_s == n[i].device_s);
      if (pass == Pass::forward && std::string(a[i].what) == "weight cast") {
        CHECK(a[i].host_s ==
              Approx(trainsim::models::host_launch_s(apex, Pass::forward)).epsilon(1e-12));
        continue;
      }
      // Backward runs in the autograd engine, past the wrappers; so do the kernels cuDNN
      // launches inside one op (the encoder LSTM's steps: KernelSpec::library_launch).
      const bool library = n[i].host_s == native.framework.host_library_launch_s;
      CHECK(a[i].host_s - n[i].host_s ==
            Approx(pass == Pass::forward && !library ? extra_s : 0.0).margin(1e-12));
    }
  }
}

TEST_CASE("Apex O1 costs nothing in an fp32 or TF32 step: amp.initialize is not called") {
  for (const char* precision : {"fp32", "tf32"}) {
    const auto a =
        trainsim::models::simulate_training(tacotron_a100("pytorch_apex_amp", precision));
    const auto n = trainsim::models::simulate_training(tacotron_a100("pytorch_eager", precision));
    CHECK(a.step_time_s == n.step_time_s);
  }
}

TEST_CASE("Tacotron 2 on A100 under Apex O1 trains slower in AMP than in TF32, as measured") {
  const auto run = [](const char* framework, const char* precision) {
    return trainsim::models::simulate_training(tacotron_a100(framework, precision));
  };
  const auto tf32 = run("pytorch_eager", "tf32");
  const auto apex = run("pytorch_apex_amp", "fp16");
  const auto native = run("pytorch_eager", "fp16");
  // torch.amp's step is shorter than TF32's (its GEMMs run at the fp16 rate); O1's is longer,
  // host-bound on the wrappers (measured 31,499 / 26,484 = 1.19x TF32's step).
  CHECK(native.step_time_s < tf32.step_time_s);
  CHECK(apex.step_time_s > tf32.step_time_s);
  CHECK(apex.step_time_s / tf32.step_time_s == Approx(31499.0 / 26484).epsilon(0.1));
}
