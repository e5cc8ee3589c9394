// The simplified U-Net of torchgpipe's benchmark (benchmarks/models/unet), at the granularity of
// its flattened nn.Sequential: every conv, Dropout2d, InstanceNorm and LeakyReLU of a block, each
// stash, max pool, upsample and pop-concat, and the final 1x1 segment conv is one entry. With
// depth 5 that is 44 B + 21 entries (241 for U-Net (5, 64), 505 for (11, 128)), the lengths its
// balance lists sum to. B is the number of convs per block, C the base channel count.
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

namespace {

constexpr int kDepth = 5;  // torchgpipe's default, used by all its U-Net benchmarks

Tensor conv_dropout_norm_relu(NetBuilder& nb, const std::string& p, Tensor x, std::int64_t out) {
  x = conv_entry(nb, p + "conv", x, conv_spec(out, 3, 1, 1));
  x = single_entry(nb, p + "dropout", OpClass::elementwise, x,
                   [&](const Tensor& t) { return nb.dropout2d(t); });
  x = single_entry(nb, p + "norm", OpClass::normalization, x,
                   [&](const Tensor& t) { return nb.instance_norm(t); });
  return single_entry(nb, p + "relu", OpClass::elementwise, x,
                      [&](const Tensor& t) { return nb.activation(t, Activation::leaky_relu); });
}

Tensor stacked_convs(NetBuilder& nb, const std::string& p, Tensor x, std::int64_t hidden,
                     std::int64_t out, std::int64_t num_convs) {
  for (std::int64_t i = 0; i < num_convs; ++i) {
    x = conv_dropout_norm_relu(nb, p + std::to_string(i) + ".", x,
                               i + 1 == num_convs ? out : hidden);
  }
  return x;
}

}  // namespace

ZooModel make_unet(const Hyperparameters& hp) {
  const std::int64_t num_convs = hp.get("B");
  const std::int64_t base = hp.get("C");
  const std::int64_t res = hp.get("resolution");
  if (base % 2 != 0)
    throw ShapeError("C=" + std::to_string(base) +
                     " must be even (the last decoder has C/2 channels)");
  ZooModel m;
  m.input_shape = {3, res, res};
  m.input_dtype = InputDtype::uint8;
  NetBuilder nb;
  Tensor x = nb.input(m.input_shape);
  std::vector<Tensor> skips;
  for (int i = 0; i < kDepth; ++i) {
    const std::string p = "encoder." + std::to_string(i) + ".";
    const std::int64_t c = base << i;
    x = stacked_convs(nb, p + "encode.", x, c, c, num_convs);
    nb.begin(p + "skip", OpClass::elementwise, x.elements());  // Stash: hands x to the decoder
    nb.end(x);
    skips.push_back(x);
    x = single_entry(nb, p + "down", OpClass::pooling, x,
                     [&](const Tensor& t) { return nb.max_pool(t, 2, 2); });
  }
  x = stacked_convs(nb, "bottleneck.", x, base << kDepth, base << (kDepth - 1), num_convs);
  for (int i = kDepth - 1; i >= 0; --i) {
    const std::string p = "decoder." + std::to_string(kDepth - 1 - i) + ".";
    x = single_entry(nb, p + "up", OpClass::elementwise, x,
                     [&](const Tensor& t) { return nb.upsample2x(t); });
    const Tensor skip = skips.at(static_cast<std::size_t>(i));
    nb.begin(p + "skip", OpClass::elementwise, x.elements() + skip.elements());  // PopCat
    x = nb.concat({nb.pad_to(x, skip.height(), skip.width()), skip});
    nb.end(x);
    const std::int64_t c = i == 0 ? base / 2 : base << (i - 1);
    x = stacked_convs(nb, p + "decode.", x, c, c, num_convs);
  }
  nb.begin("segment", OpClass::conv, x.elements());
  x = nb.conv2d(x, conv_spec(hp.get("out_channels"), 1));
  nb.loss(x);
  nb.end(x);
  m.layers = nb.take_layers();
  return m;
}

}  // namespace trainsim::models
