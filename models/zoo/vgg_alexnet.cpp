// VGG-16 and AlexNet at the granularity of torchvision's modules: every conv, ReLU, pool, linear
// and dropout of `features`, `avgpool` and `classifier` is one entry (torchvision flattens in
// forward(), so the flatten is part of the first linear's entry).
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

namespace {

Tensor linear_entry(NetBuilder& nb, const std::string& name, const Tensor& in, std::int64_t out,
                    bool last) {
  nb.begin(name, OpClass::matmul, in.elements());
  Tensor x = nb.linear(nb.reshape(in, {static_cast<std::int64_t>(in.elements())}), out, true);
  if (last) nb.loss(x);
  nb.end(x);
  return x;
}

Tensor dropout_entry(NetBuilder& nb, const std::string& name, const Tensor& in) {
  return single_entry(nb, name, OpClass::elementwise, in,
                      [&](const Tensor& t) { return nb.dropout(t); });
}

Tensor maxpool_entry(NetBuilder& nb, const std::string& name, const Tensor& in, std::int64_t k,
                     std::int64_t s) {
  return single_entry(nb, name, OpClass::pooling, in,
                      [&](const Tensor& t) { return nb.max_pool(t, k, s); });
}

Tensor adaptive_pool_entry(NetBuilder& nb, const Tensor& in, std::int64_t size) {
  return single_entry(nb, "avgpool", OpClass::pooling, in,
                      [&](const Tensor& t) { return nb.adaptive_avg_pool(t, size, size); });
}

ZooModel image_model(const Hyperparameters& hp) {
  ZooModel m;
  const std::int64_t res = hp.get("resolution");
  m.input_shape = {3, res, res};
  m.input_dtype = InputDtype::uint8;
  return m;
}

}  // namespace

ZooModel make_vgg16(const Hyperparameters& hp) {
  ZooModel m = image_model(hp);
  NetBuilder nb;
  Tensor x = nb.input(m.input_shape);
  // Configuration D of Simonyan & Zisserman (2015); 0 marks a 2x2 max pool.
  const std::int64_t config[] = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                                 0,  512, 512, 512, 0,   512, 512, 512, 0};
  int index = 0;
  for (const std::int64_t c : config) {
    const std::string p = "features." + std::to_string(index);
    if (c == 0) {
      x = maxpool_entry(nb, p, x, 2, 2);
      ++index;
    } else {
      x = conv_entry(nb, p, x, conv_spec(c, 3, 1, 1, true));
      x = relu_entry(nb, "features." + std::to_string(index + 1), x);
      index += 2;
    }
  }
  x = adaptive_pool_entry(nb, x, 7);
  x = linear_entry(nb, "classifier.0", x, 4096, false);
  x = relu_entry(nb, "classifier.1", x);
  x = dropout_entry(nb, "classifier.2", x);
  x = linear_entry(nb, "classifier.3", x, 4096, false);
  x = relu_entry(nb, "classifier.4", x);
  x = dropout_entry(nb, "classifier.5", x);
  linear_entry(nb, "classifier.6", x, hp.get("num_classes"), true);
  m.layers = nb.take_layers();
  return m;
}

ZooModel make_alexnet(const Hyperparameters& hp) {
  ZooModel m = image_model(hp);
  NetBuilder nb;
  Tensor x = nb.input(m.input_shape);
  x = conv_entry(nb, "features.0", x, conv_spec(64, 11, 4, 2, true));
  x = relu_entry(nb, "features.1", x);
  x = maxpool_entry(nb, "features.2", x, 3, 2);
  x = conv_entry(nb, "features.3", x, conv_spec(192, 5, 1, 2, true));
  x = relu_entry(nb, "features.4", x);
  x = maxpool_entry(nb, "features.5", x, 3, 2);
  x = conv_entry(nb, "features.6", x, conv_spec(384, 3, 1, 1, true));
  x = relu_entry(nb, "features.7", x);
  x = conv_entry(nb, "features.8", x, conv_spec(256, 3, 1, 1, true));
  x = relu_entry(nb, "features.9", x);
  x = conv_entry(nb, "features.10", x, conv_spec(256, 3, 1, 1, true));
  x = relu_entry(nb, "features.11", x);
  x = maxpool_entry(nb, "features.12", x, 3, 2);
  x = adaptive_pool_entry(nb, x, 6);
  x = dropout_entry(nb, "classifier.0", x);
  x = linear_entry(nb, "classifier.1", x, 4096, false);
  x = relu_entry(nb, "classifier.2", x);
  x = dropout_entry(nb, "classifier.3", x);
  x = linear_entry(nb, "classifier.4", x, 4096, false);
  x = relu_entry(nb, "classifier.5", x);
  linear_entry(nb, "classifier.6", x, hp.get("num_classes"), true);
  m.layers = nb.take_layers();
  return m;
}

}  // namespace trainsim::models
