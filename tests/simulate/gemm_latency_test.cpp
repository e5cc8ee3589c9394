// Each library GEMM or convolution on matrix units takes the kernels profile's gemm_latency on
// top of its tiles' work (sim/hw/specs.hpp): Hopper's cuBLAS and cuDNN kernels fill and drain a
// TMA/wgmma pipeline whatever their size. SIMT (fp32) kernels and other classes take none.
#include <catch2/catch.hpp>

#include "cli/profiles_source.hpp"
#include "models/zoo/net_builder.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/conv_kernels.hpp"
#include "support/gemm_kernels.hpp"

using trainsim::sim::Dtype;
using trainsim::sim::KernelClass;

using trainsim::test::gemm_kernel;

TEST_CASE("Hopper's tensor-core GEMMs take their fill and drain whatever their size") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto h200 = lib.accelerator("h200", "test");
  auto none = h200;
  none.kernels.gemm_latency_s = {};
  for (const Dtype d : {Dtype::tf32, Dtype::bf16}) {
    const double latency_s = h200.kernels.gemm_latency_s[static_cast<std::size_t>(d)];
    REQUIRE(latency_s > 0);
    for (const double size : {512.0, 8192.0}) {
      const auto g = gemm_kernel(size, size, size, d);
      CHECK(trainsim::sim::kernel_time_s(h200, g) ==
            Approx(trainsim::sim::kernel_time_s(none, g) + latency_s).epsilon(1e-12));
    }
  }
  // fp32 runs on the CUDA cores: no latency.
  const auto fp32 = gemm_kernel(512, 16, 512, Dtype::fp32);
  CHECK(trainsim::sim::kernel_time_s(h200, fp32) == trainsim::sim::kernel_time_s(none, fp32));
  // bf16 M512 N16 K512 (h200_kernels_gemm.csv): 3.23 us measured as a CUDA-graph replay,
  // 1.45 us without the latency.
  CHECK(1e6 * trainsim::sim::kernel_time_s(h200, gemm_kernel(512, 16, 512, Dtype::bf16)) ==
        Approx(3.23).epsilon(0.15));
}

TEST_CASE("Hopper's tensor-core convolutions take a fill and drain of their own") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto h200 = lib.accelerator("h200", "test");
  auto none = h200;
  none.kernels.gemm_latency_s = {};
  none.kernels.conv_latency_s = {};
  // TF32 convolutions take the GEMMs' latency; bf16 ones cuDNN's own (conv_latency), longer.
  const double bf16_s = h200.kernels.conv_latency_s[static_cast<std::size_t>(Dtype::bf16)];
  CHECK(bf16_s > h200.kernels.gemm_latency_s[static_cast<std::size_t>(Dtype::bf16)]);
  CHECK(h200.kernels.conv_latency_s[static_cast<std::size_t>(Dtype::tf32)] == 0);
  const auto layer = trainsim::models::conv_spec(128, 3, 1, 1);
  for (const Dtype d : {Dtype::tf32, Dtype::bf16}) {
    const double latency_s =
        d == Dtype::bf16 ? bf16_s : h200.kernels.gemm_latency_s[static_cast<std::size_t>(d)];
    for (const char* what : {"conv fwd", "conv dgrad", "conv wgrad"}) {
      const auto k = trainsim::test::conv_instance({64, 56, 56}, layer, what, 16, d);
      CHECK(trainsim::sim::kernel_time_s(h200, k) ==
            Approx(trainsim::sim::kernel_time_s(none, k) + latency_s).epsilon(1e-12));
    }
  }
  // fp32 convolutions run SIMT kernels, and so do first layers in every dtype
  // (conv_few_channel_simt): no latency.
  for (const Dtype d : {Dtype::fp32, Dtype::bf16}) {
    const auto k = trainsim::test::conv_instance({3, 224, 224}, layer, "conv fwd", 16, d);
    CHECK(trainsim::sim::kernel_time_s(h200, k) == trainsim::sim::kernel_time_s(none, k));
  }
  // A pointwise convolution runs as a cuBLAS GEMM (pointwise_conv_gemm): the GEMMs' latency.
  const auto pointwise = trainsim::models::conv_spec(512, 1, 1, 0);
  const auto gemm =
      trainsim::test::conv_instance({512, 7, 7}, pointwise, "conv fwd", 8, Dtype::bf16);
  auto gemm_only = h200;
  gemm_only.kernels.conv_latency_s = {};
  CHECK(trainsim::sim::kernel_time_s(h200, gemm) == trainsim::sim::kernel_time_s(gemm_only, gemm));
  // The H200's bf16 C256 14x14 K1024 1x1/2 N8 forward, a cuDNN convolution, and C512 7x7 K512
  // 1x1/1 N8, a cuBLAS GEMM, do the same multiply-adds over the same 392 output positions: 5.22
  // and 3.56 us (h200_kernels_conv.csv), 1.47x. Priced with the GEMMs' latency, 1.0x; within 15%.
  const auto strided = trainsim::test::conv_instance(
      {256, 14, 14}, trainsim::models::conv_spec(1024, 1, 2, 0), "conv fwd", 8, Dtype::bf16);
  CHECK(trainsim::sim::kernel_time_s(h200, strided) / trainsim::sim::kernel_time_s(h200, gemm) ==
        Approx(5.22 / 3.56).epsilon(0.15));
}

TEST_CASE("architectures whose profile gives no GEMM latency price the tiles alone") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  for (const double v : v100.kernels.gemm_latency_s)
    CHECK(v == 0);
}
