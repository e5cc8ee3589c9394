// EfficientNet-B0..B4 as torchvision builds them (Tan & Le 2019): channels scaled by the width
// multiplier and rounded to multiples of 8, block repeats scaled by the depth multiplier and
// rounded up. Each MBConv block is split into up to four entries (expand, dwconv, se, project)
// so that the memory-bound depthwise part keeps its own op class; names keep the torchvision
// block path (features.<stage>.<block>), so per-block grouping stays possible.
//
// group_dim > 1 replaces each depthwise conv by a grouped conv with group_dim channels per group
// (G16-EfficientNet of Masters et al. 2021 uses 16 and lowers expand_ratio from 6 to 4, the
// setting of Graphcore's efficientnet-g16 configs). group_dim = 1 is the depthwise original. See
// group_count for channel counts that group_dim does not divide.
#include <cmath>
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

namespace {

struct StageConfig {
  std::int64_t expand_ratio;  // 0: use the model's expand_ratio
  std::int64_t kernel;
  std::int64_t stride;
  std::int64_t in_channels;
  std::int64_t out_channels;
  std::int64_t repeats;
};

// EfficientNet-B0 (Tan & Le 2019, Table 1); the first stage never expands.
constexpr StageConfig kB0Stages[] = {
    {1, 3, 1, 32, 16, 1},  {0, 3, 2, 16, 24, 2},   {0, 5, 2, 24, 40, 2},   {0, 3, 2, 40, 80, 3},
    {0, 5, 1, 80, 112, 3}, {0, 5, 2, 112, 192, 4}, {0, 3, 1, 192, 320, 1},
};

struct Scaling {
  double width;
  double depth;
};
constexpr Scaling kScaling[] = {{1.0, 1.0}, {1.0, 1.1}, {1.1, 1.2}, {1.2, 1.4}, {1.4, 1.8}};

// torchvision's _make_divisible: nearest multiple of 8, never more than 10% below the target.
std::int64_t make_divisible(double v) {
  std::int64_t rounded = std::max<std::int64_t>(8, static_cast<std::int64_t>(v + 4) / 8 * 8);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += 8;
  return rounded;
}

// Groups of `group_dim` channels; where that does not divide the channel count (B4's 24-channel
// first stage with group_dim 16) the divisor of the channel count nearest to channels/group_dim,
// preferring more, smaller groups (24 channels -> 2 groups of 12).
std::int64_t group_count(std::int64_t channels, std::int64_t group_dim) {
  const double target = static_cast<double>(channels) / static_cast<double>(group_dim);
  std::int64_t best = 1;
  for (std::int64_t g = 1; g <= channels; ++g) {
    if (channels % g != 0) continue;
    if (std::abs(static_cast<double>(g) - target) <= std::abs(static_cast<double>(best) - target))
      best = g;
  }
  return best;
}

Tensor silu(NetBuilder& nb, const Tensor& t) {
  return nb.activation(t, Activation::silu);
}

}  // namespace

ZooModel make_efficientnet(const Hyperparameters& hp, int variant) {
  const Scaling s = kScaling[variant];
  const std::int64_t res = hp.get("resolution");
  const std::int64_t group_dim = hp.get("group_dim");
  const std::int64_t expand_ratio = hp.get("expand_ratio");
  ZooModel m;
  m.input_shape = {3, res, res};
  m.input_dtype = InputDtype::uint8;
  NetBuilder nb;
  Tensor x = nb.input(m.input_shape);
  const std::int64_t stem = make_divisible(32 * s.width);
  x = single_entry(nb, "features.0", OpClass::conv, x, [&](const Tensor& t) {
    return silu(nb, nb.batch_norm(nb.conv2d(t, conv_spec(stem, 3, 2))));
  });
  int stage_index = 1;
  for (const StageConfig& st : kB0Stages) {
    const std::int64_t out_c = make_divisible(static_cast<double>(st.out_channels) * s.width);
    const auto repeats =
        static_cast<std::int64_t>(std::ceil(static_cast<double>(st.repeats) * s.depth));
    const std::int64_t ratio = st.expand_ratio != 0 ? st.expand_ratio : expand_ratio;
    for (std::int64_t b = 0; b < repeats; ++b) {
      const std::string p =
          "features." + std::to_string(stage_index) + "." + std::to_string(b) + ".";
      const Tensor block_in = x;
      const std::int64_t in_c = x.channels();
      const std::int64_t stride = b == 0 ? st.stride : 1;
      const std::int64_t expanded = make_divisible(static_cast<double>(in_c * ratio));
      const bool residual = stride == 1 && in_c == out_c;
      // The project entry also reads the block input for the residual. Like torchgpipe's skip
      // connections, that tensor is not counted in the outputs of the entries in between.
      const double carried = residual ? block_in.elements() : 0;
      auto sub_entry = [&](const std::string& name, OpClass op, auto f) {
        nb.begin(p + name, op, x.elements());
        x = f(x);
        nb.end(x);
      };
      if (expanded != in_c) {
        sub_entry("expand", OpClass::conv, [&](const Tensor& t) {
          return silu(nb, nb.batch_norm(nb.conv2d(t, conv_spec(expanded, 1))));
        });
      }
      const bool depthwise = group_dim == 1;
      Conv2d dw = conv_spec(expanded, st.kernel, stride);
      dw.groups = depthwise ? expanded : group_count(expanded, group_dim);
      sub_entry("dwconv", depthwise ? OpClass::depthwise_conv : OpClass::grouped_conv,
                [&](const Tensor& t) { return silu(nb, nb.batch_norm(nb.conv2d(t, dw))); });
      const std::int64_t squeeze = std::max<std::int64_t>(1, in_c / 4);
      sub_entry("se", OpClass::elementwise, [&](const Tensor& t) {
        const Tensor pooled = nb.global_avg_pool(t);
        const Tensor scale =
            nb.activation(nb.linear(silu(nb, nb.linear(pooled, squeeze, true)), expanded, true),
                          Activation::sigmoid);
        return nb.mul(t, scale);
      });
      nb.begin(p + "project", OpClass::conv, x.elements() + carried);
      x = nb.batch_norm(nb.conv2d(x, conv_spec(out_c, 1)));
      if (residual) x = nb.add(x, block_in);  // stochastic depth is not modelled
      nb.end(x);
    }
    ++stage_index;
  }
  const std::int64_t head = 4 * x.channels();
  x = single_entry(
      nb, "features." + std::to_string(stage_index), OpClass::conv, x,
      [&](const Tensor& t) { return silu(nb, nb.batch_norm(nb.conv2d(t, conv_spec(head, 1)))); });
  x = single_entry(nb, "avgpool", OpClass::pooling, x,
                   [&](const Tensor& t) { return nb.global_avg_pool(t); });
  x = single_entry(nb, "classifier.0", OpClass::elementwise, x,
                   [&](const Tensor& t) { return nb.dropout(t); });
  m.layers = finish_with_linear_head(nb, "classifier.1", x, hp.get("num_classes"));
  return m;
}

}  // namespace trainsim::models
