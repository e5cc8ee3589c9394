#pragma once
// Builds a zoo model's layer list from primitive ops (conv, linear, norm, ...), so the generators
// state architectures and never repeat cost formulas. Each primitive adds to the layer entry that
// is open its per-sample costs and the kernels a framework launches for it, forward and backward
// (PyTorch eager with cuDNN/cuBLAS: a conv is a forward, a data-gradient and a weight-gradient
// kernel; a norm is its own memory-bound kernel; a view launches nothing). Tensors carry an id so
// that an activation needed by several backward passes is counted as saved once, and so that the
// data (which needs no gradient) costs no input-gradient work.

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/zoo/zoo_model.hpp"

namespace trainsim::models {

// A per-sample activation: {C, H, W} for images, {seq, features} for sequences.
struct Tensor {
  int id = -1;
  std::vector<std::int64_t> shape;

  double elements() const;
  std::int64_t channels() const { return shape.at(0); }
  std::int64_t height() const { return shape.at(1); }
  std::int64_t width() const { return shape.at(2); }
  std::int64_t features() const { return shape.back(); }
};

// A hyper-parameter combination whose shapes do not work out (e.g. a feature map shrinks to 0).
class ShapeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Conv2d {
  std::int64_t out_channels = 0;
  std::int64_t kernel_h = 1;
  std::int64_t kernel_w = 1;
  std::int64_t stride_h = 1;
  std::int64_t stride_w = 1;
  std::int64_t pad_h = 0;
  std::int64_t pad_w = 0;
  std::int64_t groups = 1;
  bool bias = false;
  // Spacing between the filter's taps (atrous / dilated convolution, WaveNet's and WaveGlow's
  // layers): the filter spans dilation x (kernel - 1) + 1 positions with the same taps.
  std::int64_t dilation_h = 1;
  std::int64_t dilation_w = 1;
};

// Square kernel, same stride and padding both ways; padding defaults to "same" for odd kernels.
Conv2d conv_spec(std::int64_t out_channels, std::int64_t kernel, std::int64_t stride = 1,
                 std::int64_t pad = -1, bool bias = false);

// gelu_new: the tanh approximation of GELU as Hugging Face transformers' GPT-2 computes it,
// eight eager ops (transformers/activations.py, NewGELUActivation) rather than one kernel.
enum class Activation { relu, leaky_relu, gelu, silu, sigmoid, tanh, gelu_new };

// How an LSTM's input enters its gates (cuDNN's cudnnRNNInputMode_t): through an input weight
// matrix (CUDNN_LINEAR_INPUT, PyTorch's and TensorFlow's LSTMs), or added to the gates as it is
// (CUDNN_SKIP_INPUT, which needs inputs as wide as the hidden state; DeepBench's rnn_bench times
// this mode: baidu-research/DeepBench code/nvidia/rnn_bench.cu).
enum class LstmInput { linear, skip };

class NetBuilder {
 public:
  // The model input, which needs no gradient (or does: a kernel benchmark's data-gradient).
  Tensor input(std::vector<std::int64_t> shape, bool needs_grad = false);

  // Opens a layer entry; every primitive until end() is charged to it. `input_elements` is what
  // enters the entry (all tensors handed over from the previous entry).
  void begin(std::string name, OpClass op, double input_elements);
  // Closes the entry; `output` is its main result, `extra_output_elements` counts further tensors
  // handed to the next entry (e.g. a skip state).
  void end(const Tensor& output, double extra_output_elements = 0);

  Tensor conv2d(const Tensor& in, const Conv2d& spec);
  // Acts on the last dimension; all leading dimensions are rows. A `tied` weight belongs to another
  // entry (e.g. a language-model head sharing the token embedding): costs count, parameters do not.
  Tensor linear(const Tensor& in, std::int64_t out_features, bool bias, bool tied = false);
  Tensor batch_norm(const Tensor& in);     // per channel (dim 0), affine
  Tensor instance_norm(const Tensor& in);  // per channel, no affine parameters (PyTorch default)
  Tensor layer_norm(const Tensor& in);     // over the last dimension, affine
  Tensor activation(const Tensor& in, Activation kind);
  Tensor dropout(const Tensor& in);
  Tensor dropout2d(const Tensor& in);  // whole channels dropped: a mask of C per sample
  Tensor add(const Tensor& a, const Tensor& b);
  // a * b where b broadcasts over a's trailing dimensions (e.g. squeeze-excitation scale {C}).
  Tensor mul(const Tensor& a, const Tensor& b);
  Tensor max_pool(const Tensor& in, std::int64_t kernel, std::int64_t stride, std::int64_t pad = 0);
  Tensor avg_pool(const Tensor& in, std::int64_t kernel, std::int64_t stride, std::int64_t pad = 0);
  Tensor adaptive_avg_pool(const Tensor& in, std::int64_t out_h, std::int64_t out_w);
  Tensor global_avg_pool(const Tensor& in);  // {C, H, W} -> {C}
  Tensor upsample2x(const Tensor& in);       // nearest neighbour
  Tensor pad_to(const Tensor& in, std::int64_t h, std::int64_t w);
  // Data movement only (slicing, strided subsampling, zero padding) into a new tensor of `shape`.
  Tensor copy_as(const Tensor& in, std::vector<std::int64_t> shape);
  // Inside repeat(): this iteration's slice of a tensor made before the loop (Python's x[i]), a
  // view forward; backward materialises the whole tensor's gradient every iteration.
  Tensor loop_slice(const Tensor& whole, std::vector<std::int64_t> shape);
  Tensor concat(const std::vector<Tensor>& parts);                    // along dim 0 (channels)
  Tensor reshape(const Tensor& in, std::vector<std::int64_t> shape);  // a view: same storage
  // Slices `count` rows of the first dimension (e.g. BERT's [CLS] token); a view.
  Tensor take_rows(const Tensor& in, std::int64_t count);
  // Token ids {seq} -> {seq, dim}; a `tied` table belongs to another entry.
  Tensor embedding(const Tensor& ids, std::int64_t vocab, std::int64_t dim, bool tied = false);
  // Scaled dot-product attention. `q` is {seq_q, d}; `k` and `v` may be views of one projection
  // tensor `kv_storage` (saved once). With `causal` (a decoder's self-attention, each position
  // attending to itself and earlier ones) the fused kernels skip the key blocks wholly above the
  // diagonal; unfused attention computes the whole score matrix and masks it.
  Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t heads,
                   bool dropout, const std::vector<Tensor>& saved_storage, bool causal = false);
  // One LSTM layer over a sequence {seq, in} -> {seq, hidden} (PyTorch: two bias vectors).
  Tensor lstm(const Tensor& in, std::int64_t hidden, LstmInput input = LstmInput::linear);
  // Softmax cross-entropy (or any pointwise loss) over the logits; keeps them for backward.
  void loss(const Tensor& logits);

  std::vector<Layer> take_layers();

  // A loop whose body runs `count` times per sample, one iteration after another (an
  // autoregressive decoder): primitives between begin_repeat and end_repeat take per-iteration
  // tensors; their kernels are launched `count` times, their work and saved activations count
  // `count` times, their parameters once.
  void begin_repeat(std::int64_t count);
  void end_repeat();

  // The model is written for TensorFlow 1's graph ops (NVIDIA DeepLearningExamples' TensorFlow
  // scripts): dropout is tf.nn.dropout's five ops (and two backward), Transformer-XL's relative
  // attention is its TF script's op sequence (relative_position_scores).
  void set_tf1_graph(bool on) { tf1_graph_ = on; }

 private:
  Tensor make(std::vector<std::int64_t> shape, bool needs_grad);
  Layer& open();
  void save(const Tensor& t);
  bool needs_grad(const Tensor& t) const;
  void add_costs(double fwd_flops, double fwd_macs, double bwd_input_flops, double bwd_weight_flops,
                 std::int64_t params, int param_tensors = 0);
  // The open entry's op takes these fp32 parameters in 16 bits under autocast (Layer::cast_params).
  void autocast_params(std::int64_t params, int tensors);
  // Kernels of the open entry: forward ones in call order; each primitive's backward kernels form
  // a group (in the order autograd runs them), and end() lays the groups out in reverse.
  void fwd(const KernelSpec& k);
  void bwd_group();
  void bwd(const KernelSpec& k);
  // layer_norm's kernels over n elements of f features as TF1's tf.contrib.layers.layer_norm
  // runs them (net_builder.cpp).
  void tf1_layer_norm(double n, double f, bool input_grad);

  std::vector<bool> saved_;
  std::vector<bool> needs_grad_;
  std::vector<Layer> layers_;
  std::vector<std::vector<KernelSpec>> bwd_groups_;  // of the open entry (or the next one)
  std::vector<KernelSpec> pending_fwd_;              // launched before the next entry begins
  bool open_ = false;
  int repeat_ = 1;
  bool tf1_graph_ = false;

  // ---- added for zoo coverage ----
 public:
  // RMSNorm (Zhang & Sennrich 2019) over the last dimension: a learned scale, no shift and no mean
  // (Llama's RMSNorm, T5's T5LayerNorm).
  Tensor rms_norm(const Tensor& in);
  // Concatenation along the last dimension (the two directions of a bidirectional LSTM, an LSTM
  // input joined with an attention context, NeuMF's two towers).
  Tensor concat_features(const std::vector<Tensor>& parts);
  // Rotary position embedding (Su et al. 2021, RoFormer, Eq. 34) applied to q or k: two products
  // and a sum per element with constant cos/sin tables, so nothing is kept for backward.
  Tensor rotary(const Tensor& in);
  // One step of TensorFlow 1's unfused LSTM cell, {1, in} -> {1, hidden}, as a TF1 graph runs
  // it inside tf.nn.dynamic_rnn's while loop: every graph op of tf.nn.rnn_cell.LSTMCell is its
  // own kernel (use inside begin_repeat for the steps).
  Tensor tf_lstm_cell(const Tensor& in, std::int64_t hidden);
  // tf.nn.dynamic_rnn with sequence_length selects, every step, each state tensor and the output
  // between the new value and the old one (array_ops.where): one kernel per tensor forward and
  // two backward. Use inside begin_repeat.
  void dynamic_rnn_copy_through(const std::vector<Tensor>& state);
  // ConvTranspose1d over {C, 1, L}: the length becomes (L - 1) * stride + kernel.
  Tensor conv_transpose1d(const Tensor& in, std::int64_t out_channels, std::int64_t kernel,
                          std::int64_t stride, bool bias);
  // Weight normalisation (Salimans & Kingma 2016) of a layer with `out_channels` output rows: the
  // magnitudes g are extra parameters. Recomputing w = g v / |v| happens once per step, not per
  // sample, so it adds no per-sample work.
  void weight_norm(std::int64_t out_channels);
  // A learned bias added to the attention scores {heads, seq_q, seq_k} (T5's relative position
  // bias, Raffel et al. 2020, Sec. 2.1). The entry that computes it from the bucket table
  // (`table_rows` > 0 buckets) holds the table and its gradient scatter.
  void attention_score_bias(std::int64_t heads, std::int64_t seq_q, std::int64_t seq_k,
                            std::int64_t table_rows);
  // Transformer-XL's relative position terms (Dai et al. 2019, Sec. 3.3, terms (b) and (d)): the
  // queries shifted by the global biases u and v, (q + v) r_k^T over heads, the relative shift and
  // the sum with the content scores. `q` is {seq, d}, `r_k` {klen, d}; the content scores
  // (q + u) k^T are the attention primitive's. `owns_biases` puts u and v in this entry.
  void relative_position_scores(const Tensor& q, const Tensor& r_k, std::int64_t heads,
                                bool owns_biases);
  // Additive attention (Bahdanau et al. 2015): scores = w . tanh(query_i + key_j [+ extra_ij]),
  // softmax over keys, context = probabilities x values. `query` is {seq_q, a}, `keys` {seq_k, a}
  // (already projected), `values` {seq_k, dv}; `extra` (seq_q * seq_k * a elements) is a further
  // term such as Tacotron 2's location features. `score_params` are the score vector's parameters
  // (w, plus GNMT's normalisation scalar and bias). Returns the context {seq_q, dv}.
  Tensor additive_attention(const Tensor& query, const Tensor& keys, const Tensor& values,
                            const Tensor* extra, std::int64_t score_params);
  // Records the tensor-parallel structure of the open entry (transformer entries only).
  void describe_transformer(const TransformerEntryInfo& info);
  // ---- end of additions for zoo coverage ----

  // ---- tensor parallelism (Megatron-LM: Shoeybi et al. 2019, Sec. 3 and Fig. 3; sequence
  // parallelism: Korthikanti et al. 2022, Sec. 4.2.2 and Fig. 5) ----
  // The collectives one rank runs, recorded in the open entry's tp_fwd and tp_bwd (backward ones
  // in the order autograd runs them, as the kernels). No kernels: the collectives run on the
  // communication stream. `p.tp` == 1 makes every one of these an identity that records nothing.
  //
  // Entering a tensor-parallel region (Megatron's f, the input of a column-parallel layer): without
  // sequence parallelism an identity forward and an allreduce of the input gradient backward; with
  // it an all-gather of the sequence shards forward and a reduce-scatter of the gradient backward.
  // Under sequence parallelism the gathered tensor, where saved for backward, is kept as the
  // shard `in`, which backward gathers again before the weight gradient (paper: NVIDIA/Megatron-LM
  // @960c06b megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsync-
  // Communication.backward: all-gathers the saved input, overlapped with the input gradient).
  Tensor tp_enter(const Tensor& in, const TensorParallelism& p, const char* fwd_what,
                  const char* bwd_what);
  // Leaving it (Megatron's g, the output of a row-parallel layer): an allreduce forward and an
  // identity backward; with sequence parallelism a reduce-scatter forward ({s, d} -> {s/tp, d})
  // and an all-gather of the gradient backward.
  Tensor tp_exit(const Tensor& in, const TensorParallelism& p, const char* fwd_what,
                 const char* bwd_what);
  // With sequence parallelism: the rank's sequence shard of a replicated tensor (Megatron's
  // scatter_to_sequence_parallel_region: a slice forward, an all-gather of the gradient backward).
  // Without: `in` itself.
  Tensor tp_scatter_sequence(const Tensor& in, const TensorParallelism& p, const char* bwd_what);
  // With sequence parallelism: the whole sequence of a sharded tensor for a replicated consumer
  // (gather_from_sequence_parallel_region with tensor_parallel_output_grad=False: an all-gather
  // forward, a slice of the gradient backward). Without: `in` itself.
  Tensor tp_gather_sequence(const Tensor& in, const TensorParallelism& p, const char* fwd_what);
  // A forward allreduce of `elements` per sample after the entry's kernels (the statistics of
  // the vocabulary-parallel cross entropy).
  void tp_allreduce(double elements, const char* what);

 private:
  void tp_record(std::vector<TpCollective>& into, TpCollectiveOp op, double elements, bool at_start,
                 const char* what);
  std::vector<std::vector<TpCollective>> tp_bwd_groups_;  // of the open entry, as bwd_groups_
  std::map<int, Tensor> saved_as_;  // gathered tensor id -> the shard kept for backward instead
};

// An entry holding the primitives `f` applies to `in`; returns its output.
template <typename F>
Tensor single_entry(NetBuilder& nb, const std::string& name, OpClass op, const Tensor& in, F f) {
  nb.begin(name, op, in.elements());
  Tensor out = f(in);
  nb.end(out);
  return out;
}

Tensor conv_entry(NetBuilder& nb, const std::string& name, const Tensor& in, const Conv2d& spec);
Tensor bn_entry(NetBuilder& nb, const std::string& name, const Tensor& in);
Tensor relu_entry(NetBuilder& nb, const std::string& name, const Tensor& in);
// Conv, batch norm and ReLU as one entry of class conv (torchvision's BasicConv2d and the like).
Tensor conv_bn_relu(NetBuilder& nb, const Tensor& in, const Conv2d& spec);
// The last entry of a classifier or language model: a linear layer (with bias) to `outputs`
// logits and the loss. Returns the finished layer list.
std::vector<Layer> finish_with_linear_head(NetBuilder& nb, const std::string& name,
                                           const Tensor& in, std::int64_t outputs);

}  // namespace trainsim::models
