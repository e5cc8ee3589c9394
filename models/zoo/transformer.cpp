// Transformer language and translation models: the encoder-decoder of Vaswani et al. (2017),
// BERT (Devlin et al. 2019), GPT-2 (Radford et al. 2019), GPT-3 (Brown et al. 2020), T5 (Raffel
// et al. 2020) and Llama 2 / 3 (Touvron et al. 2023; Meta 2024). Two entries per layer (attention,
// MLP) plus embedding and head entries; see transformer_blocks.hpp.
#include <cmath>
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/transformer_blocks.hpp"

namespace trainsim::models {

namespace {

// `head_dim_key` names the hyper-parameter giving the width of a head, where the model has one.
TransformerDims dims_of(const Hyperparameters& hp, std::int64_t ff_multiple,
                        const char* head_dim_key = nullptr) {
  TransformerDims dims;
  dims.d_model = hp.get("d_model");
  dims.d_ff = ff_multiple > 0 ? ff_multiple * dims.d_model : hp.get("d_ff");
  dims.heads = hp.get("heads");
  if (head_dim_key != nullptr) dims.head_dim = hp.get(head_dim_key);
  dims.parallel = hp.parallel();
  check_transformer_dims(dims);
  return dims;
}

// Token embedding (its own table or a tied one), positions and dropout as one entry. Sinusoidal
// positions (Vaswani) cost an add; learned ones (BERT, GPT-2) are a second table. Under tensor
// parallelism the positions (and token types) are added to the whole sequence (replicated
// tables), which sequence parallelism then splits before the norm and dropout.
Tensor embed_entry(NetBuilder& nb, const std::string& name, const Tensor& ids, std::int64_t vocab,
                   std::int64_t d, std::int64_t learned_positions, bool tied,
                   bool token_types_and_norm, const TensorParallelism& p) {
  nb.begin(name, OpClass::embedding, ids.elements());
  Tensor x = vocab_parallel_embedding(nb, ids, vocab, d, tied, p, false);
  if (learned_positions > 0) {
    const Tensor positions = nb.embedding(nb.input({ids.shape.at(0)}), learned_positions, d);
    x = nb.add(x, positions);
  } else {
    x = nb.add(x, nb.copy_as(x, x.shape));  // scale by sqrt(d) and add the sinusoid table
  }
  if (token_types_and_norm) x = nb.add(x, nb.embedding(nb.input({ids.shape.at(0)}), 2, d));
  x = nb.tp_scatter_sequence(x, p, "embedding grad all-gather");
  if (token_types_and_norm) x = nb.layer_norm(x);
  x = nb.dropout(x);
  mark_vocab_entry(nb, TransformerPart::embedding, d, ids.shape.at(0), vocab, p);
  nb.end(x);
  return x;
}

// The last entry of a language model: the final norm (pre-norm models), the projection to the
// vocabulary (its own weights or the token embedding's) and the loss.
Tensor lm_head_entry(NetBuilder& nb, const std::string& name, const Tensor& x,
                     const TransformerDims& dims, bool final_norm, std::int64_t vocab, bool tied) {
  nb.begin(name, OpClass::matmul, x.elements());
  Tensor y = final_norm ? transformer_norm(nb, x, dims) : x;
  y = vocab_parallel_head(nb, y, vocab, tied, dims.parallel);
  mark_vocab_entry(nb, TransformerPart::head, dims.d_model, y.shape.at(0), vocab, dims.parallel);
  nb.end(y);
  return y;
}

}  // namespace

ZooModel make_transformer(const Hyperparameters& hp) {
  const TransformerDims dims = dims_of(hp, 0);
  const std::int64_t layers = hp.get("layers");
  if (layers < 2)
    throw ShapeError("layers=" + std::to_string(layers) +
                     ": needs at least one encoder and one decoder layer");
  const std::int64_t encoder_layers = (layers + 1) / 2;
  const std::int64_t decoder_layers = layers - encoder_layers;
  const std::int64_t seq = hp.get("seq_len");
  const std::int64_t vocab = hp.get("vocab");
  ZooModel m;
  m.input_shape = {2, seq};  // source and target token ids
  m.input_dtype = InputDtype::int32;
  NetBuilder nb;
  const Tensor src = nb.input({seq});
  const Tensor tgt = nb.input({seq});
  // Vaswani et al. share one table between both embeddings and the pre-softmax projection.
  Tensor x =
      embed_entry(nb, "encoder.embed", src, vocab, dims.d_model, 0, false, false, dims.parallel);
  for (std::int64_t i = 0; i < encoder_layers; ++i) {
    const std::string p = "encoder." + std::to_string(i) + ".";
    x = attention_entry(nb, p + "self_attn", x, dims, NormPlacement::post, nullptr, 0);
    x = mlp_entry(nb, p + "mlp", x, dims, NormPlacement::post, Activation::relu, 0);
  }
  // From here on the encoder output travels with the decoder stream: every decoder layer reads it.
  const Tensor memory = x;
  const double carried = memory.elements();
  nb.begin("decoder.embed", OpClass::embedding, tgt.elements() + carried);
  Tensor y =
      nb.add(vocab_parallel_embedding(nb, tgt, vocab, dims.d_model, true, dims.parallel, false),
             nb.input({seq, dims.d_model}));
  y = nb.dropout(nb.tp_scatter_sequence(y, dims.parallel, "embedding grad all-gather"));
  mark_vocab_entry(nb, TransformerPart::embedding, dims.d_model, seq, vocab, dims.parallel);
  nb.end(y, carried);
  TransformerDims masked = dims;  // the decoder's self-attention sees earlier positions alone
  masked.causal = true;
  for (std::int64_t i = 0; i < decoder_layers; ++i) {
    const std::string p = "decoder." + std::to_string(i) + ".";
    y = attention_entry(nb, p + "self_attn", y, masked, NormPlacement::post, nullptr, carried);
    y = attention_entry(nb, p + "cross_attn", y, dims, NormPlacement::post, &memory, carried);
    y = mlp_entry(nb, p + "mlp", y, dims, NormPlacement::post, Activation::relu, carried);
  }
  lm_head_entry(nb, "generator", y, dims, false, vocab, true);
  m.layers = nb.take_layers();
  return m;
}

ZooModel make_bert(const Hyperparameters& hp) {
  TransformerDims dims = dims_of(hp, 0);
  // paper: BERT's self-attention projects with three Linears, query, key and value (Google's
  // modeling.py attention_layer; NVIDIA DeepLearningExamples PyTorch/LanguageModeling/BERT/
  // modeling.py BertSelfAttention): three GEMMs and six parameter tensors per layer.
  dims.separate_qkv = true;
  const std::int64_t seq = hp.get("seq_len");
  ZooModel m;
  m.input_shape = {seq};
  m.input_dtype = InputDtype::int32;
  NetBuilder nb;
  const Tensor ids = nb.input({seq});
  // BERT's position table has 512 rows whatever length a batch uses.
  Tensor x = embed_entry(nb, "embeddings", ids, hp.get("vocab"), dims.d_model,
                         std::max<std::int64_t>(512, seq), false, true, dims.parallel);
  for (std::int64_t i = 0; i < hp.get("layers"); ++i) {
    const std::string p = "layer." + std::to_string(i) + ".";
    x = attention_entry(nb, p + "attention", x, dims, NormPlacement::post, nullptr, 0);
    x = mlp_entry(nb, p + "mlp", x, dims, NormPlacement::post, Activation::gelu, 0);
  }
  nb.begin("pooler", OpClass::matmul, x.elements());
  // The pooler and classifier are replicated on every tensor-parallel rank; under sequence
  // parallelism the [CLS] token is on one shard, so the pooler gathers the sequence first.
  x = nb.tp_gather_sequence(x, dims.parallel, "pooler in all-gather");
  x = nb.activation(nb.linear(nb.take_rows(x, 1), dims.d_model, true),
                    Activation::tanh);  // the [CLS] token
  nb.end(x);
  nb.begin("classifier", OpClass::matmul, x.elements());
  x = nb.linear(nb.dropout(x), hp.get("num_classes"), true);
  nb.loss(x);
  nb.end(x);
  m.layers = nb.take_layers();
  return m;
}

namespace {

// GPT-2 and GPT-3: learned positions in a table of `n_positions` rows (longer contexts need a
// longer table), pre-LN blocks with GELU, and a language-model head tied to the token embedding.
ZooModel gpt_decoder(const Hyperparameters& hp, TransformerDims dims, std::int64_t n_positions,
                     Activation act) {
  dims.causal = true;  // a language model's self-attention
  const std::int64_t seq = hp.get("seq_len");
  const std::int64_t vocab = hp.get("vocab");
  ZooModel m;
  m.input_shape = {seq};
  m.input_dtype = InputDtype::int32;
  NetBuilder nb;
  const Tensor ids = nb.input({seq});
  Tensor x = embed_entry(nb, "embed", ids, vocab, dims.d_model,
                         std::max<std::int64_t>(n_positions, seq), false, false, dims.parallel);
  for (std::int64_t i = 0; i < hp.get("n_layer"); ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    x = attention_entry(nb, p + "attn", x, dims, NormPlacement::pre, nullptr, 0);
    x = mlp_entry(nb, p + "mlp", x, dims, NormPlacement::pre, act, 0);
  }
  lm_head_entry(nb, "lm_head", x, dims, true, vocab, true);  // ln_f, then the tied token embedding
  m.layers = nb.take_layers();
  return m;
}

}  // namespace

ZooModel make_gpt2(const Hyperparameters& hp) {
  // GPT-2's position table has 1024 rows (n_positions).
  // Its activation as Hugging Face transformers' GPT2LMHeadModel runs it (GPT2Config's
  // activation_function "gelu_new": gelu_kernels 8, eight eager ops), or fused into one kernel
  // (gelu_kernels 1: Megatron-LM's torch.jit-scripted gelu_impl, megatron/model/utils.py).
  const std::int64_t gelu_kernels = hp.get("gelu_kernels");
  if (gelu_kernels != 1 && gelu_kernels != 8) {
    throw ShapeError("gelu_kernels " + std::to_string(gelu_kernels) +
                     " is neither 1 (one fused kernel) nor 8 (Hugging Face's eager gelu_new)");
  }
  return gpt_decoder(hp, dims_of(hp, 4), 1024,
                     gelu_kernels == 1 ? Activation::gelu : Activation::gelu_new);
}

ZooModel make_gpt3(const Hyperparameters& hp) {
  // paper: Brown et al. 2020, Sec. 2.1: "n_ctx = 2048 tokens" for every size.
  return gpt_decoder(hp, dims_of(hp, 4, "d_head"), 2048, Activation::gelu);
}

ZooModel make_llama(const Hyperparameters& hp) {
  // paper: Touvron et al. 2023 (Llama 2), Sec. 2.2, and Meta's llama/model.py: pre-normalisation
  // with RMSNorm, SwiGLU feed-forward, rotary embeddings, grouped-query attention for the larger
  // models, no biases, no dropout, an output projection of its own (not tied).
  TransformerDims dims = dims_of(hp, 0);
  dims.kv_heads = hp.get("kv_heads");
  dims.norm = NormKind::rms_norm;
  dims.attention_bias = false;
  dims.mlp_bias = false;
  dims.gated_mlp = true;
  dims.rotary = true;
  dims.separate_qkv = true;  // q_proj, k_proj, v_proj
  dims.dropout = false;
  dims.attention_dropout = false;
  dims.causal = true;  // a language model's self-attention
  check_transformer_dims(dims);
  const std::int64_t seq = hp.get("seq_len");
  const std::int64_t vocab = hp.get("vocab");
  ZooModel m;
  m.input_shape = {seq};
  m.input_dtype = InputDtype::int32;
  NetBuilder nb;
  const Tensor ids = nb.input({seq});
  nb.begin("embed_tokens", OpClass::embedding, ids.elements());
  Tensor x = vocab_parallel_embedding(nb, ids, vocab, dims.d_model, false, dims.parallel, true);
  mark_vocab_entry(nb, TransformerPart::embedding, dims.d_model, seq, vocab, dims.parallel);
  nb.end(x);
  for (std::int64_t i = 0; i < hp.get("n_layer"); ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    x = attention_entry(nb, p + "self_attn", x, dims, NormPlacement::pre, nullptr, 0);
    x = mlp_entry(nb, p + "mlp", x, dims, NormPlacement::pre, Activation::silu, 0);
  }
  lm_head_entry(nb, "lm_head", x, dims, true, vocab, false);  // the final norm, then the output
  m.layers = nb.take_layers();
  return m;
}

ZooModel make_t5(const Hyperparameters& hp) {
  // paper: Raffel et al. 2020 (T5), Sec. 2.1, and Hugging Face's modeling_t5.py: pre-norm with a
  // scale-only layer norm, no biases, ReLU feed-forward with dropout inside, a relative position
  // bias on self-attention computed in the first layer of each stack from 32 buckets and shared by
  // the others, one vocabulary table shared by both stacks and the (tied) output layer.
  TransformerDims dims = dims_of(hp, 0, "d_kv");
  dims.norm = NormKind::rms_norm;
  dims.attention_bias = false;
  dims.mlp_bias = false;
  dims.mlp_inner_dropout = true;
  check_transformer_dims(dims);
  constexpr std::int64_t kBuckets = 32;  // paper: Raffel et al. 2020, Sec. 2.1: "32 embeddings"
  TransformerDims self_dims = dims;
  self_dims.relative_bias = true;
  const std::int64_t layers = hp.get("layers");
  const std::int64_t seq = hp.get("seq_len");
  const std::int64_t tgt = hp.get("tgt_len");
  const std::int64_t vocab = hp.get("vocab");
  const std::int64_t d = dims.d_model;
  ZooModel m;
  m.input_shape = {seq + tgt};  // input and target token ids
  m.input_dtype = InputDtype::int32;
  NetBuilder nb;
  const Tensor src = nb.input({seq});
  const Tensor tgt_ids = nb.input({tgt});
  nb.begin("encoder.embed", OpClass::embedding, src.elements());
  Tensor x = nb.dropout(vocab_parallel_embedding(nb, src, vocab, d, false, dims.parallel, true));
  mark_vocab_entry(nb, TransformerPart::embedding, d, seq, vocab, dims.parallel);
  nb.end(x);
  for (std::int64_t i = 0; i < layers; ++i) {
    const std::string p = "encoder." + std::to_string(i) + ".";
    AttentionExtras extras;
    extras.relative_bias_buckets = i == 0 ? kBuckets : 0;
    x = attention_entry(nb, p + "self_attn", x, self_dims, NormPlacement::pre, nullptr, 0, extras);
    x = mlp_entry(nb, p + "mlp", x, dims, NormPlacement::pre, Activation::relu, 0);
  }
  // The encoder's final norm and dropout open the decoder side, whose every layer reads their
  // output, so it travels with the decoder stream.
  nb.begin("decoder.embed", OpClass::embedding, x.elements() + tgt_ids.elements());
  const Tensor memory = nb.dropout(transformer_norm(nb, x, dims));
  const double carried = memory.elements();
  Tensor y = nb.dropout(vocab_parallel_embedding(nb, tgt_ids, vocab, d, true, dims.parallel, true));
  mark_vocab_entry(nb, TransformerPart::embedding, d, tgt, vocab, dims.parallel);
  nb.end(y, carried);
  TransformerDims masked = self_dims;  // the decoder's self-attention sees earlier positions alone
  masked.causal = true;
  for (std::int64_t i = 0; i < layers; ++i) {
    const std::string p = "decoder." + std::to_string(i) + ".";
    AttentionExtras extras;
    extras.relative_bias_buckets = i == 0 ? kBuckets : 0;
    y = attention_entry(nb, p + "self_attn", y, masked, NormPlacement::pre, nullptr, carried,
                        extras);
    y = attention_entry(nb, p + "cross_attn", y, dims, NormPlacement::pre, &memory, carried);
    y = mlp_entry(nb, p + "mlp", y, dims, NormPlacement::pre, Activation::relu, carried);
  }
  // The decoder's final norm and dropout, then the tied output layer (scaled by d^-1/2).
  nb.begin("lm_head", OpClass::matmul, y.elements());
  y = vocab_parallel_head(nb, nb.dropout(transformer_norm(nb, y, dims)), vocab, true,
                          dims.parallel);
  mark_vocab_entry(nb, TransformerPart::head, d, tgt, vocab, dims.parallel);
  nb.end(y);
  m.layers = nb.take_layers();
  return m;
}

}  // namespace trainsim::models
