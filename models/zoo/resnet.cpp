// ResNets at the granularity of torchgpipe's benchmark model (benchmarks/models/resnet): the
// torchvision network flattened into one nn.Sequential whose bottleneck blocks are themselves
// Sequentials of identity, conv1, bn1, relu1, conv2, bn2, relu2, conv3, bn3, residual, relu3.
// ResNet-101 thus has 4 + 33 * 11 + 3 = 370 entries, the length its balance lists sum to.
// ResNet-20 (CIFAR) follows the same style with basic blocks (8 entries each).
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

namespace {

// torchgpipe's Identity stashes the block input for the Residual entry. torchgpipe moves skip
// tensors straight from the stashing to the popping partition, so entries report only their main
// output; the Residual entry counts the popped tensor among its inputs.
Tensor identity_entry(NetBuilder& nb, const std::string& name, const Tensor& in) {
  nb.begin(name, OpClass::elementwise, in.elements());
  nb.end(in);
  return in;
}

// Residual: pops the stash, applies the downsample (1x1 conv + BN) when the shape changes, adds.
Tensor residual_entry(NetBuilder& nb, const std::string& name, const Tensor& in,
                      const Tensor& identity, std::int64_t stride, bool projection) {
  nb.begin(name, projection ? OpClass::conv : OpClass::elementwise,
           in.elements() + identity.elements());
  Tensor shortcut = identity;
  if (projection) {
    shortcut = nb.batch_norm(nb.conv2d(identity, conv_spec(in.channels(), 1, stride)));
  }
  Tensor out = nb.add(in, shortcut);
  nb.end(out);
  return out;
}

// Option A of He et al. (2016): identity shortcut, subsampled and zero-padded when the width
// doubles, so it has no parameters.
Tensor residual_option_a_entry(NetBuilder& nb, const std::string& name, const Tensor& in,
                               const Tensor& identity) {
  nb.begin(name, OpClass::elementwise, in.elements() + identity.elements());
  const Tensor shortcut = identity.shape == in.shape ? identity : nb.copy_as(identity, in.shape);
  Tensor out = nb.add(in, shortcut);
  nb.end(out);
  return out;
}

}  // namespace

ZooModel make_resnet_cifar(const Hyperparameters& hp) {
  const std::int64_t depth = hp.get("depth");
  if (depth < 8 || (depth - 2) % 6 != 0) {
    throw ShapeError("depth=" + std::to_string(depth) +
                     " is not 6n+2 with n >= 1 (20, 32, 44, 56, 110, ...)");
  }
  const std::int64_t blocks_per_stage = (depth - 2) / 6;
  const std::int64_t res = hp.get("resolution");
  ZooModel m;
  m.input_shape = {3, res, res};
  m.input_dtype = InputDtype::uint8;
  NetBuilder nb;
  Tensor x = nb.input(m.input_shape);
  x = conv_entry(nb, "conv1", x, conv_spec(16, 3));
  x = bn_entry(nb, "bn1", x);
  x = relu_entry(nb, "relu", x);
  const std::int64_t widths[] = {16, 32, 64};
  for (int stage = 0; stage < 3; ++stage) {
    for (std::int64_t b = 0; b < blocks_per_stage; ++b) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(b) + ".";
      const std::int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
      const Tensor identity = identity_entry(nb, p + "identity", x);
      x = conv_entry(nb, p + "conv1", x, conv_spec(widths[stage], 3, stride));
      x = bn_entry(nb, p + "bn1", x);
      x = relu_entry(nb, p + "relu1", x);
      x = conv_entry(nb, p + "conv2", x, conv_spec(widths[stage], 3));
      x = bn_entry(nb, p + "bn2", x);
      x = residual_option_a_entry(nb, p + "residual", x, identity);
      x = relu_entry(nb, p + "relu2", x);
    }
  }
  x = single_entry(nb, "avgpool", OpClass::pooling, x,
                   [&](const Tensor& t) { return nb.global_avg_pool(t); });
  m.layers = finish_with_linear_head(nb, "fc", x, hp.get("num_classes"));
  return m;
}

ZooModel make_resnet_imagenet(const Hyperparameters& hp, std::int64_t depth) {
  const std::int64_t blocks[4] = {3, 4, depth == 101 ? 23 : 6, 3};
  const std::int64_t res = hp.get("resolution");
  ZooModel m;
  m.input_shape = {3, res, res};
  m.input_dtype = InputDtype::uint8;
  NetBuilder nb;
  Tensor x = nb.input(m.input_shape);
  x = conv_entry(nb, "conv1", x, conv_spec(64, 7, 2, 3));
  x = bn_entry(nb, "bn1", x);
  x = relu_entry(nb, "relu", x);
  x = single_entry(nb, "maxpool", OpClass::pooling, x,
                   [&](const Tensor& t) { return nb.max_pool(t, 3, 2, 1); });
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t planes = std::int64_t{64} << stage;
    for (std::int64_t b = 0; b < blocks[stage]; ++b) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(b) + ".";
      const std::int64_t stride = (stage > 0 && b == 0) ? 2 : 1;  // v1.5: the stride sits in conv2
      const bool projection = b == 0;
      const Tensor identity = identity_entry(nb, p + "identity", x);
      x = conv_entry(nb, p + "conv1", x, conv_spec(planes, 1));
      x = bn_entry(nb, p + "bn1", x);
      x = relu_entry(nb, p + "relu1", x);
      x = conv_entry(nb, p + "conv2", x, conv_spec(planes, 3, stride));
      x = bn_entry(nb, p + "bn2", x);
      x = relu_entry(nb, p + "relu2", x);
      x = conv_entry(nb, p + "conv3", x, conv_spec(planes * 4, 1));
      x = bn_entry(nb, p + "bn3", x);
      x = residual_entry(nb, p + "residual", x, identity, stride, projection);
      x = relu_entry(nb, p + "relu3", x);
    }
  }
  x = single_entry(nb, "avgpool", OpClass::pooling, x,
                   [&](const Tensor& t) { return nb.global_avg_pool(t); });
  x = single_entry(nb, "flat", OpClass::elementwise, x,
                   [&](const Tensor& t) { return nb.reshape(t, t.shape); });
  m.layers = finish_with_linear_head(nb, "fc", x, hp.get("num_classes"));
  return m;
}

}  // namespace trainsim::models
