// cuDNN 5-6's LSTM steps on Pascal at batches below 32 run small-batch kernels whose time is
// their FLOPs at a rate per SM and clock (hw_profiles/kernels/nvidia-pascal.json,
// recurrent_narrow_batch): DeepBench's forward steps at N = 8 and 16 take time in proportion to
// N h^2, at 13-16 FLOP per cycle per SM on the P100 and the GP102 boards alike.
#include <catch2/catch.hpp>

#include <cstdint>

#include "cli/profiles_source.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/lstm_kernels.hpp"

namespace {

using trainsim::sim::Dtype;
using trainsim::sim::kernel_body_s;
using trainsim::test::lstm_step;

// The step's FLOPs at `per_cycle` FLOP per cycle per SM at the board's boost clock.
double at_rate_s(const trainsim::sim::AcceleratorSpec& a, const trainsim::sim::Kernel& k,
                 double per_cycle) {
  return k.flops / (per_cycle * a.compute_units * *a.boost_clock_hz);
}

}  // namespace

TEST_CASE("Pascal's LSTM steps below batch 32 run at a rate per SM and clock") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto p100 = lib.accelerator("p100-sxm2-16gb", "test");
  const auto& e = p100.kernels;
  REQUIRE(e.narrow_batch_below == 32);
  REQUIRE(p100.boost_clock_hz);
  for (const double batch : {8.0, 16.0}) {
    for (const std::int64_t h : {256, 1536, 4096}) {
      const auto fwd = lstm_step(h, batch, Dtype::fp32, false);
      CHECK(kernel_body_s(p100, fwd) ==
            Approx(at_rate_s(p100, fwd, e.narrow_batch_forward_flops_per_cycle)));
      const auto bwd = lstm_step(h, batch, Dtype::fp32, true);
      // The data gradient at a share of the fp32 peak (at the sustained clock).
      CHECK(
          kernel_body_s(p100, bwd) ==
          Approx(bwd.flops / (e.narrow_batch_data_gradient_peak_fraction * *p100.peak(Dtype::fp32) *
                              trainsim::sim::sustained_clock_fraction(p100, Dtype::fp32))));
    }
  }
  // In proportion to the batch: N = 8 takes half the N = 16 time (DeepBench's P100 at h 1536:
  // 157 and 275 us per forward step), where a 64-wide tile would price both alike.
  CHECK(kernel_body_s(p100, lstm_step(1536, 8, Dtype::fp32, false)) ==
        Approx(0.5 * kernel_body_s(p100, lstm_step(1536, 16, Dtype::fp32, false))));
  // DeepBench's P100 forward step at h 4096, N 16: 2.01 ms (25 steps in 50.2 ms).
  CHECK(kernel_body_s(p100, lstm_step(4096, 16, Dtype::fp32, false)) ==
        Approx(2.01e-3).epsilon(0.15));
  // At N = 32 the tiles price it, several times faster per FLOP (DeepBench: 0.90 ms at h 4096).
  const auto n32 = lstm_step(4096, 32, Dtype::fp32, false);
  CHECK(kernel_body_s(p100, n32) <
        0.5 * at_rate_s(p100, n32, e.narrow_batch_forward_flops_per_cycle));
  // fp16 steps (P100's half2) keep their tiles: the rates are the fp32 rows'.
  const auto half = lstm_step(4096, 16, Dtype::fp16, false);
  CHECK(kernel_body_s(p100, half) !=
        Approx(at_rate_s(p100, half, e.narrow_batch_forward_flops_per_cycle)));
}

TEST_CASE("the small-batch rate is per SM: the GP102 boards share it with the P100") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto p100 = lib.accelerator("p100-sxm2-16gb", "test");
  const auto gtx = lib.accelerator("gtx-1080-ti", "test");
  const auto fwd = lstm_step(2048, 16, Dtype::fp32, false);
  // 28 SMs of 128 lanes against 56 of 64: the GP102 board's forward step is the slower, though
  // its fp32 peak is the higher (DeepBench at h 2048, N 16: 0.80 ms against 0.51 ms per step).
  REQUIRE(*gtx.peak(Dtype::fp32) > *p100.peak(Dtype::fp32));
  const double ratio = kernel_body_s(gtx, fwd) / kernel_body_s(p100, fwd);
  CHECK(ratio == Approx(56.0 * 1480 / (28.0 * 1800)));
  CHECK(ratio > 1.5);
  // The data gradient's rate is per lane: the GP102 board, with the higher fp32 peak, is the
  // faster there (DeepBench at h 2048, N 16: 0.38 ms against 0.39 ms per step).
  const auto bwd = lstm_step(2048, 16, Dtype::fp32, true);
  CHECK(kernel_body_s(gtx, bwd) < kernel_body_s(p100, bwd));
  // Without the key the same step runs on the fallback tile and is priced at a tiled rate.
  auto tiled = gtx;
  tiled.kernels.narrow_batch_below = 0;
  CHECK(kernel_body_s(tiled, fwd) < 0.6 * kernel_body_s(gtx, fwd));
  // Volta's cuDNN 7.6 has no such kernels.
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  CHECK(v100.kernels.narrow_batch_below == 0);
}
