// Small models: the LSTM language model of Zaremba et al. (2014) on Penn Treebank and a 3-layer
// MLP for MNIST. One entry per PyTorch module (embedding, each LSTM layer, decoder; each linear).
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

ZooModel make_lstm_lm(const Hyperparameters& hp) {
  const std::int64_t seq = hp.get("seq_len");
  const std::int64_t hidden = hp.get("hidden");
  const std::int64_t vocab = hp.get("vocab");
  ZooModel m;
  m.input_shape = {seq};
  m.input_dtype = InputDtype::int32;
  NetBuilder nb;
  Tensor x = nb.input({seq});
  // Zaremba et al.: embedding width = hidden size, dropout on every non-recurrent connection.
  x = single_entry(nb, "embedding", OpClass::embedding, x,
                   [&](const Tensor& t) { return nb.dropout(nb.embedding(t, vocab, hidden)); });
  for (std::int64_t i = 0; i < hp.get("layers"); ++i) {
    x = single_entry(nb, "lstm" + std::to_string(i + 1), OpClass::recurrent, x,
                     [&](const Tensor& t) { return nb.dropout(nb.lstm(t, hidden)); });
  }
  m.layers = finish_with_linear_head(nb, "decoder", x, vocab);
  return m;
}

ZooModel make_mnist_mlp(const Hyperparameters& hp) {
  const std::int64_t res = hp.get("resolution");
  ZooModel m;
  m.input_shape = {1, res, res};
  m.input_dtype = InputDtype::fp32;
  NetBuilder nb;
  Tensor x = nb.input(m.input_shape);
  x = nb.reshape(x, {res * res});
  const std::int64_t widths[] = {hp.get("hidden1"), hp.get("hidden2")};
  for (int i = 0; i < 2; ++i) {
    x = single_entry(nb, "fc" + std::to_string(i + 1), OpClass::matmul, x, [&](const Tensor& t) {
      return nb.activation(nb.linear(t, widths[i], true), Activation::relu);
    });
  }
  m.layers = finish_with_linear_head(nb, "fc3", x, hp.get("num_classes"));
  return m;
}

}  // namespace trainsim::models
