#pragma once
// One convolution as the zoo builds it, for the kernel-model tests: the kernel it launches by name.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo_model.hpp"
#include "support/zoo_models.hpp"

namespace trainsim::test {

// The kernel `what` ("conv fwd", "conv dgrad", "conv wgrad") of the convolution `spec` over a
// {C, H, W} input that needs its gradient.
inline models::KernelSpec conv_kernel(std::vector<std::int64_t> input, const models::Conv2d& spec,
                                      std::string_view what) {
  models::NetBuilder nb;
  const auto x = nb.input(std::move(input), true);
  nb.begin("conv", models::OpClass::conv, x.elements());
  nb.end(nb.conv2d(x, spec));
  return kernel_named(nb.take_layers().at(0), what);
}

// DeepBench's speech first layer over its C1 161x700 input: K32, a 5x20 filter, stride 2, no
// padding (baidu-research/DeepBench code/kernels/conv_problems.h).
inline models::Conv2d speech_first_layer() {
  models::Conv2d c;
  c.out_channels = 32;
  c.kernel_h = 5;
  c.kernel_w = 20;
  c.stride_h = 2;
  c.stride_w = 2;
  return c;
}

// The same kernel instantiated for `batch` samples in `dtype`.
inline sim::Kernel conv_instance(std::vector<std::int64_t> input, const models::Conv2d& spec,
                                 std::string_view what, double batch, sim::Dtype dtype) {
  return models::instantiate(conv_kernel(std::move(input), spec, what), batch, dtype);
}

}  // namespace trainsim::test
