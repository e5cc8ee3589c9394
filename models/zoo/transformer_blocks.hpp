#pragma once
// Transformer sub-blocks shared by every transformer generator (encoder-decoder, BERT, GPT-2/3,
// T5, Llama, Transformer-XL). Each layer is two entries (attention, then MLP), so a pipeline stage
// boundary can fall between any two sub-blocks and tensor parallelism splits each entry on its
// own; residual adds, dropouts and norms belong to the entry they follow (post-norm) or precede
// (pre-norm). Every entry records its TransformerEntryInfo.

#include <cstdint>
#include <string>

#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

enum class NormKind { layer_norm, rms_norm };

struct TransformerDims {
  std::int64_t d_model = 0;
  std::int64_t d_ff = 0;
  std::int64_t heads = 0;
  // Options. The defaults are the block of Vaswani et al. (2017), BERT and GPT-2.
  std::int64_t kv_heads = 0;  // key/value heads, grouped-query attention (Ainslie et al. 2023);
                              // 0: as many as query heads
  std::int64_t head_dim = 0;  // width of one head; 0: d_model / heads
  NormKind norm = NormKind::layer_norm;
  bool attention_bias = true;      // biases in the attention projections
  bool mlp_bias = true;            // biases in the MLP linear layers
  bool gated_mlp = false;          // act(x W_gate) * (x W_up), then W_down (Shazeer 2020, GLU
                                   // variants); d_ff is the width of each branch
  bool rotary = false;             // rotary position embedding on q and k (Su et al. 2021)
  bool dropout = true;             // dropout on the attention and MLP outputs
  bool attention_dropout = true;   // dropout on the attention probabilities
  bool mlp_inner_dropout = false;  // dropout after the MLP activation too (T5)
  bool relative_bias = false;      // a learned bias on self-attention scores (T5)
  std::int64_t memory_len = 0;     // Transformer-XL: cached states of the previous segment that
                                   // self-attention's keys and values also cover (no gradient)
};

// What one attention entry adds to the model-wide options.
struct AttentionExtras {
  // T5: this entry computes the relative position bias from its table of buckets (layer 0).
  std::int64_t relative_bias_buckets = 0;
  // Transformer-XL: the sinusoid embedding of relative positions {memory + seq, d_model}, shared
  // by every layer; the entry projects it with its own r_net.
  const Tensor* xl_positions = nullptr;
  bool xl_owns_biases = false;  // the global u and v vectors live in this entry (layer 0)
};

enum class NormPlacement { pre, post };

// Self-attention (memory == nullptr) or cross-attention over `memory`, with output projection,
// dropout, residual add and norm. `extra_output_elements` counts tensors that travel with the
// entry's output (e.g. the encoder memory on the decoder side).
Tensor attention_entry(NetBuilder& nb, const std::string& name, const Tensor& x,
                       const TransformerDims& dims, NormPlacement norm, const Tensor* memory,
                       double extra_output_elements, const AttentionExtras& extras = {});

Tensor mlp_entry(NetBuilder& nb, const std::string& name, const Tensor& x,
                 const TransformerDims& dims, NormPlacement norm, Activation act,
                 double extra_output_elements);

// The model-wide norm (LayerNorm or RMSNorm) applied to `x` inside the open entry.
Tensor transformer_norm(NetBuilder& nb, const Tensor& x, const TransformerDims& dims);

// Validates the dimensions (heads divide d_model unless head_dim is given, kv_heads divide heads)
// before any work is done.
void check_transformer_dims(const TransformerDims& dims);

// Marks the open entry as a transformer embedding or head over a `vocab`-row token table.
void mark_vocab_entry(NetBuilder& nb, TransformerPart part, std::int64_t d_model, std::int64_t seq,
                      std::int64_t vocab);

}  // namespace trainsim::models
