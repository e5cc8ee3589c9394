// Weight-gradient convolutions (cuDNN's backward-filter algorithms) run at the forward
// convolutions' efficiency times the kernels profile's conv_weight_gradient, and strided
// convolutions' data gradients times its conv_strided_data_gradient, where it gives them.
#include <catch2/catch.hpp>

#include <string_view>

#include "cli/profiles_source.hpp"
#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/hw/kernel_model.hpp"

using trainsim::models::KernelSpec;
using trainsim::models::NetBuilder;
using trainsim::models::OpClass;

namespace {

// The backward kernels of a 3x3 convolution, 256 -> 256 channels on 28x28 (compute-bound).
std::vector<KernelSpec> conv_backward() {
  NetBuilder nb;
  const auto x = nb.input({256, 28, 28}, true);
  nb.begin("conv", OpClass::conv, x.elements());
  nb.end(nb.conv2d(x, trainsim::models::conv_spec(256, 3, 1, 1)));
  return nb.take_layers().at(0).bwd_kernels;
}

const KernelSpec& find(const std::vector<KernelSpec>& ks, std::string_view what) {
  for (const auto& k : ks)
    if (what == k.what) return k;
  FAIL("no kernel " << what);
  return ks.front();
}

}  // namespace

TEST_CASE("weight-gradient convolutions take the profile's share of conv efficiency") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto ks = conv_backward();
  const KernelSpec& wgrad = find(ks, "conv wgrad");
  CHECK(wgrad.weight_gradient);
  CHECK_FALSE(find(ks, "conv dgrad").weight_gradient);
  KernelSpec as_forward = wgrad;
  as_forward.weight_gradient = false;
  const auto body_s = [&](const char* accelerator, const KernelSpec& k) {
    const auto a = lib.accelerator(accelerator, "test");
    return trainsim::sim::kernel_body_s(
        a, trainsim::models::instantiate(k, 64, trainsim::sim::Dtype::fp32));
  };
  // Pascal gives 0.729 in fp32 (calibrated on DeepBench's P100 and GTX 1080 Ti rows): the
  // compute-bound body takes 1 / 0.729 as long.
  CHECK(body_s("p100-sxm2-16gb", wgrad) ==
        Approx(body_s("p100-sxm2-16gb", as_forward) / 0.729).epsilon(1e-9));
  // Volta's fit ran into 1: its profile gives none, and weight gradients price as forward.
  CHECK(body_s("v100-sxm2-16gb", wgrad) == Approx(body_s("v100-sxm2-16gb", as_forward)));
}

TEST_CASE("strided convolutions' data gradients take the profile's share of conv efficiency") {
  const auto lib = trainsim::cli::load_profile_library({});
  NetBuilder nb;
  const auto x = nb.input({256, 56, 56}, true);
  nb.begin("conv", OpClass::conv, x.elements());
  nb.end(nb.conv2d(x, trainsim::models::conv_spec(512, 1, 2, 0)));  // ResNet's 1x1/2 shortcut
  const auto layers = nb.take_layers();
  const KernelSpec& dgrad = find(layers.at(0).bwd_kernels, "conv dgrad");
  CHECK(dgrad.strided_data_gradient);
  CHECK_FALSE(find(conv_backward(), "conv dgrad").strided_data_gradient);  // stride 1
  CHECK_FALSE(find(layers.at(0).bwd_kernels, "conv wgrad").strided_data_gradient);
  KernelSpec unstrided = dgrad;
  unstrided.strided_data_gradient = false;
  const auto body_s = [&](const char* accelerator, const KernelSpec& k) {
    const auto a = lib.accelerator(accelerator, "test");
    return trainsim::sim::kernel_body_s(
        a, trainsim::models::instantiate(k, 64, trainsim::sim::Dtype::fp32));
  };
  // Volta gives 0.586 in fp32 (calibrated on DeepBench's V100 rows).
  CHECK(body_s("v100-sxm2-16gb", dgrad) ==
        Approx(body_s("v100-sxm2-16gb", unstrided) / 0.586).epsilon(1e-9));
  // Pascal's fit ran into 1: none.
  CHECK(body_s("p100-sxm2-16gb", dgrad) == Approx(body_s("p100-sxm2-16gb", unstrided)));
}
