// NeuMF (He et al. 2017) as DeepLearningExamples trains it on MovieLens-20M
// (NVIDIA/DeepLearningExamples@729963dd, PyTorch/Recommendation/NCF/neumf.py and ncf.py defaults):
// GMF and MLP towers with embeddings of their own, ReLU and dropout (0.5) after every MLP linear,
// one output logit and a binary cross-entropy. A sample is one (user, item) pair. Entries: the
// embeddings (with the GMF product), each MLP linear, the final layer and loss.
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

ZooModel make_ncf(const Hyperparameters& hp) {
  const std::int64_t users = hp.get("users");
  const std::int64_t items = hp.get("items");
  const std::int64_t factors = hp.get("factors");
  const std::int64_t widths[] = {hp.get("mlp_0"), hp.get("mlp_1"), hp.get("mlp_2"),
                                 hp.get("mlp_3")};
  if (widths[0] % 2 != 0) {
    throw ShapeError("mlp_0=" + std::to_string(widths[0]) +
                     " must be even: it is the user and item MLP embeddings side by side");
  }
  ZooModel m;
  m.input_shape = {2};  // user id, item id
  m.input_dtype = InputDtype::int32;
  NetBuilder nb;
  const Tensor user = nb.input({1});
  const Tensor item = nb.input({1});
  nb.begin("embeddings", OpClass::embedding, 2);
  const Tensor gmf = nb.mul(nb.embedding(user, users, factors), nb.embedding(item, items, factors));
  Tensor x = nb.concat_features(
      {nb.embedding(user, users, widths[0] / 2), nb.embedding(item, items, widths[0] / 2)});
  nb.end(x, gmf.elements());
  for (int i = 1; i < 4; ++i) {
    nb.begin("mlp." + std::to_string(i - 1), OpClass::matmul, x.elements() + gmf.elements());
    x = nb.dropout(nb.activation(nb.linear(x, widths[i], true), Activation::relu));
    nb.end(x, gmf.elements());
  }
  m.layers = finish_with_linear_head(nb, "final", nb.concat_features({gmf, x}), 1);
  return m;
}

}  // namespace trainsim::models
