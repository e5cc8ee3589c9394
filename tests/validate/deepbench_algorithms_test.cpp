// DeepBench's tensor-core build forces cuDNN's algorithms (code/nvidia/conv_bench.cu,
// USE_TENSOR_CORES): its fp16 weight gradients run CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, which
// never splits the N x P x Q reduction, so a first layer's few filter tiles leave most SMs idle;
// its fp32 rows come from the autotuned build, whose algorithms split.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "cli/profiles_source.hpp"
#include "cli/validate_tables.hpp"
#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"

namespace {

using trainsim::sim::Dtype;

// The simulated ms of one deepbench_conv row (label) or nothing.
std::optional<double> simulated_ms(const std::string& label) {
  const auto lib = trainsim::cli::load_profile_library({});
  for (const auto& table : trainsim::cli::reference_tables()) {
    if (table.name != "deepbench_conv") continue;
    for (const auto& p : table.evaluate(lib)) {
      if (p.label == label) return p.predicted;
    }
  }
  return std::nullopt;
}

// DeepBench's speech first layer (C1 161x700, K32, 5x20 filter, stride 2), weight gradient, N 32,
// on the V100, in ms, with its reduction split or whole.
double weight_gradient_ms(Dtype dtype, bool whole) {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto v100 = lib.accelerator("v100-sxm2-16gb", "test");
  trainsim::models::NetBuilder nb;
  const auto x = nb.input({1, 161, 700}, true);
  trainsim::models::Conv2d spec;
  spec.out_channels = 32;
  spec.kernel_h = 5;
  spec.kernel_w = 20;
  spec.stride_h = 2;
  spec.stride_w = 2;
  nb.begin("conv", trainsim::models::OpClass::conv, x.elements());
  nb.end(nb.conv2d(x, spec));
  auto k = nb.take_layers()[0].bwd_kernels.at(1);
  k.whole_k = whole;
  return 1e3 * trainsim::sim::kernel_time_s(v100, trainsim::models::instantiate(k, 32, dtype));
}

}  // namespace

TEST_CASE("DeepBench's fp16 weight gradients run cuDNN's forced ALGO_1, whose reduction is whole") {
  const auto fp16 = simulated_ms("v100-sxm2-16gb fp16 conv C1 161x700 K32 5x20/2 N32 bwd_params");
  const auto fp32 = simulated_ms("v100-sxm2-16gb fp32 conv C1 161x700 K32 5x20/2 N32 bwd_params");
  REQUIRE(fp16);
  REQUIRE(fp32);
  CHECK(*fp16 == Approx(weight_gradient_ms(Dtype::fp16, true)).epsilon(1e-9));
  CHECK(*fp32 == Approx(weight_gradient_ms(Dtype::fp32, false)).epsilon(1e-9));
  // 800 filter columns (1 channel padded to 8, x 100 taps) by 32 filters: a handful of tiles
  // over 862k positions; whole, it takes about twice as long as split across the SMs.
  CHECK(weight_gradient_ms(Dtype::fp16, true) > 1.5 * weight_gradient_ms(Dtype::fp16, false));
}
