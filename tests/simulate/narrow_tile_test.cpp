// The tiling of GEMM views. A GEMM operand narrower than 16 gets a tile as narrow as the math
// allows: one column on SIMT math (a GEMV-like strip, as cuDNN runs a convolution's data gradient
// onto one input channel), 8 on tensor cores (the narrowest MMA operand). Before, a 16-wide tile
// wasted 15/16 of a one-channel data gradient and priced DeepBench's P100 and GTX 1080 Ti
// first-layer rows 5-6x too slow. A convolution's tiles lose no throughput below 16 (the im2col
// operand's pixels serve several filter taps each, from registers); a GEMM's lose some at every
// halving (kernel_model.cpp, fastest_tiling_s).
#include <catch2/catch.hpp>

#include "cli/profiles_source.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/gemm_kernels.hpp"

namespace {

using trainsim::sim::Dtype;
using trainsim::sim::KernelClass;

// A compute-bound GEMM kernel (no DRAM bytes) of m x n outputs over a reduction of k.
trainsim::sim::Kernel gemm(double m, double n, double k, Dtype dtype,
                           KernelClass cls = KernelClass::gemm) {
  return trainsim::test::gemm_kernel(m, n, k, dtype, cls, true);
}

}  // namespace

TEST_CASE("a one-column convolution GEMM runs in a one-column tile on SIMT math") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto p100 = lib.accelerator("p100-sxm2-16gb", "test");
  const double m = 1 << 20, k = 1600;
  const double one =
      trainsim::sim::kernel_body_s(p100, gemm(m, 1, k, Dtype::fp32, KernelClass::conv));
  const double sixteen =
      trainsim::sim::kernel_body_s(p100, gemm(m, 16, k, Dtype::fp32, KernelClass::conv));
  // A 16-wide tile would make both cost the same; the 1-wide tile runs at the 16-wide one's rate
  // per useful flop, so it takes a sixteenth.
  CHECK(one == Approx(sixteen / 16).epsilon(1e-9));
  // A library GEMM's 1-wide tile pays Pascal's 0.733 for each of its four halvings below 16
  // (about 3.5x); Pascal's cuBLAS has no tile that narrow at all (gemm_tile.narrow_operand).
  auto regular = p100;
  regular.kernels.narrow_operand_below = 0;
  const double gemm_one = trainsim::sim::kernel_body_s(regular, gemm(m, 1, k, Dtype::fp32));
  const double gemm_sixteen = trainsim::sim::kernel_body_s(regular, gemm(m, 16, k, Dtype::fp32));
  CHECK(gemm_one > 3 * gemm_sixteen / 16);
  CHECK(gemm_one < gemm_sixteen / 4);
}

TEST_CASE("tensor-core tiles are never narrower than 8") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  const double m = 1 << 20, k = 1600;
  const double one = trainsim::sim::kernel_body_s(v100, gemm(m, 1, k, Dtype::fp16));
  const double eight = trainsim::sim::kernel_body_s(v100, gemm(m, 8, k, Dtype::fp16));
  // Both fill one 8-wide tile per row block: the same waves, the same time.
  CHECK(one == Approx(eight).epsilon(1e-12));
  // In fp32 (SIMT on V100) the one-column GEMM takes a narrower tile and is faster.
  CHECK(trainsim::sim::kernel_body_s(v100, gemm(m, 1, k, Dtype::fp32)) <
        trainsim::sim::kernel_body_s(v100, gemm(m, 8, k, Dtype::fp32)));
}

TEST_CASE("split-K is taken where it pays and left where its partial sums cost more") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  const auto ideal_s = [&](const trainsim::sim::Kernel& g) {
    return g.flops / (*v100.peak(g.dtype) * v100.kernels.effective_compute(g.cls, g.dtype));
  };
  // One output tile and a reduction of 500,000: unsplit, one SM of 80 works; split 32 ways,
  // 32 of them do, and the partial sums are small.
  const auto deep = gemm(128, 128, 500000, Dtype::fp32);
  CHECK(trainsim::sim::kernel_body_s(v100, deep) < 5 * ideal_s(deep));
  // A weight gradient's shape (ResNet-50's 512 -> 2048 1x1 convolution at batch 8): 64 tiles on
  // 80 SMs and a short reduction. Splitting it 6 ways would fill the SMs but write and read 6 x
  // 4 MB of fp32 partial sums, 5x the GEMM's own time; the library does not split it.
  const auto wide = gemm(2048, 512, 392, Dtype::fp16);
  CHECK(trainsim::sim::kernel_body_s(v100, wide) < 1.5 * ideal_s(wide));
}

TEST_CASE("a GEMM marked whole_k runs each output tile's reduction in one thread block") {
  // cuDNN's LSTM weight gradient of hidden 256 (1024 x 256 outputs: 16 tiles of 128 x 128 on
  // V100's 80 SMs) over N x T = 9600: split, the reduction fills the SMs; whole, it can only
  // take narrower tiles (Volta keeps 0.874 of the rate per halving of a tile), and its time
  // grows with K.
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  const auto time_s = [&](double k, bool whole) {
    auto g = gemm(1024, 256, k, Dtype::fp16);
    g.whole_k = whole;
    return trainsim::sim::kernel_body_s(v100, g);
  };
  CHECK(time_s(9600, true) > 1.2 * time_s(9600, false));
  // Whole: twice the reduction, about twice the time.
  CHECK(time_s(9600, true) / time_s(4800, true) == Approx(2).epsilon(0.1));
  // A reduction too short to split prices the same either way.
  CHECK(time_s(64, true) == Approx(time_s(64, false)));
}

// cuBLAS 7.5-8 (Maxwell, Pascal) has no SGEMM kernel for an operand narrower than 32: DeepBench's
// N = 8 and N = 16 GEMMs take one time there, longer than N = 32 (the kernels profile's
// gemm_tile.narrow_operand); cuBLAS 10 (Volta) runs N = 16 in less time than N = 32.
TEST_CASE("narrow library GEMMs run on the profile's fallback tile where it gives one") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto p100 = lib.accelerator("p100-sxm2-16gb", "test");
  REQUIRE(p100.kernels.narrow_operand_below == 32);
  REQUIRE(p100.kernels.narrow_operand_tile == 64);
  const double m = 4096, k = 4096;
  const auto time_s = [&](const trainsim::sim::AcceleratorSpec& a, double n, KernelClass cls) {
    return trainsim::sim::kernel_body_s(a, gemm(m, n, k, Dtype::fp32, cls));
  };
  // N = 8 and 16 on one 64-wide tile: the same time, more than N = 32's.
  CHECK(time_s(p100, 8, KernelClass::gemm) == Approx(time_s(p100, 16, KernelClass::gemm)));
  CHECK(time_s(p100, 16, KernelClass::gemm) > time_s(p100, 32, KernelClass::gemm));
  // The same for M: the rule is the operand's, not the layout's.
  CHECK(trainsim::sim::kernel_body_s(p100, gemm(16, m, k, Dtype::fp32)) ==
        Approx(time_s(p100, 16, KernelClass::gemm)));
  // cuDNN's convolutions have kernels of their own: narrow operands keep narrow tiles.
  CHECK(time_s(p100, 16, KernelClass::conv) < time_s(p100, 32, KernelClass::conv));
  // Without the profile's fallback the narrow GEMM gets its narrow tile back.
  auto without = p100;
  without.kernels.narrow_operand_below = 0;
  CHECK(time_s(without, 16, KernelClass::gemm) < time_s(p100, 16, KernelClass::gemm) / 2);
  // Volta's library has the narrow kernels.
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  REQUIRE(v100.kernels.narrow_operand_below == 0);
  CHECK(time_s(v100, 16, KernelClass::gemm) < time_s(v100, 32, KernelClass::gemm));
}

TEST_CASE("a convolution's narrower tiles pay the profile's convolution share per halving") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto p100 = lib.accelerator("p100-sxm2-16gb", "test");
  const double gemm_share = p100.kernels.half_tile_throughput;
  const double conv_share = p100.kernels.conv_half_tile_throughput;
  // cuDNN's implicit-GEMM tiles keep more of their rate than cuBLAS's SGEMM tiles.
  REQUIRE(conv_share > gemm_share);
  // 32 output channels (C192 28x28 K32 5x5's forward, N16): the 128 x 32 tile is two halvings
  // below the main one, and the reduction long enough that only the tile's rate differs.
  const double m = 16 * 28 * 28, k = 192 * 25;
  auto conv = gemm(m, 32, k, Dtype::fp32, KernelClass::conv);
  auto wide = gemm(m, 128, k, Dtype::fp32, KernelClass::conv);
  const double per_flop = trainsim::sim::kernel_body_s(p100, conv) / conv.flops;
  const double wide_per_flop = trainsim::sim::kernel_body_s(p100, wide) / wide.flops;
  CHECK(per_flop / wide_per_flop == Approx(1 / (conv_share * conv_share)).epsilon(0.02));
  // A GEMM of that shape pays the GEMMs' share.
  const auto g = gemm(m, 32, k, Dtype::fp32);
  const auto g_wide = gemm(m, 128, k, Dtype::fp32);
  CHECK((trainsim::sim::kernel_body_s(p100, g) / g.flops) /
            (trainsim::sim::kernel_body_s(p100, g_wide) / g_wide.flops) ==
        Approx(1 / (gemm_share * gemm_share)).epsilon(0.02));
  // Without the convolution share, a convolution pays the GEMMs'.
  auto plain = p100;
  plain.kernels.conv_half_tile_throughput = 0;
  CHECK((trainsim::sim::kernel_body_s(plain, conv) / conv.flops) /
            (trainsim::sim::kernel_body_s(plain, wide) / wide.flops) ==
        Approx(1 / (gemm_share * gemm_share)).epsilon(0.02));
}

TEST_CASE("Hopper's convolution tiles on tensor cores are at least 64 on GEMM_M") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto h200 = lib.accelerator("h200", "test");
  REQUIRE(h200.kernels.conv_matrix_unit_min_tile_m == 64);
  // A weight gradient's GEMM_M is its filters: 16 or 32 of them take a 64-row tile, the time of
  // 64 filters (wgmma computes 64 rows per warpgroup), where the tiles of 8 rows the MMA of
  // earlier architectures allows had priced them by the filter. Its reduction (every output
  // position) is split until the device is full either way.
  const double n = 32 * 25, k = 1 << 20;
  const auto wgrad = [&](double filters, Dtype dtype, KernelClass cls) {
    auto g = gemm(filters, n, k, dtype, cls);
    g.weight_gradient = cls == KernelClass::conv;
    return g;
  };
  const auto time_of = [&](const trainsim::sim::AcceleratorSpec& a, double filters,
                           Dtype dtype = Dtype::bf16, KernelClass cls = KernelClass::conv) {
    return trainsim::sim::kernel_body_s(a, wgrad(filters, dtype, cls));
  };
  // (Their split-K partial sums, a filter gradient's size, are the only difference: 2%.)
  CHECK(time_of(h200, 16) == Approx(time_of(h200, 64)).epsilon(0.03));
  CHECK(time_of(h200, 32) == Approx(time_of(h200, 64)).epsilon(0.03));
  auto free_m = h200;
  free_m.kernels.conv_matrix_unit_min_tile_m = 0;
  CHECK(time_of(free_m, 16) < 0.6 * time_of(free_m, 64));
  // SIMT math (fp32) and GEMMs keep their narrower tiles.
  CHECK(time_of(h200, 16, Dtype::fp32) < 0.6 * time_of(h200, 64, Dtype::fp32));
  CHECK(time_of(h200, 16, Dtype::bf16, KernelClass::gemm) <
        0.6 * time_of(h200, 64, Dtype::bf16, KernelClass::gemm));
}
