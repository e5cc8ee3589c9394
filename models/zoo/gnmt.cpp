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

ZooModel make_gnmt(const Hyperparameters& hp, GnmtDecoder decoder) {
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
  nb.set_tf1_graph(decoder == GnmtDecoder::step_loop);  // nmt.py's ops, tf.nn.dropout's too
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

  if (decoder == GnmtDecoder::step_loop) {
    // TensorFlow's GNMT (NVIDIA/DeepLearningExamples@729963dd TensorFlow/Translation/GNMT:
    // nmt.py's default --use_fused_lstm_dec=False, so model.py builds the training decoder with
    // gnmt_model.py _build_decoder_cell and tf.nn.dynamic_rnn): one while-loop step per target
    // token runs the first LSTM cell on [embedding, previous attention], the normalized Bahdanau
    // attention (AttentionWrapper; the memory layer runs once, before the loop), then every later
    // cell on [output, attention], residual from the third (GNMTAttentionMultiCell), each cell
    // tf.nn.rnn_cell.LSTMCell (model_helper._single_cell: use_block_lstm=False) with
    // DropoutWrapper on its input; then dynamic_rnn's copy-through of the state.
    nb.begin("decoder.rnn", OpClass::recurrent, y.elements() + context.elements());
    const Tensor keys = nb.linear(context, hidden, false);  // memory_layer
    nb.begin_repeat(seq);
    const Tensor y_step = nb.input({1, hidden}, true);     // this step's embedding
    const Tensor attn_prev = nb.input({1, hidden}, true);  // the previous step's attention
    Tensor h = nb.tf_lstm_cell(nb.dropout(nb.concat_features({y_step, attn_prev})), hidden);
    // The state dynamic_rnn carries: each cell's c and m (as wide as its output), the attention,
    // and AttentionWrapperState's alignments and attention_state (one weight per source token).
    const Tensor alignments = nb.input({1, seq}, true);
    std::vector<Tensor> state{h, h, attn_prev, alignments, alignments};
    const Tensor query = nb.linear(h, hidden, false);  // query_layer
    const Tensor attn = nb.additive_attention(query, keys, context, nullptr, 2 * hidden + 1);
    for (std::int64_t i = 0; i + 1 < layers; ++i) {
      Tensor out = nb.tf_lstm_cell(nb.dropout(nb.concat_features({h, attn})), hidden);
      if (i >= 1) out = nb.add(out, h);
      h = out;
      state.push_back(h);  // c
      state.push_back(h);  // m
    }
    state.push_back(h);  // the output
    nb.dynamic_rnn_copy_through(state);
    nb.end_repeat();
    y = nb.copy_as(h, {seq, hidden});  // the output TensorArray stacked
    nb.end(y);
    m.layers = finish_with_linear_head(nb, "decoder.classifier", y, vocab);
    return m;
  }

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
