// First layers on Hopper: cuDNN 9 runs convolutions of fewer input channels than one 16-byte
// vector on its fp32 SIMT kernels whatever the dtype (conv_few_channel_simt in
// hw_profiles/kernels/nvidia-hopper.json), but for 16-bit weight gradients, which stay on tensor
// cores padded to the tile's depth (sim/hw/kernel_model.cpp, math_dtype and channel_padded); and
// weight gradients split their long reduction over as many slices as fill the device
// (sim/hw/kernel_model.cpp, fastest_tiling_s, deep_split).
#include <catch2/catch.hpp>

#include <string_view>

#include "cli/profiles_source.hpp"
#include "models/zoo/net_builder.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/conv_kernels.hpp"

using trainsim::sim::Dtype;
using trainsim::sim::kernel_time_s;
using trainsim::test::conv_instance;

TEST_CASE(
    "Hopper runs few-channel convolutions on fp32 SIMT kernels whatever the dtype, 16-bit weight "
    "gradients excepted") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& h200 = lib.accelerator("h200", "test");
  REQUIRE(h200.kernels.conv_few_channel_simt);
  auto tensor_cores = h200;
  tensor_cores.kernels.conv_few_channel_simt = false;
  const auto first = trainsim::models::conv_spec(64, 3, 1, 1);
  for (const char* what : {"conv fwd", "conv dgrad", "conv wgrad"}) {
    // TF32 is fp32 storage: a 3-channel layer takes exactly its fp32 time.
    const auto tf32 = conv_instance({3, 224, 224}, first, what, 16, Dtype::tf32);
    const auto fp32 = conv_instance({3, 224, 224}, first, what, 16, Dtype::fp32);
    CHECK(trainsim::sim::math_dtype(h200, tf32) == Dtype::fp32);
    CHECK(kernel_time_s(h200, tf32) == Approx(kernel_time_s(h200, fp32)).epsilon(1e-12));
    // On tensor cores it had been priced several times faster, but for the weight gradient,
    // whose channels pad to the tile's depth (16 TF32 channels) on tensor cores.
    if (what != std::string_view("conv wgrad"))
      CHECK(kernel_time_s(tensor_cores, tf32) < 0.5 * kernel_time_s(h200, tf32));
    // bf16 computes in fp32 too, but for the weight gradient (below).
    const auto bf16 = conv_instance({3, 224, 224}, first, what, 16, Dtype::bf16);
    CHECK(trainsim::sim::math_dtype(h200, bf16) ==
          (what == std::string_view("conv wgrad") ? Dtype::bf16 : Dtype::fp32));
    CHECK(trainsim::sim::math_dtype(tensor_cores, bf16) == Dtype::bf16);
  }
  // One vector of channels (4 in TF32, 8 in bf16) and more stay on the tensor cores.
  CHECK(trainsim::sim::math_dtype(
            h200, conv_instance({4, 56, 56}, first, "conv fwd", 16, Dtype::tf32)) == Dtype::tf32);
  CHECK(trainsim::sim::math_dtype(
            h200, conv_instance({7, 56, 56}, first, "conv fwd", 16, Dtype::bf16)) == Dtype::fp32);
  CHECK(trainsim::sim::math_dtype(
            h200, conv_instance({8, 56, 56}, first, "conv fwd", 16, Dtype::bf16)) == Dtype::bf16);
  // Profiles that do not say so keep the tensor cores (cuDNN 7 pads such layers: Volta, Turing).
  for (const char* gpu : {"v100-sxm2-16gb", "t4", "a100-sxm4-80gb"}) {
    const auto& a = lib.accelerator(gpu, "test");
    CHECK_FALSE(a.kernels.conv_few_channel_simt);
    CHECK(trainsim::sim::math_dtype(
              a, conv_instance({3, 224, 224}, first, "conv fwd", 16, Dtype::fp16)) == Dtype::fp16);
  }
}

TEST_CASE("Hopper's 16-bit first-layer weight gradients stay on tensor cores, padded per tap") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& h200 = lib.accelerator("h200", "test");
  const auto first = trainsim::models::conv_spec(64, 7, 2, 3);
  // ResNet-50's bf16 first layer (C3 224x224 7x7/2) at batch 64: cuDNN 9 runs its weight
  // gradient as CUTLASS's Conv2dWgrad tensor-op kernel of 64x128x32 tiles, 225.8 us a step
  // (tests/reference_data/h200_profile_kernels.csv); on the fp32 SIMT kernels it had been priced
  // at 1.07 ms.
  const auto wgrad = conv_instance({3, 224, 224}, first, "conv wgrad", 64, Dtype::bf16);
  const double measured_s = 225.8e-6;
  INFO("priced " << kernel_time_s(h200, wgrad) * 1e6 << " us");
  CHECK(kernel_time_s(h200, wgrad) > 0.7 * measured_s);
  CHECK(kernel_time_s(h200, wgrad) < 1.6 * measured_s);
  // The tile's depth is 32 bf16 channels: 3 of them cost what 32 do, 1 what 32 do, so a
  // 1-channel layer's gradient takes longer than its fp32 time and a 3-channel one's less, as
  // measured (C1 161x700 5x20/2: 0.401 ms in bf16 against 0.180 in fp32; C3 224x224 3x3/1:
  // 0.099 against 0.223; tests/reference_data/h200_kernels_conv.csv).
  const auto speech = [&](Dtype d) {
    return kernel_time_s(h200, conv_instance({1, 161, 700}, trainsim::test::speech_first_layer(),
                                             "conv wgrad", 16, d));
  };
  const auto image = [&](Dtype d) {
    return kernel_time_s(
        h200, conv_instance({3, 224, 224}, trainsim::models::conv_spec(64, 3, 1, 1), "conv wgrad",
                            16, d));
  };
  CHECK(speech(Dtype::bf16) > 1.3 * speech(Dtype::fp32));
  CHECK(image(Dtype::bf16) < 0.7 * image(Dtype::fp32));
  // Their forward passes stay on the fp32 kernels.
  const auto fwd = conv_instance({3, 224, 224}, first, "conv fwd", 64, Dtype::bf16);
  CHECK(trainsim::sim::math_dtype(h200, fwd) == Dtype::fp32);
}

TEST_CASE("weight gradients split their reduction over as many slices as fill the device") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& h200 = lib.accelerator("h200", "test");
  // A quarter of the H200 (its SMs and their FLOPs): 32 slices of the output tile fill it.
  auto quarter = h200;
  quarter.compute_units = h200.compute_units / 4;
  for (auto& peak : quarter.peak_flops_per_s)
    if (peak) *peak /= 4;
  // The fp32 speech first layer's weight gradient: a 32 x 100 filter gradient reduced over
  // 16 x 79 x 341 positions. More SMs take more slices of it, past the GEMMs' 32.
  const auto wgrad = conv_instance({1, 161, 700}, trainsim::test::speech_first_layer(),
                                   "conv wgrad", 16, Dtype::fp32);
  REQUIRE(wgrad.weight_gradient);
  CHECK(kernel_time_s(h200, wgrad) < 0.4 * kernel_time_s(quarter, wgrad));
  // Measured on the H200 (tests/reference_data/h200_kernels_conv.csv): 0.1795 ms; capped at 32
  // slices it had been priced at 0.47 ms.
  CHECK(kernel_time_s(h200, wgrad) > 0.1795e-3 * 0.7);
  CHECK(kernel_time_s(h200, wgrad) < 0.1795e-3 * 1.6);
  // A library GEMM of the same shape stops at 32 slices: the whole device gains less on it,
  // from narrower tiles alone.
  trainsim::sim::Kernel gemm = wgrad;
  gemm.cls = trainsim::sim::KernelClass::gemm;
  gemm.weight_gradient = false;
  const double wgrad_gain = kernel_time_s(quarter, wgrad) / kernel_time_s(h200, wgrad);
  const double gemm_gain = kernel_time_s(quarter, gemm) / kernel_time_s(h200, gemm);
  INFO("whole device over a quarter: weight gradient " << wgrad_gain << "x, GEMM " << gemm_gain
                                                       << "x");
  CHECK(wgrad_gain > 2 * gemm_gain);
}
