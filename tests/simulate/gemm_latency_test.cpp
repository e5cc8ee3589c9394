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

TEST_CASE("Hopper's tensor-core convolutions take the same fill and drain") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto h200 = lib.accelerator("h200", "test");
  auto none = h200;
  none.kernels.gemm_latency_s = {};
  const auto layer = trainsim::models::conv_spec(128, 3, 1, 1);
  for (const Dtype d : {Dtype::tf32, Dtype::bf16}) {
    const double latency_s = h200.kernels.gemm_latency_s[static_cast<std::size_t>(d)];
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
}

TEST_CASE("architectures whose profile gives no GEMM latency price the tiles alone") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  for (const double v : v100.kernels.gemm_latency_s)
    CHECK(v == 0);
}
