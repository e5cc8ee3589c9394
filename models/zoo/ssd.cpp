// SSD300 v1.1 as NVIDIA DeepLearningExamples trains it on COCO (NVIDIA/DeepLearningExamples@
// 729963dd, PyTorch/Detection/SSD/ssd/model.py): torchvision's ResNet-50 up to layer3 with the
// strides of layer3's first block set to 1 (38x38 maps at 300x300), five extra blocks (1x1 then
// 3x3 conv, batch norm, ReLU) down to 1x1, and 3x3 location and class heads on all six maps (4, 6,
// 6, 6, 4, 4 default boxes per cell). One entry for the stem, per bottleneck block, per extra
// block, and one for the heads and the loss; the feature maps the heads read travel with the
// stream until then.
#include <string>
#include <vector>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

namespace {

// torchvision's Bottleneck (v1.5: the stride sits in the 3x3 conv).
Tensor bottleneck(NetBuilder& nb, const Tensor& in, std::int64_t planes, std::int64_t stride,
                  bool projection) {
  Tensor x = conv_bn_relu(nb, in, conv_spec(planes, 1));
  x = conv_bn_relu(nb, x, conv_spec(planes, 3, stride));
  x = nb.batch_norm(nb.conv2d(x, conv_spec(planes * 4, 1)));
  const Tensor shortcut =
      projection ? nb.batch_norm(nb.conv2d(in, conv_spec(planes * 4, 1, stride))) : in;
  return nb.activation(nb.add(x, shortcut), Activation::relu);
}

}  // namespace

ZooModel make_ssd300(const Hyperparameters& hp) {
  const std::int64_t res = hp.get("resolution");
  const std::int64_t classes = hp.get("num_classes");
  ZooModel m;
  m.input_shape = {3, res, res};
  m.input_dtype = InputDtype::uint8;
  NetBuilder nb;
  Tensor x = nb.input(m.input_shape);
  x = single_entry(nb, "feature_extractor.stem", OpClass::conv, x, [&](const Tensor& t) {
    return nb.max_pool(conv_bn_relu(nb, t, conv_spec(64, 7, 2, 3)), 3, 2, 1);
  });
  const std::int64_t blocks[] = {3, 4, 6};
  for (int stage = 0; stage < 3; ++stage) {
    for (std::int64_t b = 0; b < blocks[stage]; ++b) {
      // model.py sets conv4_block1's strides (layer3's first block) to 1.
      const std::int64_t stride = stage == 1 && b == 0 ? 2 : 1;
      x = single_entry(
          nb, "feature_extractor.layer" + std::to_string(stage + 1) + "." + std::to_string(b),
          OpClass::conv, x, [&](const Tensor& t) {
            return bottleneck(nb, t, std::int64_t{64} << stage, stride, b == 0);
          });
    }
  }
  // Extra blocks: out channels 512, 512, 256, 256, 256 through 256, 256, 128, 128, 128; the first
  // three halve the map (stride 2, padding 1), the last two shrink it by 2 (no padding).
  const std::int64_t outs[] = {512, 512, 256, 256, 256};
  const std::int64_t mids[] = {256, 256, 128, 128, 128};
  std::vector<Tensor> feeds = {x};
  double carried = 0;
  for (int i = 0; i < 5; ++i) {
    nb.begin("additional_blocks." + std::to_string(i), OpClass::conv, x.elements() + carried);
    const Tensor mid = conv_bn_relu(nb, x, conv_spec(mids[i], 1));
    x = conv_bn_relu(nb, mid, i < 3 ? conv_spec(outs[i], 3, 2, 1) : conv_spec(outs[i], 3, 1, 0));
    carried += feeds.back().elements();
    feeds.push_back(x);
    nb.end(x, carried);
  }
  const std::int64_t defaults[] = {4, 6, 6, 6, 4, 4};
  nb.begin("heads", OpClass::conv, x.elements() + carried);
  double boxes = 0;
  Tensor last;
  for (std::size_t i = 0; i < feeds.size(); ++i) {
    nb.conv2d(feeds[i], conv_spec(defaults[i] * 4, 3, 1, 1, true));               // loc
    last = nb.conv2d(feeds[i], conv_spec(defaults[i] * classes, 3, 1, 1, true));  // conf
    boxes += static_cast<double>(defaults[i] * feeds[i].height() * feeds[i].width());
  }
  // Smooth L1 on the boxes and cross-entropy on the class scores (with hard negative mining) over
  // all default boxes (8732 at 300x300).
  nb.loss(nb.copy_as(last, {static_cast<std::int64_t>(boxes) * (classes + 4)}));
  nb.end(last);
  m.layers = nb.take_layers();
  return m;
}
}  // namespace trainsim::models
