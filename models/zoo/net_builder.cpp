#include "models/zoo/net_builder.hpp"

#include <algorithm>
#include <utility>

namespace trainsim::models {

namespace {

// Rough per-element operation counts of the non-matmul ops. They are a few percent of a network's
// FLOPs; those ops are bound by memory traffic, which the byte counts capture.
constexpr double kNormFwdFlops = 5;  // statistics (2), normalize (2), affine (1 fused)
constexpr double kNormBwdInputFlops = 8;
constexpr double kNormBwdWeightFlops = 2;  // gamma and beta reductions
constexpr double kSoftmaxFwdFlops = 5;     // max, subtract, exp, sum, divide
constexpr double kSoftmaxBwdFlops = 4;
constexpr double kDropoutFwdFlops = 2;          // draw and compare, scale
constexpr double kLstmGateFlopsPerHidden = 25;  // 3 sigmoids, 2 tanh, 3 products, 1 sum per unit

struct ActivationCost {
  double fwd_flops;
  double bwd_flops;
  bool saves_output;  // PyTorch keeps the result of relu/sigmoid/tanh, the input of the others
};

ActivationCost activation_cost(Activation kind) {
  switch (kind) {
    case Activation::relu:
      return {1, 1, true};
    case Activation::leaky_relu:
      return {2, 2, false};
    case Activation::gelu:
      return {8, 12, false};
    case Activation::silu:
      return {5, 7, false};
    case Activation::sigmoid:
      return {4, 2, true};
    case Activation::tanh:
      return {4, 2, true};
  }
  return {1, 1, true};
}

std::int64_t out_dim(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
  const std::int64_t out = (in + 2 * pad - kernel) / stride + 1;
  if (in + 2 * pad < kernel || out <= 0) {
    throw ShapeError("a feature map of size " + std::to_string(in) +
                     " is too small for a kernel of " + std::to_string(kernel) + " (stride " +
                     std::to_string(stride) + ", padding " + std::to_string(pad) + ")");
  }
  return out;
}

double product(const std::vector<std::int64_t>& shape) {
  double p = 1;
  for (const auto d : shape)
    p *= static_cast<double>(d);
  return p;
}

}  // namespace

double Tensor::elements() const {
  return product(shape);
}

Conv2d conv_spec(std::int64_t out_channels, std::int64_t kernel, std::int64_t stride,
                 std::int64_t pad, bool bias) {
  const std::int64_t p = pad >= 0 ? pad : (kernel - 1) / 2;
  return Conv2d{out_channels, kernel, kernel, stride, stride, p, p, 1, bias};
}

Tensor NetBuilder::make(std::vector<std::int64_t> shape, bool grad) {
  Tensor t;
  t.id = static_cast<int>(saved_.size());
  t.shape = std::move(shape);
  saved_.push_back(false);
  needs_grad_.push_back(grad);
  return t;
}

Tensor NetBuilder::input(std::vector<std::int64_t> shape) {
  return make(std::move(shape), false);
}

bool NetBuilder::needs_grad(const Tensor& t) const {
  return needs_grad_.at(static_cast<std::size_t>(t.id));
}

Layer& NetBuilder::open() {
  if (!open_) throw std::logic_error("NetBuilder: primitive outside begin()/end()");
  return layers_.back();
}

void NetBuilder::begin(std::string name, OpClass op, double input_elements) {
  if (open_)
    throw std::logic_error("NetBuilder: begin() while layer '" + layers_.back().name + "' is open");
  Layer l;
  l.name = std::move(name);
  l.op = op;
  l.input_elements = input_elements;
  layers_.push_back(std::move(l));
  open_ = true;
}

void NetBuilder::end(const Tensor& output, double extra_output_elements) {
  Layer& l = open();
  l.output_shape = output.shape;
  l.output_elements = output.elements() + extra_output_elements;
  open_ = false;
}

void NetBuilder::save(const Tensor& t) {
  auto idx = static_cast<std::size_t>(t.id);
  if (saved_.at(idx)) return;
  saved_[idx] = true;
  open().saved_elements += t.elements();
}

void NetBuilder::add_costs(double fwd_flops, double fwd_macs, double bwd_input_flops,
                           double bwd_weight_flops, std::int64_t params) {
  Layer& l = open();
  l.fwd_flops += fwd_flops;
  l.fwd_macs += fwd_macs;
  l.bwd_input_flops += bwd_input_flops;
  l.bwd_weight_flops += bwd_weight_flops;
  l.params += params;
}

Tensor NetBuilder::conv2d(const Tensor& in, const Conv2d& s) {
  const std::int64_t c_in = in.channels();
  if (s.groups <= 0 || c_in % s.groups != 0 || s.out_channels % s.groups != 0) {
    throw ShapeError("conv with " + std::to_string(c_in) + " input and " +
                     std::to_string(s.out_channels) + " output channels cannot use " +
                     std::to_string(s.groups) + " groups");
  }
  const std::int64_t h = out_dim(in.height(), s.kernel_h, s.stride_h, s.pad_h);
  const std::int64_t w = out_dim(in.width(), s.kernel_w, s.stride_w, s.pad_w);
  Tensor out = make({s.out_channels, h, w}, true);
  const double out_elems = out.elements();
  const double macs = out_elems * static_cast<double>(c_in / s.groups * s.kernel_h * s.kernel_w);
  const double bias_flops = s.bias ? out_elems : 0;
  const std::int64_t params =
      s.out_channels * (c_in / s.groups) * s.kernel_h * s.kernel_w + (s.bias ? s.out_channels : 0);
  add_costs(2 * macs + bias_flops, macs, needs_grad(in) ? 2 * macs : 0, 2 * macs + bias_flops,
            params);
  save(in);
  return out;
}

Tensor NetBuilder::linear(const Tensor& in, std::int64_t out_features, bool bias, bool tied) {
  const std::int64_t in_features = in.features();
  std::vector<std::int64_t> shape = in.shape;
  shape.back() = out_features;
  Tensor out = make(std::move(shape), true);
  const double out_elems = out.elements();
  const double macs = out_elems * static_cast<double>(in_features);
  const double bias_flops = bias ? out_elems : 0;
  add_costs(2 * macs + bias_flops, macs, needs_grad(in) ? 2 * macs : 0, 2 * macs + bias_flops,
            (tied ? 0 : in_features * out_features) + (bias ? out_features : 0));
  save(in);
  return out;
}

Tensor NetBuilder::batch_norm(const Tensor& in) {
  Tensor out = make(in.shape, true);
  const double n = in.elements();
  add_costs(kNormFwdFlops * n, 0, needs_grad(in) ? kNormBwdInputFlops * n : 0,
            kNormBwdWeightFlops * n, 2 * in.channels());
  save(in);
  return out;
}

Tensor NetBuilder::instance_norm(const Tensor& in) {
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(kNormFwdFlops * n, 0, needs_grad(in) ? kNormBwdInputFlops * n : 0, 0, 0);
  save(in);
  return out;
}

Tensor NetBuilder::layer_norm(const Tensor& in) {
  Tensor out = make(in.shape, true);
  const double n = in.elements();
  add_costs(kNormFwdFlops * n, 0, needs_grad(in) ? kNormBwdInputFlops * n : 0,
            kNormBwdWeightFlops * n, 2 * in.features());
  save(in);
  return out;
}

Tensor NetBuilder::activation(const Tensor& in, Activation kind) {
  const ActivationCost c = activation_cost(kind);
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(c.fwd_flops * n, 0, needs_grad(in) ? c.bwd_flops * n : 0, 0, 0);
  save(c.saves_output ? out : in);
  return out;
}

Tensor NetBuilder::dropout(const Tensor& in) {
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(kDropoutFwdFlops * n, 0, needs_grad(in) ? n : 0, 0, 0);
  open().saved_mask_bytes += n;
  return out;
}

Tensor NetBuilder::dropout2d(const Tensor& in) {
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(n, 0, needs_grad(in) ? n : 0, 0, 0);
  open().saved_mask_bytes += static_cast<double>(in.channels());
  return out;
}

Tensor NetBuilder::add(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape) throw std::logic_error("NetBuilder::add: shapes differ");
  Tensor out = make(a.shape, needs_grad(a) || needs_grad(b));
  add_costs(a.elements(), 0, 0, 0, 0);  // the gradient passes through unchanged
  return out;
}

Tensor NetBuilder::mul(const Tensor& a, const Tensor& b) {
  Tensor out = make(a.shape, needs_grad(a) || needs_grad(b));
  const double n = a.elements();
  add_costs(n, 0, (needs_grad(a) ? n : 0) + (needs_grad(b) ? n : 0), 0, 0);
  save(a);
  save(b);
  return out;
}

Tensor NetBuilder::max_pool(const Tensor& in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t pad) {
  Tensor out = make({in.channels(), out_dim(in.height(), kernel, stride, pad),
                     out_dim(in.width(), kernel, stride, pad)},
                    needs_grad(in));
  const double n = out.elements();
  add_costs(n * static_cast<double>(kernel * kernel), 0, needs_grad(in) ? n : 0, 0, 0);
  save(in);  // PyTorch also keeps the argmax indices; not counted
  return out;
}

Tensor NetBuilder::avg_pool(const Tensor& in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t pad) {
  Tensor out = make({in.channels(), out_dim(in.height(), kernel, stride, pad),
                     out_dim(in.width(), kernel, stride, pad)},
                    needs_grad(in));
  const double work = out.elements() * static_cast<double>(kernel * kernel);
  add_costs(work, 0, needs_grad(in) ? work : 0, 0, 0);
  return out;
}

Tensor NetBuilder::adaptive_avg_pool(const Tensor& in, std::int64_t out_h, std::int64_t out_w) {
  if (in.height() == out_h && in.width() == out_w) return in;  // PyTorch returns the input as is
  Tensor out = make({in.channels(), out_h, out_w}, needs_grad(in));
  const double n = std::max(in.elements(), out.elements());
  add_costs(n, 0, needs_grad(in) ? n : 0, 0, 0);
  return out;
}

Tensor NetBuilder::global_avg_pool(const Tensor& in) {
  Tensor out = make({in.channels()}, needs_grad(in));
  const double n = in.elements();
  add_costs(n, 0, needs_grad(in) ? n : 0, 0, 0);
  return out;
}

Tensor NetBuilder::upsample2x(const Tensor& in) {
  Tensor out = make({in.channels(), 2 * in.height(), 2 * in.width()}, needs_grad(in));
  add_costs(0, 0, needs_grad(in) ? out.elements() : 0, 0, 0);  // a copy forward, a sum backward
  return out;
}

Tensor NetBuilder::pad_to(const Tensor& in, std::int64_t h, std::int64_t w) {
  if (in.height() == h && in.width() == w) return in;
  return copy_as(in, {in.channels(), h, w});
}

Tensor NetBuilder::copy_as(const Tensor& in, std::vector<std::int64_t> shape) {
  return make(std::move(shape), needs_grad(in));
}

Tensor NetBuilder::concat(const std::vector<Tensor>& parts) {
  std::vector<std::int64_t> shape = parts.at(0).shape;
  bool grad = false;
  shape[0] = 0;
  for (const auto& p : parts) {
    if (p.shape.size() != shape.size() ||
        !std::equal(p.shape.begin() + 1, p.shape.end(), shape.begin() + 1)) {
      throw std::logic_error("NetBuilder::concat: spatial shapes differ");
    }
    shape[0] += p.shape[0];
    grad = grad || needs_grad(p);
  }
  return make(std::move(shape), grad);
}

Tensor NetBuilder::reshape(const Tensor& in, std::vector<std::int64_t> shape) {
  if (product(shape) != in.elements())
    throw std::logic_error("NetBuilder::reshape: element count differs");
  Tensor out = in;  // same storage, so it is saved at most once
  out.shape = std::move(shape);
  return out;
}

Tensor NetBuilder::take_rows(const Tensor& in, std::int64_t count) {
  std::vector<std::int64_t> shape = in.shape;
  shape.at(0) = count;
  return make(std::move(shape), needs_grad(in));
}

Tensor NetBuilder::embedding(const Tensor& ids, std::int64_t vocab, std::int64_t dim, bool tied) {
  std::vector<std::int64_t> shape = ids.shape;
  shape.push_back(dim);
  Tensor out = make(std::move(shape), true);
  // A gather forward and a scatter-add of the output gradient into the table backward.
  add_costs(0, 0, 0, out.elements(), tied ? 0 : vocab * dim);
  return out;
}

Tensor NetBuilder::attention(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t heads,
                             bool with_dropout, const std::vector<Tensor>& saved_storage) {
  const std::int64_t d = q.features();
  if (heads <= 0 || d % heads != 0) {
    throw ShapeError("a width of " + std::to_string(d) + " cannot be split into " +
                     std::to_string(heads) + " heads");
  }
  const double sq = static_cast<double>(q.shape.at(0));
  const double sk = static_cast<double>(k.shape.at(0));
  const double scores = static_cast<double>(heads) * sq * sk;
  const double macs = 2 * sq * sk * static_cast<double>(d);  // Q K^T and P V
  Tensor out = make(q.shape, true);
  const double dropout_fwd = with_dropout ? kDropoutFwdFlops * scores : 0;
  const double dropout_bwd = with_dropout ? scores : 0;
  add_costs(2 * macs + (kSoftmaxFwdFlops + 1) * scores + dropout_fwd, macs,
            2 * (2 * macs) + kSoftmaxBwdFlops * scores + dropout_bwd, 0, 0);
  for (const auto& t : saved_storage)
    save(t);
  (void)v;
  Layer& l = open();
  l.saved_elements += scores;  // softmax output
  if (with_dropout) {
    l.saved_mask_bytes += scores;
    l.saved_elements += scores;  // dropped-out probabilities, the input of P V
  }
  return out;
}

Tensor NetBuilder::lstm(const Tensor& in, std::int64_t hidden) {
  const double seq = static_cast<double>(in.shape.at(0));
  const auto in_features = in.features();
  const double h = static_cast<double>(hidden);
  const double macs_x = seq * 4 * h * static_cast<double>(in_features);
  const double macs_h = seq * 4 * h * h;
  const double gate_flops = seq * kLstmGateFlopsPerHidden * h;
  const double bias_flops = seq * 8 * h;
  Tensor out = make({in.shape.at(0), hidden}, true);
  add_costs(2 * (macs_x + macs_h) + bias_flops + gate_flops, macs_x + macs_h,
            (needs_grad(in) ? 2 * macs_x : 0) + 2 * macs_h + gate_flops,
            2 * (macs_x + macs_h) + bias_flops, 4 * hidden * (in_features + hidden) + 8 * hidden);
  save(in);
  open().saved_elements +=
      seq * 6 * h;  // gate activations (4h), cell state and tanh(cell) per step
  save(out);        // h_{t-1} feeds the recurrent weight gradient
  return out;
}

void NetBuilder::loss(const Tensor& logits) {
  const double n = logits.elements();
  add_costs(kSoftmaxFwdFlops * n, 0, kSoftmaxBwdFlops * n, 0, 0);
  open().saved_elements += n;  // the probabilities
}

std::vector<Layer> NetBuilder::take_layers() {
  if (open_) throw std::logic_error("NetBuilder: layer '" + layers_.back().name + "' left open");
  return std::move(layers_);
}

Tensor conv_entry(NetBuilder& nb, const std::string& name, const Tensor& in, const Conv2d& spec) {
  return single_entry(nb, name, OpClass::conv, in,
                      [&](const Tensor& x) { return nb.conv2d(x, spec); });
}

Tensor bn_entry(NetBuilder& nb, const std::string& name, const Tensor& in) {
  return single_entry(nb, name, OpClass::normalization, in,
                      [&](const Tensor& x) { return nb.batch_norm(x); });
}

Tensor relu_entry(NetBuilder& nb, const std::string& name, const Tensor& in) {
  return single_entry(nb, name, OpClass::elementwise, in,
                      [&](const Tensor& x) { return nb.activation(x, Activation::relu); });
}

Tensor conv_bn_relu(NetBuilder& nb, const Tensor& in, const Conv2d& spec) {
  return nb.activation(nb.batch_norm(nb.conv2d(in, spec)), Activation::relu);
}

std::vector<Layer> finish_with_linear_head(NetBuilder& nb, const std::string& name,
                                           const Tensor& in, std::int64_t outputs) {
  nb.begin(name, OpClass::matmul, in.elements());
  const Tensor logits = nb.linear(in, outputs, true);
  nb.loss(logits);
  nb.end(logits);
  return nb.take_layers();
}

// ---- added for zoo coverage ----

namespace {

// estimate: RMSNorm per element, by the same counting as kNormFwdFlops: square and sum (2),
// normalize (1), scale (1); backward to the input about 6, the scale's gradient a product and a
// reduction (2).
constexpr double kRmsNormFwdFlops = 4;
constexpr double kRmsNormBwdInputFlops = 6;
constexpr double kRmsNormBwdWeightFlops = 2;
// paper: Su et al. 2021 (RoFormer), Eq. 34: x * cos + rotate_half(x) * sin, 2 products and 1 sum
// per element, the same backward.
constexpr double kRotaryFlops = 3;

}  // namespace

Tensor NetBuilder::rms_norm(const Tensor& in) {
  Tensor out = make(in.shape, true);
  const double n = in.elements();
  add_costs(kRmsNormFwdFlops * n, 0, needs_grad(in) ? kRmsNormBwdInputFlops * n : 0,
            kRmsNormBwdWeightFlops * n, in.features());
  save(in);
  return out;
}

Tensor NetBuilder::concat_features(const std::vector<Tensor>& parts) {
  std::vector<std::int64_t> shape = parts.at(0).shape;
  bool grad = false;
  shape.back() = 0;
  for (const auto& p : parts) {
    if (p.shape.size() != shape.size() ||
        !std::equal(p.shape.begin(), p.shape.end() - 1, shape.begin())) {
      throw std::logic_error("NetBuilder::concat_features: leading shapes differ");
    }
    shape.back() += p.shape.back();
    grad = grad || needs_grad(p);
  }
  return make(std::move(shape), grad);
}

Tensor NetBuilder::rotary(const Tensor& in) {
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(kRotaryFlops * n, 0, needs_grad(in) ? kRotaryFlops * n : 0, 0, 0);
  return out;
}

Tensor NetBuilder::conv_transpose1d(const Tensor& in, std::int64_t out_channels,
                                    std::int64_t kernel, std::int64_t stride, bool bias) {
  const std::int64_t c_in = in.channels();
  const std::int64_t length = (in.width() - 1) * stride + kernel;
  Tensor out = make({out_channels, 1, length}, true);
  // Every input element meets every output channel through every kernel tap.
  const double macs = in.elements() * static_cast<double>(out_channels * kernel);
  const double bias_flops = bias ? out.elements() : 0;
  add_costs(2 * macs + bias_flops, macs, needs_grad(in) ? 2 * macs : 0, 2 * macs + bias_flops,
            c_in * out_channels * kernel + (bias ? out_channels : 0));
  save(in);
  return out;
}

void NetBuilder::weight_norm(std::int64_t out_channels) {
  add_costs(0, 0, 0, 0, out_channels);
}

void NetBuilder::attention_score_bias(std::int64_t heads, std::int64_t seq_q, std::int64_t seq_k,
                                      std::int64_t table_rows) {
  const double scores =
      static_cast<double>(heads) * static_cast<double>(seq_q) * static_cast<double>(seq_k);
  // A gather from the table (only where it is computed) and an add to every score; backward the
  // add passes the gradient on, and the table receives a scatter-add of it.
  add_costs(scores, 0, 0, table_rows > 0 ? scores : 0, table_rows > 0 ? table_rows * heads : 0);
}

void NetBuilder::relative_position_scores(const Tensor& q, const Tensor& r_k, std::int64_t heads,
                                          bool owns_biases) {
  const std::int64_t d = q.features();
  const double sq = static_cast<double>(q.shape.at(0));
  const double sk = static_cast<double>(r_k.shape.at(0));
  const double scores = static_cast<double>(heads) * sq * sk;
  const double macs = sq * sk * static_cast<double>(d);  // (q + v) r_k^T
  const double shifts = 2 * q.elements();                // q + u and q + v
  // Forward: the two shifted queries, the position matmul, the relative shift (a copy) and the sum
  // with the content scores. Backward: the matmul's two input gradients and the reductions that
  // give u's and v's gradients.
  add_costs(shifts + 2 * macs + scores, macs, (needs_grad(q) ? 2 * macs : 0) + 2 * macs, shifts,
            owns_biases ? 2 * d : 0);
  save(make(q.shape, true));  // q + u, the content matmul's input
  save(make(q.shape, true));  // q + v
  save(r_k);
}

Tensor NetBuilder::additive_attention(const Tensor& query, const Tensor& keys, const Tensor& values,
                                      const Tensor* extra, std::int64_t score_params) {
  const double sq = static_cast<double>(query.shape.at(0));
  const double sk = static_cast<double>(keys.shape.at(0));
  const double n = sq * sk * static_cast<double>(query.features());  // one tanh per pair and unit
  const double probs = sq * sk;
  const double context_macs = probs * static_cast<double>(values.features());
  const ActivationCost tanh = activation_cost(Activation::tanh);
  const double adds = (extra != nullptr ? 2 : 1) * n;
  Tensor out = make({query.shape.at(0), values.features()}, true);
  // Forward: the broadcast sums, tanh, the dot with the score vector (n multiply-adds), softmax
  // over the keys and the context matmul. Backward: tanh's and the dot's gradients, the sums
  // reduced back to the query and the keys (and the extra term), softmax, and the context matmul's
  // two input gradients; the score vector's gradient is one more reduction of n.
  add_costs(adds + tanh.fwd_flops * n + 2 * n + kSoftmaxFwdFlops * probs + 2 * context_macs,
            n + context_macs,
            tanh.bwd_flops * n + 2 * n + adds + kSoftmaxBwdFlops * probs + 4 * context_macs, 2 * n,
            score_params);
  save(make({static_cast<std::int64_t>(n)}, true));  // tanh's output
  open().saved_elements += probs;                    // the attention probabilities
  save(values);
  return out;
}

void NetBuilder::describe_transformer(const TransformerEntryInfo& info) {
  open().transformer = info;
}

// ---- end of additions for zoo coverage ----

}  // namespace trainsim::models
