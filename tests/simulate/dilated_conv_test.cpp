// Dilated convolutions: their taps spread `dilation` apart (the output length follows the filter's
// extent), Winograd does not take them, and where the dtype's rate comes from tensor cores and the
// architecture's library has no tensor-core algorithm for dilation (cuDNN 7: Volta, Turing) they
// run in fp32 instead.
#include <catch2/catch.hpp>

#include <string_view>

#include "cli/profiles_source.hpp"
#include "models/kernel_plan.hpp"
#include "models/training_step.hpp"
#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Conv2d;
using trainsim::models::KernelSpec;
using trainsim::models::NetBuilder;
using trainsim::models::OpClass;
using trainsim::sim::Dtype;

namespace {

// A 3-tap 1-D convolution, 512 -> 1024 channels over 1000 positions (WaveGlow's WN in_layer),
// padded to keep the length; returns its forward kernel and checks the output length.
KernelSpec conv1d_fwd(std::int64_t dilation) {
  NetBuilder nb;
  const auto x = nb.input({512, 1, 1000}, true);
  nb.begin("conv", OpClass::conv, x.elements());
  Conv2d spec{1024, 1, 3, 1, 1, 0, dilation, 1, true};
  spec.dilation_w = dilation;
  const auto y = nb.conv2d(x, spec);
  CHECK(y.width() == 1000);
  nb.end(y);
  const auto layers = nb.take_layers();
  for (const auto& k : layers.at(0).fwd_kernels)
    if (std::string_view(k.what) == "conv fwd") return k;
  FAIL("no conv fwd kernel");
  return {};
}

}  // namespace

TEST_CASE("a dilated convolution's filter spans dilation x (kernel - 1) + 1 positions") {
  NetBuilder nb;
  const auto x = nb.input({8, 1, 100});
  nb.begin("conv", OpClass::conv, x.elements());
  Conv2d spec{8, 1, 3, 1, 1, 0, 0, 1, false};
  spec.dilation_w = 4;  // extent 9: 100 - 9 + 1 positions without padding
  CHECK(nb.conv2d(x, spec).width() == 92);
  spec.dilation_w = 0;
  CHECK_THROWS_AS(nb.conv2d(x, spec), trainsim::models::ShapeError);
}

TEST_CASE("dilated convolutions leave cuDNN 7's tensor cores for fp32 math") {
  const auto lib = trainsim::cli::load_profile_library({});
  const KernelSpec plain = conv1d_fwd(1);
  const KernelSpec dilated = conv1d_fwd(4);
  CHECK_FALSE(plain.dilated);
  CHECK(dilated.dilated);
  CHECK(plain.flops == dilated.flops);
  const auto body_s = [&](const char* accelerator, const KernelSpec& k, Dtype dtype) {
    const auto a = lib.accelerator(accelerator, "test");
    return trainsim::sim::kernel_body_s(a, trainsim::models::instantiate(k, 4, dtype));
  };
  // V100: fp16 is the tensor cores' 125 TFLOP/s (8x fp32); dilated, the kernel computes at fp32's
  // rate and efficiency, so it takes about as long as in fp32 (its 16-bit operands read less).
  CHECK(body_s("v100-sxm2-16gb", plain, Dtype::fp16) <
        0.3 * body_s("v100-sxm2-16gb", dilated, Dtype::fp16));
  CHECK(body_s("v100-sxm2-16gb", dilated, Dtype::fp16) ==
        Approx(body_s("v100-sxm2-16gb", dilated, Dtype::fp32)).epsilon(1e-9));
  // Turing (T4) likewise.
  CHECK(body_s("t4", dilated, Dtype::fp16) ==
        Approx(body_s("t4", dilated, Dtype::fp32)).epsilon(1e-9));
  // Ampere's library has them: A100's TF32 dilated convolution prices as the undilated one.
  CHECK(body_s("a100-sxm4-40gb", dilated, Dtype::tf32) ==
        Approx(body_s("a100-sxm4-40gb", plain, Dtype::tf32)).epsilon(1e-9));
  CHECK(body_s("a100-sxm4-40gb", dilated, Dtype::tf32) <
        0.5 * body_s("a100-sxm4-40gb", dilated, Dtype::fp32));
  // fp32 itself is unchanged by dilation.
  CHECK(body_s("v100-sxm2-16gb", dilated, Dtype::fp32) ==
        Approx(body_s("v100-sxm2-16gb", plain, Dtype::fp32)).epsilon(1e-9));
  // P100 has no tensor cores: its fp16 (packed half2, 2x fp32) is what it has either way.
  CHECK(body_s("p100-sxm2-16gb", dilated, Dtype::fp16) ==
        Approx(body_s("p100-sxm2-16gb", plain, Dtype::fp16)).epsilon(1e-9));
}

TEST_CASE("a scenario names its library's dilated tensor-core support over the architecture's") {
  // WaveGlow's coupling networks are dilated convolutions (dilation 2^i in WN layer i).
  const std::vector<std::string> base{"model=waveglow", "batch_per_replica=4", "precision=tf32",
                                      "parallelism.data=1", "cluster.node.accelerators_per_node=1"};
  const auto with = [&](std::vector<std::string> extra) {
    auto sets = base;
    sets.insert(sets.end(), extra.begin(), extra.end());
    return trainsim::test::scenario(sets);
  };
  const auto ampere = with({});
  const auto cudnn_8_0 = with({"dilated_conv_tensor_cores=false"});
  CHECK(ampere.cluster.accelerator.kernels.dilated_conv_tensor_cores);  // the profile's default
  CHECK_FALSE(cudnn_8_0.cluster.accelerator.kernels.dilated_conv_tensor_cores);
  const auto tc = trainsim::models::simulate_training(ampere);
  const auto fp32_math = trainsim::models::simulate_training(cudnn_8_0);
  // The report says so (text line and JSON key dilated_conv_fp32_math).
  CHECK_FALSE(tc.dilated_conv_fp32_math);
  CHECK(fp32_math.dilated_conv_fp32_math);
  // And the result depends on conv's fp32 efficiency (the parameters behind it).
  const auto uses_conv_fp32 = [](const trainsim::models::Scenario& s) {
    for (const auto& u : trainsim::models::kernel_uses(s))
      if (u.cls == trainsim::sim::KernelClass::conv && u.dtype == Dtype::fp32) return true;
    return false;
  };
  CHECK_FALSE(uses_conv_fp32(ampere));
  CHECK(uses_conv_fp32(cudnn_8_0));
  const double tc_s = tc.step_time_s;
  const double fp32_math_s = fp32_math.step_time_s;
  // Most of WaveGlow's math is in those convolutions: fp32 math (19.5 TFLOP/s on A100 against
  // TF32's 156) makes the step well over half again as long.
  CHECK(fp32_math_s > 1.5 * tc_s);
  // And the other way: a V100 stack with them (cuDNN 7 has none) would run fp16 on tensor cores.
  const auto volta = with({"cluster.node.accelerator=v100-sxm2-16gb", "precision=fp16"});
  const auto volta_tc = with({"cluster.node.accelerator=v100-sxm2-16gb", "precision=fp16",
                              "dilated_conv_tensor_cores=true"});
  CHECK_FALSE(volta.cluster.accelerator.kernels.dilated_conv_tensor_cores);
  // In fp32 there is nothing to leave: the flag does not apply.
  CHECK_FALSE(trainsim::models::simulate_training(
                  with({"cluster.node.accelerator=v100-sxm2-16gb", "precision=fp32"}))
                  .dilated_conv_fp32_math);
  CHECK(trainsim::models::simulate_training(volta_tc).step_time_s <
        0.7 * trainsim::models::simulate_training(volta).step_time_s);
}
