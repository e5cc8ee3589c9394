#pragma once
// Transformer sub-blocks shared by the encoder-decoder, BERT and GPT-2 generators. Each layer is
// two entries (attention, then MLP), so a pipeline stage boundary can fall between any two
// sub-blocks; residual adds, dropouts and layer norms belong to the entry they follow (post-LN) or
// precede (pre-LN).

#include <cstdint>
#include <string>

#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

struct TransformerDims {
  std::int64_t d_model = 0;
  std::int64_t d_ff = 0;
  std::int64_t heads = 0;
};

enum class NormPlacement { pre, post };

// Self-attention (memory == nullptr) or cross-attention over `memory`, with output projection,
// dropout, residual add and layer norm. `extra_output_elements` counts tensors that travel with
// the entry's output (e.g. the encoder memory on the decoder side).
Tensor attention_entry(NetBuilder& nb, const std::string& name, const Tensor& x,
                       const TransformerDims& dims, NormPlacement norm, const Tensor* memory,
                       double extra_output_elements);

Tensor mlp_entry(NetBuilder& nb, const std::string& name, const Tensor& x,
                 const TransformerDims& dims, NormPlacement norm, Activation act,
                 double extra_output_elements);

// Validates the dimensions (heads divide d_model) before any work is done.
void check_transformer_dims(const TransformerDims& dims);

}  // namespace trainsim::models
