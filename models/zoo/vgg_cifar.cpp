// VGG-16 for CIFAR-10 as the gTop-k S-SGD code trains it (hclhkbu/gtopkssgd@0edc19b,
// models/vgg.py): VGG-16's 13 convolutions (configuration D, Simonyan & Zisserman 2015), each with
// batch norm and ReLU, five 2x2 max pools, a 1x1 average pool and a single linear classifier on
// the 512 features left at 1x1. One entry per conv + BN + ReLU, per pool and for the classifier.
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

ZooModel make_vgg16_cifar(const Hyperparameters& hp) {
  const std::int64_t res = hp.get("resolution");
  ZooModel m;
  m.input_shape = {3, res, res};
  m.input_dtype = InputDtype::uint8;
  NetBuilder nb;
  Tensor x = nb.input(m.input_shape);
  const std::int64_t config[] = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                                 0,  512, 512, 512, 0,   512, 512, 512, 0};
  int index = 0;
  for (const std::int64_t c : config) {
    const std::string name = "features." + std::to_string(index);
    if (c == 0) {
      x = single_entry(nb, name, OpClass::pooling, x,
                       [&](const Tensor& t) { return nb.max_pool(t, 2, 2); });
      ++index;
    } else {
      x = single_entry(nb, name, OpClass::conv, x, [&](const Tensor& t) {
        return conv_bn_relu(nb, t, conv_spec(c, 3, 1, 1, true));
      });
      index += 3;
    }
  }
  x = single_entry(nb, "features." + std::to_string(index), OpClass::pooling, x,
                   [&](const Tensor& t) { return nb.avg_pool(t, 1, 1); });
  m.layers = finish_with_linear_head(
      nb, "fc", nb.reshape(x, {static_cast<std::int64_t>(x.elements())}), hp.get("num_classes"));
  return m;
}

}  // namespace trainsim::models
