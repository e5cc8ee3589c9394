// Inception-v3 as torchvision defines it (Szegedy et al. 2016), at the granularity of its child
// modules: each stem BasicConv2d (conv + BN + ReLU), pool and Mixed_* block is one entry. The
// auxiliary classifier is left out (it only runs in training and is usually disabled; published
// parameter counts such as Keras's 23.9 M exclude it).
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

namespace {

Conv2d rect(std::int64_t out, std::int64_t kh, std::int64_t kw) {
  return Conv2d{out, kh, kw, 1, 1, (kh - 1) / 2, (kw - 1) / 2, 1, false};
}

class Inception {
 public:
  explicit Inception(NetBuilder& nb) : nb_(nb) {}

  Tensor conv(const Tensor& in, const Conv2d& spec) { return conv_bn_relu(nb_, in, spec); }
  Tensor conv(const Tensor& in, std::int64_t out, std::int64_t k, std::int64_t stride = 1,
              std::int64_t pad = 0) {
    return conv(in, conv_spec(out, k, stride, pad));
  }
  Tensor avg_pool_branch(const Tensor& in, std::int64_t out) {
    return conv(nb_.avg_pool(in, 3, 1, 1), out, 1);
  }

  Tensor a(const Tensor& x, std::int64_t pool_features) {
    const Tensor b1 = conv(x, 64, 1);
    const Tensor b5 = conv(conv(x, 48, 1), 64, 5, 1, 2);
    const Tensor b3 = conv(conv(conv(x, 64, 1), 96, 3, 1, 1), 96, 3, 1, 1);
    return nb_.concat({b1, b5, b3, avg_pool_branch(x, pool_features)});
  }
  Tensor b(const Tensor& x) {
    const Tensor b3 = conv(x, 384, 3, 2);
    const Tensor b3d = conv(conv(conv(x, 64, 1), 96, 3, 1, 1), 96, 3, 2);
    return nb_.concat({b3, b3d, nb_.max_pool(x, 3, 2)});
  }
  Tensor c(const Tensor& x, std::int64_t c7) {
    const Tensor b1 = conv(x, 192, 1);
    const Tensor b7 = conv(conv(conv(x, c7, 1), rect(c7, 1, 7)), rect(192, 7, 1));
    Tensor b7d = conv(conv(x, c7, 1), rect(c7, 7, 1));
    b7d = conv(conv(conv(b7d, rect(c7, 1, 7)), rect(c7, 7, 1)), rect(192, 1, 7));
    return nb_.concat({b1, b7, b7d, avg_pool_branch(x, 192)});
  }
  Tensor d(const Tensor& x) {
    const Tensor b3 = conv(conv(x, 192, 1), 320, 3, 2);
    const Tensor b7 =
        conv(conv(conv(conv(x, 192, 1), rect(192, 1, 7)), rect(192, 7, 1)), 192, 3, 2);
    return nb_.concat({b3, b7, nb_.max_pool(x, 3, 2)});
  }
  Tensor e(const Tensor& x) {
    const Tensor b1 = conv(x, 320, 1);
    const Tensor b3 = conv(x, 384, 1);
    const Tensor b3d = conv(conv(x, 448, 1), 384, 3, 1, 1);
    return nb_.concat({b1, conv(b3, rect(384, 1, 3)), conv(b3, rect(384, 3, 1)),
                       conv(b3d, rect(384, 1, 3)), conv(b3d, rect(384, 3, 1)),
                       avg_pool_branch(x, 192)});
  }

 private:
  NetBuilder& nb_;
};

}  // namespace

ZooModel make_inception_v3(const Hyperparameters& hp) {
  const std::int64_t res = hp.get("resolution");
  ZooModel m;
  m.input_shape = {3, res, res};
  m.input_dtype = InputDtype::uint8;
  NetBuilder nb;
  Inception inc(nb);
  Tensor x = nb.input(m.input_shape);
  auto conv_layer = [&](const std::string& name, std::int64_t out, std::int64_t k,
                        std::int64_t stride, std::int64_t pad) {
    x = single_entry(nb, name, OpClass::conv, x,
                     [&](const Tensor& t) { return inc.conv(t, out, k, stride, pad); });
  };
  auto pool_layer = [&](const std::string& name) {
    x = single_entry(nb, name, OpClass::pooling, x,
                     [&](const Tensor& t) { return nb.max_pool(t, 3, 2); });
  };
  auto mixed = [&](const std::string& name, auto block) {
    x = single_entry(nb, name, OpClass::conv, x, block);
  };
  conv_layer("Conv2d_1a_3x3", 32, 3, 2, 0);
  conv_layer("Conv2d_2a_3x3", 32, 3, 1, 0);
  conv_layer("Conv2d_2b_3x3", 64, 3, 1, 1);
  pool_layer("maxpool1");
  conv_layer("Conv2d_3b_1x1", 80, 1, 1, 0);
  conv_layer("Conv2d_4a_3x3", 192, 3, 1, 0);
  pool_layer("maxpool2");
  mixed("Mixed_5b", [&](const Tensor& t) { return inc.a(t, 32); });
  mixed("Mixed_5c", [&](const Tensor& t) { return inc.a(t, 64); });
  mixed("Mixed_5d", [&](const Tensor& t) { return inc.a(t, 64); });
  mixed("Mixed_6a", [&](const Tensor& t) { return inc.b(t); });
  mixed("Mixed_6b", [&](const Tensor& t) { return inc.c(t, 128); });
  mixed("Mixed_6c", [&](const Tensor& t) { return inc.c(t, 160); });
  mixed("Mixed_6d", [&](const Tensor& t) { return inc.c(t, 160); });
  mixed("Mixed_6e", [&](const Tensor& t) { return inc.c(t, 192); });
  mixed("Mixed_7a", [&](const Tensor& t) { return inc.d(t); });
  mixed("Mixed_7b", [&](const Tensor& t) { return inc.e(t); });
  mixed("Mixed_7c", [&](const Tensor& t) { return inc.e(t); });
  x = single_entry(nb, "avgpool", OpClass::pooling, x,
                   [&](const Tensor& t) { return nb.global_avg_pool(t); });
  x = single_entry(nb, "dropout", OpClass::elementwise, x,
                   [&](const Tensor& t) { return nb.dropout(t); });
  m.layers = finish_with_linear_head(nb, "fc", x, hp.get("num_classes"));
  return m;
}

}  // namespace trainsim::models
