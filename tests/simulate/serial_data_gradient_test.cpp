// cuDNN 5-6's LSTM backward-data steps on Pascal at a batch of 32 walk their 4h-long reduction
// with one dependent memory access per element (hw_profiles/kernels/nvidia-pascal.json,
// recurrent_serial_data_gradient): DeepBench's P100 and GP102 rows take 4h x 97-145 ns per step
// at every h from 256 to 4096, 3-4.5x the time of the same cells at N = 16 and 64.
#include <catch2/catch.hpp>

#include <cstdint>

#include "cli/profiles_source.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/lstm_kernels.hpp"

namespace {

using trainsim::sim::Dtype;
using trainsim::test::lstm_step;

}  // namespace

TEST_CASE("Pascal's backward-data LSTM step at batch 32 walks its reduction serially") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto p100 = lib.accelerator("p100-sxm2-16gb", "test");
  const auto& e = p100.kernels;
  REQUIRE(e.serial_data_gradient_batches.size() == 1);
  REQUIRE(e.serial_data_gradient_batches[0] == 32);
  REQUIRE(p100.boost_clock_hz);
  const double per_element_s = e.serial_data_gradient_cycles_per_element / *p100.boost_clock_hz;
  // 4h elements per step, whatever else bounds it: linear in h.
  for (const std::int64_t h : {256, 1024, 2048}) {
    const auto step = lstm_step(h, 32, Dtype::fp32, true);
    CHECK(step.recurrent_data_gradient);
    CHECK(trainsim::sim::kernel_body_s(p100, step) == Approx(4.0 * h * per_element_s));
  }
  // DeepBench's P100 at h 1024, N 32: 13.8 ms for 25 steps, 135 ns per element.
  CHECK(per_element_s * 1e9 == Approx(135).epsilon(0.2));
  // Batches 16 and 64 and the forward step keep the tiled GEMM's price, several times less.
  const double serial_s = 4.0 * 1024 * per_element_s;
  for (const double batch : {16.0, 64.0})
    CHECK(trainsim::sim::kernel_body_s(p100, lstm_step(1024, batch, Dtype::fp32, true)) <
          0.5 * serial_s);
  const auto forward = lstm_step(1024, 32, Dtype::fp32, false);
  CHECK_FALSE(forward.recurrent_data_gradient);
  CHECK(trainsim::sim::kernel_body_s(p100, forward) < 0.5 * serial_s);
  // Where the step streams its weights for longer (h 4096 at the rows' rate), that bound holds.
  auto slow = p100;
  slow.kernels.recurrent_block_bw_bytes_per_s /= 100;
  const auto wide = lstm_step(4096, 32, Dtype::fp32, true);
  CHECK(trainsim::sim::kernel_body_s(slow, wide) > 2 * 4.0 * 4096 * per_element_s);
}

TEST_CASE("the serial step is Pascal's: cuDNN 7.6 on the V100 prices batch 32 as any") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  CHECK(v100.kernels.serial_data_gradient_batches.empty());
  // The V100's step at N = 32 costs about what it does at N = 16 (DeepBench: 1.75 ms and 1.66
  // ms for 25 steps at h 1024), not 3-4.5x.
  const double n16 = trainsim::sim::kernel_body_s(v100, lstm_step(1024, 16, Dtype::fp32, true));
  const double n32 = trainsim::sim::kernel_body_s(v100, lstm_step(1024, 32, Dtype::fp32, true));
  CHECK(n32 < 1.5 * n16);
  // And a Pascal board the serial steps apply to counts the cycles at its own rated clock.
  const auto titan = lib.accelerator("titan-xp", "test");
  const auto step = lstm_step(512, 32, Dtype::fp32, true);
  CHECK(trainsim::sim::kernel_body_s(titan, step) ==
        Approx(4.0 * 512 * titan.kernels.serial_data_gradient_cycles_per_element /
               *titan.boost_clock_hz));
}
