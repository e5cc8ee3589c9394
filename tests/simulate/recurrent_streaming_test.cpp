// cuDNN's recurrent step GEMMs read their weights with few thread blocks in flight: at the
// batches of training (N <= 32) a step of hidden h streams the 4h x h recurrent weights at what
// the rows of its operand panels in flight draw (Little's law; the kernels profile's
// recurrent_block_bandwidth per 128x128 block), not at the device's rate, so its time grows with
// h (bytes ~ h^2, rows ~ h). A library GEMM of the same shape, which splits K to fill the device,
// streams at the device's rate.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "cli/profiles_source.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/lstm_kernels.hpp"

namespace {

using trainsim::sim::Dtype;
using trainsim::sim::KernelClass;
using trainsim::test::lstm_step;

}  // namespace

TEST_CASE("recurrent steps stream their weights at what their thread blocks draw") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  const double block_bw = v100.kernels.recurrent_block_bw_bytes_per_s;
  REQUIRE(block_bw > 0);
  // h = 1024, N = 16, fp32: 16 + 4096 panel rows in flight, each drawing block_bw / 256 (a
  // 128 x 128 block keeps 256 rows in flight), well below the V100's ~750 GB/s.
  const auto fwd = lstm_step(1024, 16, Dtype::fp32, false);
  const double rows_bw = block_bw * (16 + 4096) / 256;
  REQUIRE(rows_bw < 0.5 * 900e9);
  CHECK(trainsim::sim::kernel_body_s(v100, fwd) == Approx(fwd.bytes / rows_bw).epsilon(0.01));
  // Backward reads the same weights with as many rows in flight (the four gates' products, h
  // output columns each): the same time, as DeepBench's V100 cells measure.
  const auto bwd = lstm_step(1024, 16, Dtype::fp32, true);
  CHECK(trainsim::sim::kernel_body_s(v100, bwd) ==
        Approx(trainsim::sim::kernel_body_s(v100, fwd)).epsilon(0.02));
  // Twice the hidden size: four times the weights over twice the rows, twice the time.
  const auto wide = lstm_step(2048, 16, Dtype::fp32, false);
  CHECK(trainsim::sim::kernel_body_s(v100, wide) / trainsim::sim::kernel_body_s(v100, fwd) ==
        Approx(2).epsilon(0.05));
  // The same GEMM as a library GEMM streams at the device's rate, more than twice as fast.
  auto library = fwd;
  library.cls = KernelClass::gemm;
  CHECK(trainsim::sim::kernel_body_s(v100, library) <
        0.5 * trainsim::sim::kernel_body_s(v100, fwd));
}

TEST_CASE("a large batch makes a recurrent step compute-bound, priced as any GEMM") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  // h = 4096, N = 512 (fp32): 69 GFLOP per step, far more time than reading 268 MB of weights
  // even at the rows' rate.
  const auto step = lstm_step(4096, 512, Dtype::fp32, false);
  auto unbounded = v100;
  unbounded.kernels.recurrent_block_bw_bytes_per_s = 0;
  CHECK(trainsim::sim::kernel_body_s(v100, step) ==
        Approx(trainsim::sim::kernel_body_s(unbounded, step)));
}

TEST_CASE("without a recurrent block bandwidth a step streams at the device's rate") {
  const auto lib = trainsim::cli::load_profile_library({});
  // AMD's profiles give none (MIOpen's RNN kernels are not timed by any table here).
  const auto mi300x = lib.accelerator("mi300x", "test");
  REQUIRE(mi300x.kernels.recurrent_block_bw_bytes_per_s == 0);
  const auto step = lstm_step(1024, 16, Dtype::fp16, false);
  auto library = step;
  library.cls = KernelClass::gemm;
  // Only the class's compute efficiency differs; the step is memory-bound either way.
  CHECK(trainsim::sim::kernel_body_s(mi300x, step) ==
        Approx(trainsim::sim::kernel_body_s(mi300x, library)).epsilon(0.01));
}
