// AmoebaNet-D (Real et al. 2019) exactly as torchgpipe's benchmark builds it
// (benchmarks/models/amoebanet, which reproduces GPipe's parameter counts): an nn.Sequential of
// stem1, two reduction cells (stem2, stem3), N/3 normal cells, a reduction cell, N/3 normal cells,
// a reduction cell, N/3 normal cells and the classifier: N + 6 entries, 24 for AmoebaNet-D (18, F).
// Cells pass the tuple (output, previous input) along the Sequential, so a cell's output elements
// count both. One deviation: the classifier pools globally where torchgpipe uses AvgPool2d(7);
// they agree at the 224x224 input the benchmarks use, and other resolutions stay usable.
#include <array>
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

namespace {

enum class Op { none, avg_pool_3x3, max_pool_2x2, conv_1x1, conv_3x3, conv_1x7_7x1 };

struct CellOp {
  int state;
  Op op;
};

// The genotype of torchgpipe's genotype.py (TensorFlow's reference AmoebaNet-D); its
// "max_pool_3x3" is an AvgPool2d there, so it is avg_pool_3x3 here.
constexpr std::array<CellOp, 10> kNormalOps{{{1, Op::conv_1x1},
                                             {1, Op::avg_pool_3x3},
                                             {1, Op::none},
                                             {0, Op::conv_1x7_7x1},
                                             {0, Op::conv_1x1},
                                             {0, Op::conv_1x7_7x1},
                                             {2, Op::avg_pool_3x3},
                                             {2, Op::none},
                                             {1, Op::avg_pool_3x3},
                                             {5, Op::conv_1x1}}};
constexpr std::array<int, 4> kNormalConcat{0, 3, 4, 6};
constexpr std::array<CellOp, 10> kReductionOps{{{0, Op::max_pool_2x2},
                                                {0, Op::avg_pool_3x3},
                                                {2, Op::none},
                                                {1, Op::conv_3x3},
                                                {2, Op::conv_1x7_7x1},
                                                {2, Op::avg_pool_3x3},
                                                {3, Op::none},
                                                {1, Op::max_pool_2x2},
                                                {2, Op::avg_pool_3x3},
                                                {3, Op::conv_1x1}}};
constexpr std::array<int, 3> kReductionConcat{4, 5, 6};

class Amoeba {
 public:
  explicit Amoeba(NetBuilder& nb) : nb_(nb) {}

  Tensor relu(const Tensor& x) { return nb_.activation(x, Activation::relu); }
  Tensor conv_bn(const Tensor& x, const Conv2d& spec) {
    return nb_.batch_norm(nb_.conv2d(x, spec));
  }
  Tensor relu_conv_bn(const Tensor& x, std::int64_t out) {
    return conv_bn(relu(x), conv_spec(out, 1));
  }

  Tensor factorized_reduce(const Tensor& x, std::int64_t out) {
    const Tensor r = relu(x);
    const Tensor a = nb_.conv2d(r, conv_spec(out / 2, 1, 2));
    const Tensor shifted = nb_.copy_as(r, r.shape);  // x[:, :, 1:, 1:] zero-padded back to H x W
    const Tensor b = nb_.conv2d(shifted, conv_spec(out / 2, 1, 2));
    return nb_.batch_norm(nb_.concat({a, b}));
  }

  Tensor apply(Op op, const Tensor& x, std::int64_t stride) {
    const std::int64_t c = x.channels();
    switch (op) {
      case Op::none:
        return stride == 1 ? x : factorized_reduce(x, c);
      case Op::avg_pool_3x3:
        return nb_.avg_pool(x, 3, stride, 1);
      case Op::max_pool_2x2:
        return nb_.max_pool(x, 2, stride, 0);
      case Op::conv_1x1:
        return conv_bn(relu(x), conv_spec(c, 1, stride));
      case Op::conv_3x3: {
        Tensor t = conv_bn(relu(x), conv_spec(c / 4, 1));
        t = conv_bn(relu(t), conv_spec(c / 4, 3, stride));
        return conv_bn(relu(t), conv_spec(c, 1));
      }
      case Op::conv_1x7_7x1: {
        Tensor t = conv_bn(relu(x), conv_spec(c / 4, 1));
        t = conv_bn(relu(t), Conv2d{c / 4, 1, 7, 1, stride, 0, 3, 1, false});
        t = conv_bn(relu(t), Conv2d{c / 4, 7, 1, stride, 1, 3, 0, 1, false});
        return conv_bn(relu(t), conv_spec(c, 1));
      }
    }
    return x;
  }

  // One cell on (latest, previous) states; returns its concatenated output.
  template <std::size_t N, std::size_t K>
  Tensor cell(const Tensor& latest, const Tensor& previous, std::int64_t channels, bool reduction,
              bool reduction_prev, const std::array<CellOp, N>& ops,
              const std::array<int, K>& concat) {
    std::vector<Tensor> states;
    states.push_back(relu_conv_bn(latest, channels));
    if (reduction_prev) {
      states.push_back(factorized_reduce(previous, channels));
    } else if (previous.channels() != channels) {
      states.push_back(relu_conv_bn(previous, channels));
    } else {
      states.push_back(previous);
    }
    for (std::size_t i = 0; i < N; i += 2) {
      const auto stride_of = [&](int state) { return reduction && state < 2 ? 2 : 1; };
      const Tensor h1 = apply(ops[i].op, states.at(static_cast<std::size_t>(ops[i].state)),
                              stride_of(ops[i].state));
      const Tensor h2 = apply(ops[i + 1].op, states.at(static_cast<std::size_t>(ops[i + 1].state)),
                              stride_of(ops[i + 1].state));
      states.push_back(nb_.add(h1, h2));
    }
    std::vector<Tensor> parts;
    for (const int i : concat)
      parts.push_back(states.at(static_cast<std::size_t>(i)));
    return nb_.concat(parts);
  }

 private:
  NetBuilder& nb_;
};

}  // namespace

ZooModel make_amoebanet_d(const Hyperparameters& hp) {
  const std::int64_t num_layers = hp.get("N");
  const std::int64_t num_filters = hp.get("F");
  if (num_layers % 3 != 0)
    throw ShapeError("N=" + std::to_string(num_layers) + " is not a multiple of 3");
  if (num_filters % 8 != 0)
    throw ShapeError("F=" + std::to_string(num_filters) + " is not a multiple of 8");
  const std::int64_t res = hp.get("resolution");
  ZooModel m;
  m.input_shape = {3, res, res};
  m.input_dtype = InputDtype::uint8;
  NetBuilder nb;
  Amoeba a(nb);
  Tensor x = nb.input(m.input_shape);

  std::int64_t channels = num_filters / 4;
  nb.begin("stem1", OpClass::conv, x.elements());
  x = a.conv_bn(a.relu(x), conv_spec(channels, 3, 2, 1));
  nb.end(x);

  Tensor latest = x;
  Tensor previous = x;
  bool reduction_prev = false;
  bool first = true;
  auto add_cell = [&](const std::string& name, bool reduction) {
    if (reduction) channels *= 2;
    nb.begin(name, OpClass::conv, latest.elements() + (first ? 0 : previous.elements()));
    const Tensor out = reduction ? a.cell(latest, previous, channels, true, reduction_prev,
                                          kReductionOps, kReductionConcat)
                                 : a.cell(latest, previous, channels, false, reduction_prev,
                                          kNormalOps, kNormalConcat);
    nb.end(out, latest.elements());  // the Sequential hands on (output, this cell's input)
    previous = latest;
    latest = out;
    reduction_prev = reduction;
    first = false;
  };
  add_cell("stem2", true);
  add_cell("stem3", true);
  const std::int64_t repeat = num_layers / 3;
  for (std::int64_t i = 0; i < repeat; ++i)
    add_cell("cell1_normal" + std::to_string(i + 1), false);
  add_cell("cell2_reduction", true);
  for (std::int64_t i = 0; i < repeat; ++i)
    add_cell("cell3_normal" + std::to_string(i + 1), false);
  add_cell("cell4_reduction", true);
  for (std::int64_t i = 0; i < repeat; ++i)
    add_cell("cell5_normal" + std::to_string(i + 1), false);

  nb.begin("classify", OpClass::matmul, latest.elements() + previous.elements());
  Tensor logits = nb.linear(nb.global_avg_pool(latest), hp.get("num_classes"), true);
  nb.loss(logits);
  nb.end(logits);
  m.layers = nb.take_layers();
  return m;
}

}  // namespace trainsim::models
