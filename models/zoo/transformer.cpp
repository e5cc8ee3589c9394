// Transformer language and translation models: the encoder-decoder of Vaswani et al. (2017),
// BERT (Devlin et al. 2019) and GPT-2 (Radford et al. 2019). Two entries per layer (attention,
// MLP) plus embedding and head entries; see transformer_blocks.hpp.
#include <cmath>
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/transformer_blocks.hpp"

namespace trainsim::models {

namespace {

TransformerDims dims_of(const Hyperparameters& hp, std::int64_t ff_multiple) {
  TransformerDims dims;
  dims.d_model = hp.get("d_model");
  dims.d_ff = ff_multiple > 0 ? ff_multiple * dims.d_model : hp.get("d_ff");
  dims.heads = hp.get("heads");
  check_transformer_dims(dims);
  return dims;
}

// Token embedding (its own table or a tied one), positions and dropout as one entry. Sinusoidal
// positions (Vaswani) cost an add; learned ones (BERT, GPT-2) are a second table.
Tensor embed_entry(NetBuilder& nb, const std::string& name, const Tensor& ids, std::int64_t vocab,
                   std::int64_t d, std::int64_t learned_positions, bool tied,
                   bool token_types_and_norm) {
  nb.begin(name, OpClass::embedding, ids.elements());
  Tensor x = nb.embedding(ids, vocab, d, tied);
  if (learned_positions > 0) {
    const Tensor positions = nb.embedding(nb.input({ids.shape.at(0)}), learned_positions, d);
    x = nb.add(x, positions);
  } else {
    x = nb.add(x, nb.copy_as(x, x.shape));  // scale by sqrt(d) and add the sinusoid table
  }
  if (token_types_and_norm) {
    x = nb.layer_norm(nb.add(x, nb.embedding(nb.input({ids.shape.at(0)}), 2, d)));
  }
  x = nb.dropout(x);
  nb.end(x);
  return x;
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
  m.input_dtype = "int32";
  NetBuilder nb;
  const Tensor src = nb.input({seq});
  const Tensor tgt = nb.input({seq});
  // Vaswani et al. share one table between both embeddings and the pre-softmax projection.
  Tensor x = embed_entry(nb, "encoder.embed", src, vocab, dims.d_model, 0, false, false);
  for (std::int64_t i = 0; i < encoder_layers; ++i) {
    const std::string p = "encoder." + std::to_string(i) + ".";
    x = attention_entry(nb, p + "self_attn", x, dims, NormPlacement::post, nullptr, 0);
    x = mlp_entry(nb, p + "mlp", x, dims, NormPlacement::post, Activation::relu, 0);
  }
  // From here on the encoder output travels with the decoder stream: every decoder layer reads it.
  const Tensor memory = x;
  const double carried = memory.elements();
  nb.begin("decoder.embed", OpClass::embedding, tgt.elements() + carried);
  Tensor y = nb.dropout(
      nb.add(nb.embedding(tgt, vocab, dims.d_model, true), nb.input({seq, dims.d_model})));
  nb.end(y, carried);
  for (std::int64_t i = 0; i < decoder_layers; ++i) {
    const std::string p = "decoder." + std::to_string(i) + ".";
    y = attention_entry(nb, p + "self_attn", y, dims, NormPlacement::post, nullptr, carried);
    y = attention_entry(nb, p + "cross_attn", y, dims, NormPlacement::post, &memory, carried);
    y = mlp_entry(nb, p + "mlp", y, dims, NormPlacement::post, Activation::relu, carried);
  }
  nb.begin("generator", OpClass::matmul, y.elements());
  y = nb.linear(y, vocab, false, true);
  nb.loss(y);
  nb.end(y);
  m.layers = nb.take_layers();
  return m;
}

ZooModel make_bert(const Hyperparameters& hp) {
  const TransformerDims dims = dims_of(hp, 0);
  const std::int64_t seq = hp.get("seq_len");
  ZooModel m;
  m.input_shape = {seq};
  m.input_dtype = "int32";
  NetBuilder nb;
  const Tensor ids = nb.input({seq});
  // BERT's position table has 512 rows whatever length a batch uses.
  Tensor x = embed_entry(nb, "embeddings", ids, hp.get("vocab"), dims.d_model,
                         std::max<std::int64_t>(512, seq), false, true);
  for (std::int64_t i = 0; i < hp.get("layers"); ++i) {
    const std::string p = "layer." + std::to_string(i) + ".";
    x = attention_entry(nb, p + "attention", x, dims, NormPlacement::post, nullptr, 0);
    x = mlp_entry(nb, p + "mlp", x, dims, NormPlacement::post, Activation::gelu, 0);
  }
  nb.begin("pooler", OpClass::matmul, x.elements());
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

ZooModel make_gpt2(const Hyperparameters& hp) {
  const TransformerDims dims = dims_of(hp, 4);
  const std::int64_t seq = hp.get("seq_len");
  const std::int64_t vocab = hp.get("vocab");
  ZooModel m;
  m.input_shape = {seq};
  m.input_dtype = "int32";
  NetBuilder nb;
  const Tensor ids = nb.input({seq});
  // GPT-2's position table has 1024 rows (n_positions); longer contexts need a longer table.
  Tensor x = embed_entry(nb, "embed", ids, vocab, dims.d_model, std::max<std::int64_t>(1024, seq),
                         false, false);
  for (std::int64_t i = 0; i < hp.get("n_layer"); ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    x = attention_entry(nb, p + "attn", x, dims, NormPlacement::pre, nullptr, 0);
    x = mlp_entry(nb, p + "mlp", x, dims, NormPlacement::pre, Activation::gelu, 0);
  }
  nb.begin("lm_head", OpClass::matmul, x.elements());
  x = nb.linear(nb.layer_norm(x), vocab, false, true);  // ln_f, then the tied token embedding
  nb.loss(x);
  nb.end(x);
  m.layers = nb.take_layers();
  return m;
}

}  // namespace trainsim::models
