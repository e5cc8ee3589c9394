// cuDNN 9 on Hopper hands pointwise (1x1, stride 1, unpadded) convolutions on the tensor cores to
// cuBLASLt: the forward pass and data gradient in either layout, and the weight gradient over
// channels-last tensors, where dW = dY^T X is one GEMM over every position of the batch. The
// H200's bf16 (channels-last) ResNet-50 step runs 26 of its 53 weight gradients in cuDNN's wgrad
// kernels and launches 74 cuBLAS GEMMs, 19 of them split-K ones that only a weight gradient's long
// reduction calls for (tests/reference_data/h200_profile_kernels.csv). Where the kernels profile
// says so (pointwise_conv_gemm), the kernel model prices those passes as the GEMMs they are
// (sim/hw/kernel_model.cpp, runs_as_gemm).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cli/profiles_source.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/conv_kernels.hpp"

using trainsim::sim::Dtype;
using trainsim::sim::KernelClass;

namespace {

trainsim::sim::Kernel conv(const char* what, const trainsim::models::Conv2d& spec,
                           std::vector<std::int64_t> input, Dtype dtype) {
  return trainsim::test::conv_instance(std::move(input), spec, what, 16, dtype);
}

// The same kernel, priced as a GEMM.
trainsim::sim::Kernel as_gemm(trainsim::sim::Kernel k) {
  k.cls = KernelClass::gemm;
  return k;
}

}  // namespace

TEST_CASE("Hopper prices pointwise convolutions' forward and data gradient as GEMMs") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& h200 = lib.accelerator("h200", "test");
  REQUIRE(h200.kernels.pointwise_conv_gemm);
  auto without = h200;
  without.kernels.pointwise_conv_gemm = false;
  // ResNet-50's last-stage expansion, 512 -> 2048 channels over 7x7.
  const auto pointwise = trainsim::models::conv_spec(2048, 1, 1, 0);
  for (const Dtype dtype : {Dtype::bf16, Dtype::tf32}) {
    for (const char* what : {"conv fwd", "conv dgrad"}) {
      const auto k = conv(what, pointwise, {512, 7, 7}, dtype);
      REQUIRE(k.pointwise_gemm);
      CHECK(trainsim::sim::kernel_time_s(h200, k) ==
            Approx(trainsim::sim::kernel_time_s(h200, as_gemm(k))).epsilon(1e-12));
      // The GEMM's fill and drain is part of it; the convolution's kernels had none.
      const double latency_s = h200.kernels.gemm_latency_s[static_cast<std::size_t>(dtype)];
      REQUIRE(latency_s > 0);
      CHECK(trainsim::sim::kernel_time_s(h200, k) !=
            Approx(trainsim::sim::kernel_time_s(without, k)).epsilon(1e-6));
    }
    // Its weight gradient over NCHW is a sum of per-sample GEMMs, which cuDNN's own wgrad kernels
    // run: a convolution still.
    auto wgrad = conv("conv wgrad", pointwise, {512, 7, 7}, dtype);
    wgrad.channels_first = true;
    CHECK(trainsim::sim::kernel_time_s(h200, wgrad) ==
          Approx(trainsim::sim::kernel_time_s(without, wgrad)).epsilon(1e-12));
    // Over channels-last tensors it is one GEMM of two MN-major operands, which cuDNN and
    // PyTorch's autotuner take where it is the faster.
    wgrad.channels_first = false;
    REQUIRE(wgrad.operands == trainsim::sim::GemmOperands::both_mn_major);
    const auto gemm = as_gemm(wgrad);
    const double as_gemm_s = trainsim::sim::kernel_time_s(h200, gemm);
    const double as_conv_s = trainsim::sim::kernel_time_s(without, wgrad);
    CHECK(trainsim::sim::kernel_time_s(h200, wgrad) ==
          Approx(std::min(as_gemm_s, as_conv_s)).epsilon(1e-12));
    // Here, 512 -> 2048 channels over 16 x 7 x 7 positions, the GEMM is the faster.
    CHECK(as_gemm_s < as_conv_s);
  }
  // fp32 runs SIMT convolution kernels, not the tensor cores' GEMMs.
  const auto fp32 = conv("conv fwd", pointwise, {512, 7, 7}, Dtype::fp32);
  CHECK(trainsim::sim::kernel_time_s(h200, fp32) ==
        Approx(trainsim::sim::kernel_time_s(without, fp32)).epsilon(1e-12));
  // Strided or padded 1x1 convolutions, and 3x3 ones, are no plain GEMM.
  for (const auto& spec :
       {trainsim::models::conv_spec(2048, 1, 2, 0), trainsim::models::conv_spec(2048, 1, 1, 1),
        trainsim::models::conv_spec(512, 3, 1, 1)}) {
    const auto k = conv("conv fwd", spec, {512, 14, 14}, Dtype::bf16);
    CHECK_FALSE(k.pointwise_gemm);
    CHECK(trainsim::sim::kernel_time_s(h200, k) ==
          Approx(trainsim::sim::kernel_time_s(without, k)).epsilon(1e-12));
  }
}

TEST_CASE("profiles without pointwise_conv_gemm keep pointwise convolutions on conv kernels") {
  // cuDNN 7 (Volta, Turing) runs them on its implicit-GEMM convolution kernels: DeepBench's V100
  // and T4 1x1 rows are priced at the convolutions' efficiency.
  const auto lib = trainsim::cli::load_profile_library({});
  for (const char* gpu : {"v100-sxm2-16gb", "t4", "p100-sxm2-16gb"}) {
    const auto& a = lib.accelerator(gpu, "test");
    CHECK_FALSE(a.kernels.pointwise_conv_gemm);
    // A compute-bound one (1024 -> 2048 channels over 14x14), where the two efficiencies differ.
    const auto k = conv("conv fwd", trainsim::models::conv_spec(2048, 1, 1, 0), {1024, 14, 14},
                        a.peak(Dtype::fp16) ? Dtype::fp16 : Dtype::fp32);
    CHECK(trainsim::sim::kernel_time_s(a, k) !=
          Approx(trainsim::sim::kernel_time_s(a, as_gemm(k))).epsilon(1e-6));
  }
}

TEST_CASE("over NCHW a pointwise convolution runs as one GEMM per sample") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto& h200 = lib.accelerator("h200", "test");
  const auto pointwise = trainsim::models::conv_spec(2048, 1, 1, 0);
  for (const char* what : {"conv fwd", "conv dgrad"}) {
    auto k = conv(what, pointwise, {512, 7, 7}, Dtype::tf32);
    REQUIRE(k.samples == 16);
    k.channels_first = true;
    // The samples' planes are C x HW apart: a batch of 16 GEMMs of 49 rows each, not one of 784.
    auto per_sample = as_gemm(k);
    per_sample.gemm.m /= 16;
    per_sample.gemm.batch *= 16;
    per_sample.channels_first = false;
    CHECK(trainsim::sim::kernel_time_s(h200, k) ==
          Approx(trainsim::sim::kernel_time_s(h200, per_sample)).epsilon(1e-12));
    // A 7x7 map's 49 rows waste more of their row tiles than 784 rows in one GEMM do.
    auto whole = k;
    whole.channels_first = false;
    CHECK(trainsim::sim::kernel_time_s(h200, k) > trainsim::sim::kernel_time_s(h200, whole));
  }
  // Channels-last, the positions of every sample are the rows of one GEMM.
  const auto nhwc = conv("conv fwd", pointwise, {512, 7, 7}, Dtype::bf16);
  CHECK(trainsim::sim::kernel_time_s(h200, nhwc) ==
        Approx(trainsim::sim::kernel_time_s(h200, as_gemm(nhwc))).epsilon(1e-12));
}
