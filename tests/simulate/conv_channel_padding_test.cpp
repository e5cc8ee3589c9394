// Tensor-core convolutions load channels in 16-byte vectors, so a channel count that is not a
// multiple of 8 (fp16, bf16) or 4 (tf32) is padded with zeros and priced as the padded
// convolution; where the library has no few-channel kernels (cuDNN 7: Volta, Turing), the
// channels that share a GEMM dimension with the filter's taps (C forward and in the weight
// gradient's columns, K for the data gradient) pad further, to the tile's 64-byte depth (32
// fp16). Few-channel kernels are forward ones (CUTLASS's kFewChannels and kFixedChannels
// iterators), so every library's weight gradient pads its input channels to that depth. SIMT
// math (fp32, Pascal's fp16) computes the real channels only.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string_view>

#include "cli/profiles_source.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/conv_kernels.hpp"

using trainsim::models::KernelSpec;
using trainsim::sim::Dtype;

namespace {

// The kernel `what` of a 7x7, stride-1 convolution from `channels` to 256 channels on 56x56
// (compute-bound on every device here, so the padded math shows in the time).
KernelSpec conv_kernel(std::int64_t channels, std::string_view what) {
  return trainsim::test::conv_kernel({channels, 56, 56}, trainsim::models::conv_spec(256, 7, 1, 3),
                                     what);
}

}  // namespace

TEST_CASE(
    "tensor-core convolutions pay for channels padded to vectors, and on cuDNN 7 to the tile "
    "depth") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto body_s = [&](const char* accelerator, std::int64_t channels, std::string_view what,
                          Dtype dtype) {
    return trainsim::sim::kernel_body_s(
        lib.accelerator(accelerator, "test"),
        trainsim::models::instantiate(conv_kernel(channels, what), 32, dtype));
  };
  for (const char* what : {"conv fwd", "conv dgrad", "conv wgrad"}) {
    INFO(what);
    // The kernel's FLOPs stay the real work (what MFU counts); only its time pads.
    CHECK(conv_kernel(3, what).flops * 8 == Approx(conv_kernel(8, what).flops * 3));
    // The input channels sit beside the taps forward (the reduction) and in the weight gradient
    // (its output columns); the data gradient's input channels are its output columns alone.
    const bool per_tap = what != std::string_view("conv dgrad");
    // V100 fp16 (tensor cores): 3 channels cost what 8 do; beside the taps, what 32 do.
    CHECK(body_s("v100-sxm2-16gb", 3, what, Dtype::fp16) ==
          Approx(body_s("v100-sxm2-16gb", per_tap ? 32 : 8, what, Dtype::fp16)).epsilon(0.05));
    // A100 TF32 (few-channel kernels): 4 fp32 elements make a 16-byte vector, so 3 channels
    // cost what 4 do forward and in the data gradient; the weight gradient, which has no
    // few-channel kernels, pads them to the tile's depth (16 TF32 channels).
    const bool wgrad = what == std::string_view("conv wgrad");
    CHECK(body_s("a100-sxm4-40gb", 3, what, Dtype::tf32) ==
          Approx(body_s("a100-sxm4-40gb", wgrad ? 16 : 4, what, Dtype::tf32)).epsilon(0.05));
    if (per_tap) {
      // 8 channels fill a vector but not the tile's depth.
      CHECK(body_s("v100-sxm2-16gb", 8, what, Dtype::fp16) ==
            Approx(body_s("v100-sxm2-16gb", 32, what, Dtype::fp16)).epsilon(0.05));
    }
    // fp32 on V100 and fp16 on P100 (no matrix units) compute the 3 real channels. (The data
    // gradient's channels are its output columns, where narrow tiles lose throughput anyway.)
    if (what != std::string_view("conv dgrad")) {
      if (!wgrad) {
        CHECK(body_s("a100-sxm4-40gb", 3, what, Dtype::tf32) <
              0.8 * body_s("a100-sxm4-40gb", 8, what, Dtype::tf32));
      }
      CHECK(body_s("v100-sxm2-16gb", 3, what, Dtype::fp32) <
            0.6 * body_s("v100-sxm2-16gb", 8, what, Dtype::fp32));
      CHECK(body_s("p100-sxm2-16gb", 3, what, Dtype::fp16) <
            0.6 * body_s("p100-sxm2-16gb", 8, what, Dtype::fp16));
    }
    // Aligned channel counts are untouched: twice the channels cost twice the time, within
    // tiling.
    const std::int64_t aligned = per_tap ? 32 : 8;
    CHECK(body_s("v100-sxm2-16gb", 2 * aligned, what, Dtype::fp16) >
          1.5 * body_s("v100-sxm2-16gb", aligned, what, Dtype::fp16));
  }
}

TEST_CASE(
    "on cuDNN 7 a first layer's fp16 weight gradient pays the tap padding as its forward does") {
  // DeepBench's V100 (cuDNN 7.6) times ResNet's first layer, C3 224x224 7x7/2, at 2.5x its fp32
  // time in fp16 for the weight gradient and 1.5x forward; its C1 161x700 5x20/2 layer 7.1-8.7x
  // and 7.5-8.3x (tests/reference_data/deepbench_train_conv.csv). A weight gradient that padded
  // its 3 channels to one 8-wide vector only came out at 0.64x fp32's.
  const auto lib = trainsim::cli::load_profile_library({});
  const auto wgrad_s = [&](const char* accelerator, Dtype dtype) {
    const KernelSpec k = trainsim::test::conv_kernel(
        {3, 224, 224}, trainsim::models::conv_spec(64, 7, 2), "conv wgrad");
    return trainsim::sim::kernel_body_s(lib.accelerator(accelerator, "test"),
                                        trainsim::models::instantiate(k, 16, dtype));
  };
  CHECK(wgrad_s("v100-sxm2-16gb", Dtype::fp16) > 1.5 * wgrad_s("v100-sxm2-16gb", Dtype::fp32));
  CHECK(wgrad_s("t4", Dtype::fp16) > 1.2 * wgrad_s("t4", Dtype::fp32));
  // Libraries with few-channel kernels (Ampere's cuDNN 8) have them forward only: the weight
  // gradient pads to the tile's 64 bytes there too, 32 fp16 channels or 16 TF32 ones, so fp16
  // at twice TF32's rate takes no more than its TF32 time.
  CHECK(wgrad_s("a100-sxm4-40gb", Dtype::fp16) < wgrad_s("a100-sxm4-40gb", Dtype::tf32));
}
