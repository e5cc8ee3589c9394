// PyTorch's max-pool backward gathers: each input element's thread walks the output windows that
// cover it, reading each one's argmax index (int64) and gradient, and writes its own gradient once
// (aten/src/ATen/native/cuda/DilatedMaxPool2d.cu, max_pool_backward_nchw and _nhwc). An element
// lies in (kernel / stride)^2 windows on average.
#include <catch2/catch.hpp>

#include <string>

#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo_model.hpp"
#include "support/zoo_models.hpp"

namespace {

trainsim::models::KernelSpec pool_kernel(std::int64_t kernel, std::int64_t stride,
                                         const std::string& what) {
  trainsim::models::NetBuilder nb;
  const auto x = nb.input({64, 112, 112}, true);
  nb.begin("pool", trainsim::models::OpClass::pooling, x.elements());
  nb.end(nb.max_pool(x, kernel, stride, 1));
  return trainsim::test::kernel_named(nb.take_layers().at(0), what);
}

}  // namespace

TEST_CASE("max-pool backward reads each covering window's index and gradient") {
  const double in = 64.0 * 112 * 112;
  // ResNet's stem pool: 3x3, stride 2 -> 2.25 windows per input element.
  const auto k = pool_kernel(3, 2, "maxpool bwd");
  CHECK(k.act_elements == Approx(2.25 * in + in));  // gradients read, the input gradient written
  CHECK(k.raw_bytes == Approx(8 * 2.25 * in));      // the int64 indices read
  const auto bytes = trainsim::models::instantiate(k, 64, trainsim::sim::Dtype::bf16).bytes;
  CHECK(bytes == Approx(64 * in * (2.25 * (2 + 8) + 2)));
  // Non-overlapping windows (2x2, stride 2) read each index and gradient once.
  const auto flat = pool_kernel(2, 2, "maxpool bwd");
  CHECK(flat.act_elements == Approx(2 * in));
  CHECK(flat.raw_bytes == Approx(8 * in));
}
