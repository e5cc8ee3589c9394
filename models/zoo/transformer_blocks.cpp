#include "models/zoo/transformer_blocks.hpp"

namespace trainsim::models {

void check_transformer_dims(const TransformerDims& dims) {
  if (dims.d_model % dims.heads != 0) {
    throw ShapeError("heads=" + std::to_string(dims.heads) +
                     " does not divide d_model=" + std::to_string(dims.d_model));
  }
}

Tensor attention_entry(NetBuilder& nb, const std::string& name, const Tensor& x,
                       const TransformerDims& dims, NormPlacement norm, const Tensor* memory,
                       double extra_output_elements) {
  const std::int64_t d = dims.d_model;
  nb.begin(name, OpClass::attention, x.elements() + extra_output_elements);
  const Tensor h = norm == NormPlacement::pre ? nb.layer_norm(x) : x;
  Tensor ctx;
  if (memory == nullptr) {
    const Tensor qkv = nb.linear(h, 3 * d, true);
    const std::int64_t seq = x.shape.at(0);
    // Q, K and V are views of the one projection output, which attention keeps once.
    const Tensor q{qkv.id, {seq, d}};
    ctx = nb.attention(q, q, q, dims.heads, true, {qkv});
  } else {
    const Tensor q = nb.linear(h, d, true);
    const Tensor kv = nb.linear(*memory, 2 * d, true);
    const Tensor k{kv.id, {memory->shape.at(0), d}};
    ctx = nb.attention(q, k, k, dims.heads, true, {q, kv});
  }
  Tensor out = nb.add(nb.dropout(nb.linear(ctx, d, true)), x);
  if (norm == NormPlacement::post) out = nb.layer_norm(out);
  nb.end(out, extra_output_elements);
  return out;
}

Tensor mlp_entry(NetBuilder& nb, const std::string& name, const Tensor& x,
                 const TransformerDims& dims, NormPlacement norm, Activation act,
                 double extra_output_elements) {
  nb.begin(name, OpClass::matmul, x.elements() + extra_output_elements);
  const Tensor h = norm == NormPlacement::pre ? nb.layer_norm(x) : x;
  const Tensor up = nb.activation(nb.linear(h, dims.d_ff, true), act);
  Tensor out = nb.add(nb.dropout(nb.linear(up, dims.d_model, true)), x);
  if (norm == NormPlacement::post) out = nb.layer_norm(out);
  nb.end(out, extra_output_elements);
  return out;
}

}  // namespace trainsim::models
