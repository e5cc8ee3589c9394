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
  bool separate_qkv = false;       // three projections for Q, K and V (BERT's query, key and
                                   // value Linears, Llama's q/k/v_proj) instead of one fused QKV
  bool dropout = true;             // dropout on the attention and MLP outputs
  bool attention_dropout = true;   // dropout on the attention probabilities
  bool mlp_inner_dropout = false;  // dropout after the MLP activation too (T5)
  bool relative_bias = false;      // a learned bias on self-attention scores (T5)
  bool causal = false;             // self-attention masked to earlier positions (a decoder's):
                                   // fused kernels skip the blocks above the diagonal
  std::int64_t memory_len = 0;     // Transformer-XL: cached states of the previous segment that
                                   // self-attention's keys and values also cover (no gradient)
  // The entries one tensor-parallel rank builds (Megatron-LM, Shoeybi et al. 2019, Sec. 3):
  // attention split by heads (QKV column-parallel, output projection row-parallel), the MLP by
  // its inner width (fc1 column-, fc2 row-parallel); with sequence parallelism the token stream
  // outside those regions is split by sequence. tp 1: the whole entry.
  TensorParallelism parallel;
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

// Marks the open entry as a transformer embedding or head over a `vocab`-row token table
// (`seq` tokens of the whole sequence), built for `parallel` (tp 1: whole or replicated).
void mark_vocab_entry(NetBuilder& nb, TransformerPart part, std::int64_t d_model, std::int64_t seq,
                      std::int64_t vocab, const TensorParallelism& parallel = {});

// The vocabulary Megatron-LM splits over `tp` ranks: padded to a multiple of 128 x tp rather
// than refused (paper: NVIDIA/Megatron-LM megatron/training/tokenizer/tokenizer.py,
// _vocab_size_with_padding, with --make-vocab-size-divisible-by's default of 128). tp 1: `vocab`.
std::int64_t tp_padded_vocab(std::int64_t vocab, std::int64_t tp);

// The token lookup of an embedding over `vocab` rows (`tied`: the table belongs to another
// entry), vocabulary-parallel when p.tp > 1 (Megatron's VocabParallelEmbedding): each rank holds
// tp_padded_vocab / tp rows, looks up the tokens in its range (zeros for the others) and the
// ranks sum their partial outputs, with an allreduce, or with sequence parallelism and
// `reduce_scatter` a reduce-scatter into the rank's sequence shard (megatron-core
// LanguageModelEmbedding reduce-scatters only where no learned position or token-type table is
// added to the whole sequence afterwards; those add, then call nb.tp_scatter_sequence).
Tensor vocab_parallel_embedding(NetBuilder& nb, const Tensor& ids, std::int64_t vocab,
                                std::int64_t d_model, bool tied, const TensorParallelism& p,
                                bool reduce_scatter);

// The projection of `x` to `vocab` logits (no bias; `tied`: the embedding's table) and the
// softmax cross entropy, vocabulary-parallel when p.tp > 1: `x` enters the tensor-parallel
// region (gathered from its sequence shards under sequence parallelism), the projection is
// column-parallel over tp_padded_vocab / tp rows and the loss works on those logits, with three
// allreduces of one value per token (paper: NVIDIA/Megatron-LM megatron/core/tensor_parallel/
// cross_entropy.py, VocabParallelCrossEntropy: the logits' maximum, the target's logit and the
// sum of exponentials; fp32 there). Returns the logits.
Tensor vocab_parallel_head(NetBuilder& nb, const Tensor& x, std::int64_t vocab, bool tied,
                           const TensorParallelism& p);

}  // namespace trainsim::models
