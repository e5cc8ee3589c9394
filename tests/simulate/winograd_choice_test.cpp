// A 3x3 stride-1 convolution runs Winograd's algorithm only where it finishes first: its batched
// GEMMs reduce over the channels alone, so a first layer's few channels keep the implicit GEMM
// (as cuDNN's autotuner chose for DeepBench's 3x3 rows of 1-32 input channels).
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

// The forward kernel of a 3x3 convolution from `channels` to 64 channels on 112x112.
KernelSpec conv_fwd(std::int64_t channels, std::int64_t stride = 1) {
  return trainsim::test::conv_kernel({channels, 112, 112},
                                     trainsim::models::conv_spec(64, 3, stride, 1), "conv fwd");
}

}  // namespace

TEST_CASE("Winograd takes a 3x3 convolution only where it beats the implicit GEMM") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto p100 = lib.accelerator("p100-sxm2-16gb", "test");
  const auto time_s = [&](const KernelSpec& k) {
    return trainsim::sim::kernel_body_s(p100, trainsim::models::instantiate(k, 32, Dtype::fp32));
  };
  // The same work on the implicit GEMM: an ineligible copy of the kernel.
  const auto direct_s = [&](KernelSpec k) {
    k.winograd_filter = 0;
    return time_s(k);
  };
  const KernelSpec wide = conv_fwd(256);
  const KernelSpec narrow = conv_fwd(3);
  REQUIRE(wide.winograd_filter == 3);
  REQUIRE(narrow.winograd_filter == 3);
  CHECK(conv_fwd(256, 2).winograd_filter == 0);
  // 256 channels: Winograd's fewer multiplications win (Pascal's calibrated gain is near 2).
  CHECK(time_s(wide) < 0.7 * direct_s(wide));
  // 3 channels: a 3-deep reduction per transformed tile is slower than the 27-deep implicit GEMM,
  // so the implicit GEMM's time stands.
  CHECK(time_s(narrow) == Approx(direct_s(narrow)).epsilon(1e-12));
  // Never slower than the implicit GEMM.
  for (const std::int64_t c : {1, 8, 16, 32, 64, 128, 512})
    CHECK(time_s(conv_fwd(c)) <= direct_s(conv_fwd(c)));
}

TEST_CASE("below the profile's channel floor no pass of a 3x3 convolution takes Winograd") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto p100 = lib.accelerator("p100-sxm2-16gb", "test");
  REQUIRE(p100.kernels.winograd_min_channels == 32);
  auto no_floor = p100;
  no_floor.kernels.winograd_min_channels = 0;
  const auto time_s = [&](const trainsim::sim::AcceleratorSpec& a, std::int64_t channels,
                          std::string_view what) {
    const KernelSpec k = trainsim::test::conv_kernel(
        {channels, 224, 224}, trainsim::models::conv_spec(64, 3, 1, 1), what);
    return trainsim::sim::kernel_body_s(a, trainsim::models::instantiate(k, 16, Dtype::fp32));
  };
  // Below the floor every pass keeps the implicit GEMM, which Winograd's batched GEMMs (whose
  // narrow channel side costs no tile throughput) would beat: a first layer's (C3 224x224 K64)
  // data gradient by over 1.4x and a 16-channel layer's weight gradient by over 1.2x (its
  // per-element GEMMs of 64 x 16 run on SIMT backward-filter tiles 128 wide on one side, as the
  // implicit GEMM does: sim/hw/kernel_model.cpp, fastest_tiling_s). (The first layer's
  // weight gradient gains little from Winograd once both read x and dy at the weight gradients'
  // share of the bandwidth, conv_weight_gradient_bandwidth.) DeepBench's P100 takes 2.7x the
  // forward pass's time in that weight gradient (1.73 against 0.65 ms at N16).
  for (const std::int64_t c : {3, 16}) {
    for (const char* what : {"conv fwd", "conv dgrad", "conv wgrad"})
      CHECK(time_s(p100, c, what) >= time_s(no_floor, c, what));
  }
  CHECK(time_s(p100, 3, "conv dgrad") > 1.4 * time_s(no_floor, 3, "conv dgrad"));
  CHECK(time_s(p100, 16, "conv wgrad") > 1.2 * time_s(no_floor, 16, "conv wgrad"));
  CHECK(time_s(p100, 3, "conv wgrad") > time_s(p100, 3, "conv fwd"));
  // From the floor up, Winograd is offered as before.
  for (const char* what : {"conv fwd", "conv dgrad", "conv wgrad"})
    CHECK(time_s(p100, 64, what) == time_s(no_floor, 64, what));
  // Hopper's cuDNN 9 has no floor: the H200 runs a first layer's fp32 weight gradient at
  // Winograd's rate (C3 224x224 K64 N16: 0.223 ms, tests/reference_data/h200_kernels_conv.csv).
  CHECK(lib.accelerator("h200", "test").kernels.winograd_min_channels == 0);
}
