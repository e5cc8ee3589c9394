// GNMT v2 as NVIDIA DeepLearningExamples trains it (NVIDIA/DeepLearningExamples@729963dd,
// PyTorch/Translation/GNMT/seq2seq/models/{gnmt,encoder,decoder,attention}.py, README "Model
// architecture"): a shared source/target embedding; an encoder of `layers` LSTMs, the first
// bidirectional, residual connections from the third; a decoder whose first LSTM feeds a
// normalized Bahdanau attention over the encoder output, whose context is concatenated with the
// input of every later LSTM (residual from the third); a classifier of its own. Dropout on the
// input of every LSTM. One entry per embedding, per LSTM layer and for the classifier.
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

ZooModel make_gnmt(const Hyperparameters& hp) {
  const std::int64_t hidden = hp.get("hidden");
  const std::int64_t layers = hp.get("layers");
  const std::int64_t seq = hp.get("seq_len");
  const std::int64_t vocab = hp.get("vocab");
  if (layers < 2) {
    throw ShapeError("layers=" + std::to_string(layers) +
                     ": the encoder needs its bidirectional layer and one more");
  }
  ZooModel m;
  m.input_shape = {2, seq};  // source and target token ids
  m.input_dtype = InputDtype::int32;
  NetBuilder nb;
  const Tensor src = nb.input({seq});
  const Tensor tgt = nb.input({seq});
  auto lstm_entry = [&](const std::string& name, const Tensor& in, double carried,
                        const Tensor* residual) {
    nb.begin(name, OpClass::recurrent, in.elements() + carried);
    Tensor out = nb.lstm(nb.dropout(in), hidden);
    if (residual != nullptr) out = nb.add(out, *residual);
    nb.end(out, carried);
    return out;
  };

  Tensor x = single_entry(nb, "encoder.embedder", OpClass::embedding, src,
                          [&](const Tensor& t) { return nb.embedding(t, vocab, hidden); });
  nb.begin("encoder.rnn.0", OpClass::recurrent, x.elements());
  const Tensor dropped = nb.dropout(x);
  x = nb.concat_features({nb.lstm(dropped, hidden), nb.lstm(dropped, hidden)});  // both directions
  nb.end(x);
  x = lstm_entry("encoder.rnn.1", x, 0, nullptr);
  for (std::int64_t i = 2; i < layers; ++i) {
    const Tensor residual = x;
    x = lstm_entry("encoder.rnn." + std::to_string(i), x, 0, &residual);
  }

  // From here on the encoder output travels with the decoder stream up to the attention.
  const Tensor context = x;
  nb.begin("decoder.embedder", OpClass::embedding, tgt.elements() + context.elements());
  Tensor y = nb.embedding(tgt, vocab, hidden, true);  // the encoder's table
  nb.end(y, context.elements());

  nb.begin("decoder.att_rnn", OpClass::recurrent, y.elements() + context.elements());
  y = nb.lstm(nb.dropout(y), hidden);
  const Tensor keys = nb.linear(context, hidden, false);  // linear_k
  const Tensor query = nb.linear(y, hidden, false);       // linear_q
  // The score vector, its normalisation scalar and bias (attention.py, normalize=True).
  const Tensor attn = nb.additive_attention(query, keys, context, nullptr, 2 * hidden + 1);
  nb.end(y, attn.elements());

  for (std::int64_t i = 0; i + 1 < layers; ++i) {
    const std::string name = "decoder.rnn." + std::to_string(i);
    nb.begin(name, OpClass::recurrent, y.elements() + attn.elements());
    Tensor out = nb.lstm(nb.dropout(nb.concat_features({y, attn})), hidden);
    if (i >= 1) out = nb.add(out, y);
    y = out;
    nb.end(y, attn.elements());
  }
  m.layers = finish_with_linear_head(nb, "decoder.classifier", y, vocab);
  return m;
}

}  // namespace trainsim::models
