#include "models/zoo/transformer_blocks.hpp"

#include <stdexcept>

namespace trainsim::models {

namespace {

std::int64_t head_dim_of(const TransformerDims& dims) {
  return dims.head_dim > 0 ? dims.head_dim : dims.d_model / dims.heads;
}

std::int64_t kv_heads_of(const TransformerDims& dims) {
  return dims.kv_heads > 0 ? dims.kv_heads : dims.heads;
}

}  // namespace

void check_transformer_dims(const TransformerDims& dims) {
  if (dims.head_dim == 0 && dims.d_model % dims.heads != 0) {
    throw ShapeError("heads=" + std::to_string(dims.heads) +
                     " does not divide d_model=" + std::to_string(dims.d_model));
  }
  if (dims.kv_heads > 0 && dims.heads % dims.kv_heads != 0) {
    throw ShapeError("kv_heads=" + std::to_string(dims.kv_heads) +
                     " does not divide heads=" + std::to_string(dims.heads));
  }
  // Rotary embeddings rotate the separate Q and K projections (attention_entry).
  if (dims.rotary && !dims.separate_qkv)
    throw std::logic_error("TransformerDims: rotary needs separate_qkv");
}

Tensor transformer_norm(NetBuilder& nb, const Tensor& x, const TransformerDims& dims) {
  return dims.norm == NormKind::rms_norm ? nb.rms_norm(x) : nb.layer_norm(x);
}

void mark_vocab_entry(NetBuilder& nb, TransformerPart part, std::int64_t d_model, std::int64_t seq,
                      std::int64_t vocab, const TensorParallelism& parallel) {
  TransformerEntryInfo info;
  info.part = part;
  info.d_model = d_model;
  info.seq = seq;
  info.vocab = vocab;
  info.parallel = parallel;
  nb.describe_transformer(info);
}

std::int64_t tp_padded_vocab(std::int64_t vocab, std::int64_t tp) {
  if (tp == 1) return vocab;
  // paper: NVIDIA/Megatron-LM, --make-vocab-size-divisible-by defaults to 128 (a multiple that
  // keeps the logits GEMM's width aligned for tensor cores).
  constexpr std::int64_t kVocabMultiple = 128;
  const std::int64_t multiple = kVocabMultiple * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

Tensor vocab_parallel_embedding(NetBuilder& nb, const Tensor& ids, std::int64_t vocab,
                                std::int64_t d_model, bool tied, const TensorParallelism& p,
                                bool reduce_scatter) {
  if (p.tp == 1) return nb.embedding(ids, vocab, d_model, tied);
  const Tensor partial = nb.embedding(ids, tp_padded_vocab(vocab, p.tp) / p.tp, d_model, tied);
  if (reduce_scatter && p.sequence_parallel) {
    return nb.tp_exit(partial, p, "embedding reduce-scatter", "embedding grad all-gather");
  }
  return nb.tp_exit(partial, TensorParallelism{p.tp, false}, "embedding allreduce", "");
}

Tensor vocab_parallel_head(NetBuilder& nb, const Tensor& x, std::int64_t vocab, bool tied,
                           const TensorParallelism& p) {
  const Tensor in =
      nb.tp_enter(x, p, "lm head in all-gather",
                  p.sequence_parallel ? "lm head dgrad reduce-scatter" : "lm head dgrad allreduce");
  const Tensor logits = nb.linear(in, tp_padded_vocab(vocab, p.tp) / p.tp, false, tied);
  nb.loss(logits);
  if (p.tp > 1) {
    const double tokens = logits.elements() / static_cast<double>(logits.features());
    nb.tp_allreduce(tokens, "cross entropy max allreduce");
    nb.tp_allreduce(tokens, "cross entropy target allreduce");
    nb.tp_allreduce(tokens, "cross entropy sum allreduce");
  }
  return logits;
}

Tensor attention_entry(NetBuilder& nb, const std::string& name, const Tensor& x,
                       const TransformerDims& dims, NormPlacement norm, const Tensor* memory,
                       double extra_output_elements, const AttentionExtras& extras) {
  const TensorParallelism& tp = dims.parallel;
  const bool sp = tp.sequence_parallel;
  const std::int64_t d = dims.d_model;
  // One rank's heads: QKV is column-parallel, so its share of the query and key/value heads.
  const std::int64_t heads = dims.heads / tp.tp;
  const std::int64_t head_dim = head_dim_of(dims);
  const std::int64_t q_width = heads * head_dim;
  const std::int64_t kv_width = kv_heads_of(dims) / tp.tp * head_dim;
  nb.begin(name, OpClass::attention, x.elements() + extra_output_elements);
  const Tensor h =
      nb.tp_enter(norm == NormPlacement::pre ? transformer_norm(nb, x, dims) : x, tp,
                  "qkv in all-gather", sp ? "qkv dgrad reduce-scatter" : "qkv dgrad allreduce");
  const std::int64_t seq = h.shape.at(0);
  Tensor ctx;
  std::int64_t kv_seq = 0;
  if (memory == nullptr) {
    // Transformer-XL projects the cached states together with the segment (Dai et al. 2019,
    // Sec. 3.2); the cache carries no gradient.
    const Tensor src = dims.memory_len > 0 ? nb.concat({nb.input({dims.memory_len, d}), h}) : h;
    kv_seq = src.shape.at(0);
    Tensor q;
    Tensor k;
    Tensor v;
    std::vector<Tensor> kept;
    if (dims.separate_qkv) {
      // Separate projections (as Llama's q_proj, k_proj, v_proj or BERT's query, key, value);
      // attention keeps the (rotated) queries and keys, and the values.
      q = nb.linear(h, q_width, dims.attention_bias);
      if (dims.rotary) q = nb.rotary(q);
      k = nb.linear(src, kv_width, dims.attention_bias);
      if (dims.rotary) k = nb.rotary(k);
      v = nb.linear(src, kv_width, dims.attention_bias);
      kept = {q, k, v};
    } else {
      // One fused projection; Q, K and V are views of its output, which attention keeps once.
      const Tensor qkv = nb.linear(src, q_width + 2 * kv_width, dims.attention_bias);
      q = Tensor{qkv.id, {seq, q_width}};
      k = Tensor{qkv.id, {kv_seq, kv_width}};
      v = k;
      kept = {qkv};
    }
    if (extras.xl_positions != nullptr) {
      const Tensor r_k = nb.linear(*extras.xl_positions, q_width, false);  // r_net
      nb.relative_position_scores(q, r_k, heads, extras.xl_owns_biases);
    }
    if (dims.relative_bias) {
      nb.attention_score_bias(heads, seq, kv_seq, extras.relative_bias_buckets);
    }
    // Transformer-XL's keys run ahead of its queries by the cached memory: no square causal
    // block pattern.
    ctx = nb.attention(q, k, v, heads, dims.attention_dropout, kept,
                       dims.causal && dims.memory_len == 0);
  } else {
    const Tensor mem = nb.tp_enter(*memory, tp, "memory all-gather",
                                   sp ? "memory dgrad reduce-scatter" : "memory dgrad allreduce");
    kv_seq = mem.shape.at(0);
    const Tensor q = nb.linear(h, q_width, dims.attention_bias);
    const Tensor kv = nb.linear(mem, 2 * kv_width, dims.attention_bias);
    const Tensor k{kv.id, {kv_seq, kv_width}};
    ctx = nb.attention(q, k, k, heads, dims.attention_dropout, {q, kv});
  }
  Tensor out =
      nb.tp_exit(nb.linear(ctx, d, dims.attention_bias), tp,
                 sp ? "attn out reduce-scatter" : "attn out allreduce", "attn out grad all-gather");
  if (dims.dropout) out = nb.dropout(out);
  out = nb.add(out, x);
  if (norm == NormPlacement::post) out = transformer_norm(nb, out, dims);
  TransformerEntryInfo info;  // of the whole entry
  info.part = TransformerPart::attention;
  info.d_model = d;
  info.heads = dims.heads;
  info.kv_heads = kv_heads_of(dims);
  info.head_dim = head_dim;
  info.cross = memory != nullptr;
  info.seq = seq;
  info.kv_seq = kv_seq;
  info.parallel = tp;
  nb.describe_transformer(info);
  nb.end(out, extra_output_elements);
  return out;
}

Tensor mlp_entry(NetBuilder& nb, const std::string& name, const Tensor& x,
                 const TransformerDims& dims, NormPlacement norm, Activation act,
                 double extra_output_elements) {
  const TensorParallelism& tp = dims.parallel;
  const bool sp = tp.sequence_parallel;
  const std::int64_t d_ff = dims.d_ff / tp.tp;  // one rank's columns of fc1, rows of fc2
  nb.begin(name, OpClass::matmul, x.elements() + extra_output_elements);
  const Tensor h =
      nb.tp_enter(norm == NormPlacement::pre ? transformer_norm(nb, x, dims) : x, tp,
                  "fc1 in all-gather", sp ? "fc1 dgrad reduce-scatter" : "fc1 dgrad allreduce");
  Tensor inner = nb.activation(nb.linear(h, d_ff, dims.mlp_bias), act);
  if (dims.gated_mlp) inner = nb.mul(inner, nb.linear(h, d_ff, dims.mlp_bias));
  if (dims.mlp_inner_dropout) inner = nb.dropout(inner);
  Tensor out =
      nb.tp_exit(nb.linear(inner, dims.d_model, dims.mlp_bias), tp,
                 sp ? "fc2 out reduce-scatter" : "fc2 out allreduce", "fc2 out grad all-gather");
  if (dims.dropout) out = nb.dropout(out);
  out = nb.add(out, x);
  if (norm == NormPlacement::post) out = transformer_norm(nb, out, dims);
  TransformerEntryInfo info;
  info.part = TransformerPart::mlp;
  info.d_model = dims.d_model;
  info.d_ff = dims.d_ff;
  info.gated = dims.gated_mlp;
  info.seq = h.shape.at(0);
  info.parallel = tp;
  nb.describe_transformer(info);
  nb.end(out, extra_output_elements);
  return out;
}

}  // namespace trainsim::models
