// Nonfused Winograd F(4x4,3x3) and F(5x5,5x5) (cuDNN's *_WINOGRAD_NONFUSED): where the kernels
// profile offers it, a 3x3 (5x5) stride-1 convolution on CUDA-core math may run as a data
// transform, 36 (81) batched GEMMs on 4x (7.7x) fewer multiplications at the GEMM efficiency, and
// an output transform, whichever of the algorithms finishes first.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/profiles_source.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/conv_kernels.hpp"

using trainsim::models::KernelSpec;
using trainsim::sim::AcceleratorSpec;
using trainsim::sim::Dtype;
using trainsim::sim::KernelClass;

namespace {

// A 3x3 same-padded convolution with `channels` in and out over `side` x `side` inputs, as the
// kernel `what` at batch 64.
trainsim::sim::Kernel conv3x3(std::string_view what, std::int64_t channels, std::int64_t side,
                              Dtype dtype) {
  const KernelSpec k = trainsim::test::conv_kernel(
      {channels, side, side}, trainsim::models::conv_spec(channels, 3, 1, 1), what);
  return trainsim::models::instantiate(k, 64, dtype);
}

AcceleratorSpec without_nonfused(AcceleratorSpec a) {
  a.kernels.winograd_nonfused_3x3 = false;
  a.kernels.winograd_nonfused_5x5 = false;
  return a;
}

}  // namespace

TEST_CASE("nonfused Winograd prices transforms plus batched GEMMs on a quarter of the math") {
  const auto lib = trainsim::cli::load_profile_library({});
  const AcceleratorSpec& v100 = lib.accelerator("v100-sxm2-16gb", "test");
  REQUIRE(v100.kernels.winograd_nonfused_3x3);
  for (const char* what : {"conv fwd", "conv dgrad", "conv wgrad"}) {
    INFO(what);
    // 256 -> 256 channels on 28x28: compute-bound, 7x7 whole 4x4 tiles per sample.
    const auto k = conv3x3(what, 256, 28, Dtype::fp32);
    REQUIRE(k.winograd_filter == 3);
    const double with_s = trainsim::sim::kernel_body_s(v100, k);
    const double without_s = trainsim::sim::kernel_body_s(without_nonfused(v100), k);
    CHECK(with_s < 0.8 * without_s);  // the algorithm cuDNN's autotuner keeps
    // Transforms: the input read and its 2.25x tiles written, the output's tiles read and the
    // output written (3.25x the convolution's traffic), and three more kernels.
    const double bw = v100.memory_bw_bytes_per_s *
                      v100.kernels.memory[static_cast<std::size_t>(KernelClass::elementwise)];
    const double transforms_s = 3.25 * k.bytes / bw + 3 * v100.kernel_launch_overhead_s;
    // The GEMMs at the GEMM efficiency, before tiles and waves cost their share.
    const double gemm_s =
        k.flops / 4 /
        (*v100.peak(Dtype::fp32) * trainsim::sim::sustained_clock_fraction(v100, Dtype::fp32) *
         v100.kernels.effective_compute(KernelClass::gemm, Dtype::fp32));
    CHECK(with_s >= transforms_s + gemm_s);
    CHECK(with_s < transforms_s + gemm_s / 0.85);
  }
}

TEST_CASE("nonfused Winograd F(5x5,5x5) takes 5x5 filters where the profile offers it") {
  const auto lib = trainsim::cli::load_profile_library({});
  // GoogLeNet's 192 -> 32 5x5 convolution on 28x28 (a DeepBench row), at batch 16.
  const KernelSpec spec = trainsim::test::conv_kernel(
      {192, 28, 28}, trainsim::models::conv_spec(32, 5, 1, 2), "conv fwd");
  REQUIRE(spec.winograd_filter == 5);
  const auto k = trainsim::models::instantiate(spec, 16, Dtype::fp32);
  // Volta offers it (cuDNN 7.6 chose WINOGRAD_NONFUSED or FFT_TILING for DeepBench's 5x5
  // stride-1 rows); 25 x 25 / 81 = 7.7x fewer multiplications at the GEMM efficiency, after and
  // before transforms over 81/25 = 3.24x expanded tiles.
  const AcceleratorSpec& v100 = lib.accelerator("v100-sxm2-16gb", "test");
  REQUIRE(v100.kernels.winograd_nonfused_5x5);
  const double bw = v100.memory_bw_bytes_per_s *
                    v100.kernels.memory[static_cast<std::size_t>(KernelClass::elementwise)];
  const double transforms_s = (1 + 81.0 / 25) * k.bytes / bw + 3 * v100.kernel_launch_overhead_s;
  const double gemm_s =
      k.flops / (625.0 / 81) /
      (*v100.peak(Dtype::fp32) * trainsim::sim::sustained_clock_fraction(v100, Dtype::fp32) *
       v100.kernels.effective_compute(KernelClass::gemm, Dtype::fp32));
  const double with_s = trainsim::sim::kernel_body_s(v100, k);
  CHECK(with_s >= transforms_s + gemm_s);
  CHECK(with_s < 0.7 * trainsim::sim::kernel_body_s(without_nonfused(v100), k));
  // Pascal's profile offers 3x3 only (cuDNN 6 took the implicit GEMM for every 5x5 row of
  // DeepBench's P100 and GTX 1080 Ti): the implicit GEMM's price.
  const AcceleratorSpec& p100 = lib.accelerator("p100-sxm2-16gb", "test");
  CHECK(p100.kernels.winograd_nonfused_3x3);
  CHECK_FALSE(p100.kernels.winograd_nonfused_5x5);
  CHECK(trainsim::sim::kernel_body_s(p100, k) ==
        trainsim::sim::kernel_body_s(without_nonfused(p100), k));
}

TEST_CASE("nonfused Winograd tiles each sample's map in whole 4x4 tiles") {
  const auto lib = trainsim::cli::load_profile_library({});
  const AcceleratorSpec& v100 = lib.accelerator("v100-sxm2-16gb", "test");
  // Where the transforms' traffic is a small part, a 7x7 map costs its 2x2 tiles of 4x4: about as
  // much as an 8x8 one, not 49/64 of it.
  const AcceleratorSpec no_fused = [&] {
    AcceleratorSpec a = v100;
    a.kernels.winograd_gain = {};
    return a;
  }();
  const double seven_s =
      trainsim::sim::kernel_body_s(no_fused, conv3x3("conv fwd", 512, 7, Dtype::fp32));
  const double eight_s =
      trainsim::sim::kernel_body_s(no_fused, conv3x3("conv fwd", 512, 8, Dtype::fp32));
  CHECK(seven_s > 0.9 * eight_s);
  CHECK(seven_s < eight_s);
}

TEST_CASE("nonfused Winograd is not offered on matrix units or without the profile's flag") {
  const auto lib = trainsim::cli::load_profile_library({});
  const AcceleratorSpec& v100 = lib.accelerator("v100-sxm2-16gb", "test");
  // fp16 runs on Volta's tensor cores: the implicit GEMM's price, flag or not.
  const auto half = conv3x3("conv fwd", 256, 28, Dtype::fp16);
  CHECK(trainsim::sim::kernel_body_s(v100, half) ==
        trainsim::sim::kernel_body_s(without_nonfused(v100), half));
  // Ampere's profile does not offer it: its fp32 convolutions are priced as before.
  const AcceleratorSpec& a100 = lib.accelerator("a100-sxm4-40gb", "test");
  CHECK_FALSE(a100.kernels.winograd_nonfused_3x3);
  // 1x1 and strided convolutions are not eligible.
  const KernelSpec pointwise = trainsim::test::conv_kernel(
      {256, 28, 28}, trainsim::models::conv_spec(256, 1, 1, 0), "conv fwd");
  CHECK(pointwise.winograd_filter == 0);
  const KernelSpec strided = trainsim::test::conv_kernel(
      {256, 28, 28}, trainsim::models::conv_spec(256, 3, 2, 1), "conv fwd");
  CHECK(strided.winograd_filter == 0);
}

TEST_CASE("Hopper's cuDNN offers nonfused Winograd to weight gradients alone") {
  // cuDNN 9.19 on the H200 (tests/reference_data/h200_kernels_conv.csv): the fp32 3x3 weight
  // gradient of C256 28x28 K512 N16 takes 0.226 ms, 131 TFLOP/s of direct-convolution FLOPs
  // against a 67 TFLOP/s peak; the forward pass of the same layer 0.911 ms.
  const auto lib = trainsim::cli::load_profile_library({});
  const AcceleratorSpec& h200 = lib.accelerator("h200", "test");
  REQUIRE(h200.kernels.winograd_nonfused_3x3);
  REQUIRE(h200.kernels.winograd_nonfused_weight_gradient_only);
  const AcceleratorSpec direct = without_nonfused(h200);
  const auto wgrad = conv3x3("conv wgrad", 256, 28, Dtype::fp32);
  CHECK(trainsim::sim::kernel_time_s(h200, wgrad) <
        0.8 * trainsim::sim::kernel_time_s(direct, wgrad));
  for (const char* what : {"conv fwd", "conv dgrad"}) {
    INFO(what);
    const auto k = conv3x3(what, 256, 28, Dtype::fp32);
    CHECK(trainsim::sim::kernel_time_s(h200, k) == trainsim::sim::kernel_time_s(direct, k));
  }
  // Offered to every pass, the forward pass would take Winograd too.
  AcceleratorSpec every_pass = h200;
  every_pass.kernels.winograd_nonfused_weight_gradient_only = false;
  const auto fwd = conv3x3("conv fwd", 256, 28, Dtype::fp32);
  CHECK(trainsim::sim::kernel_time_s(every_pass, fwd) < trainsim::sim::kernel_time_s(h200, fwd));
}
