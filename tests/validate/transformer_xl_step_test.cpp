// DeepLearningExamples' PyTorch Transformer-XL base steps JITLamb (a scripted function per
// tensor) after clip_grad_norm_ (a norm and a scaling per tensor), both loops of Python calls
// after backward's host sync (train.py: loss.item(), then the clip and optimizer.step()). On a
// DGX-1 (V100 16GB, AMP) its README's rows at batch 16 and 32 per GPU (PyTorch/LanguageModeling/
// Transformer-XL/README.md lines 1494 and 1498 at 729963d: 26,639 and 36,692 tok/s of 192-token
// segments) are 115.3 and 167.4 ms per step, so t = 63.1 ms + 3.26 ms per segment: a fixed cost
// of about half the step at batch 16. Priced as apex's FusedLAMB with no clipping, the step's
// fixed part was about half of that.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "models/training_step.hpp"
#include "support/run_cli.hpp"
#include "support/step_scenarios.hpp"

namespace {

double step_s(const std::string& file, int batch, const char* optimizer, const char* clipping) {
  const trainsim::models::Scenario s = trainsim::test::scenario(
      {"batch_per_replica=" + std::to_string(batch), std::string("optimizer=") + optimizer,
       std::string("gradient_clipping=") + clipping},
      file);
  return trainsim::models::simulate_training(s).step_time_s;
}

}  // namespace

TEST_CASE("Transformer-XL's per-tensor optimizer loops are its step's fixed cost", "[validate]") {
  const std::string file =
      (std::filesystem::path(trainsim::test::fresh_dir("transformer_xl_step")) / "txl.json")
          .string();
  std::ofstream(file) << R"({"name": "txl-base-dgx1", "cluster": "dgx-1-v100",
    "model": {"name": "transformerxl_base"}, "precision": "fp16", "framework": "pytorch_eager",
    "batch_per_replica": 16, "parallelism": {"data": 1}, "steps": 4, "warmup_steps": 1})";
  const double measured_16_s = 16 * 192 / 26639.0, measured_32_s = 32 * 192 / 36692.0;
  const double measured_fixed_s = 2 * measured_16_s - measured_32_s;  // 63.1 ms
  const double loops_16 = step_s(file, 16, "jit_lamb", "per_tensor");
  const double loops_32 = step_s(file, 32, "jit_lamb", "per_tensor");
  const double fused_16 = step_s(file, 16, "lamb", "none");
  const double fused_32 = step_s(file, 32, "lamb", "none");
  INFO("loops " << loops_16 << " " << loops_32 << ", fused " << fused_16 << " " << fused_32);
  // The per-segment slope is the model's and the recipe's alike.
  CHECK((loops_32 - loops_16) / 16 == Approx((measured_32_s - measured_16_s) / 16).epsilon(0.1));
  CHECK((fused_32 - fused_16) / 16 == Approx((measured_32_s - measured_16_s) / 16).epsilon(0.1));
  // The fixed part: the loops give the measured one (63 ms), FusedLAMB without clipping about
  // half of it.
  CHECK(2 * loops_16 - loops_32 == Approx(measured_fixed_s).epsilon(0.15));
  CHECK(2 * fused_16 - fused_32 < 0.65 * measured_fixed_s);
}
