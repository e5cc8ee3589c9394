#pragma once
// One generator per network family. Each reads its hyper-parameters (already validated as positive
// integers by the catalog) and returns the model's input and layers; the catalog fills in the name,
// description and hyper-parameters. A shape that does not work out throws ShapeError.

#include <cstdint>
#include <map>
#include <string>

#include "models/zoo/hyperparameters.hpp"
#include "models/zoo/zoo_model.hpp"

namespace trainsim::models {

ZooModel make_resnet_cifar(const Hyperparameters& hp);                         // depth = 6n + 2
ZooModel make_resnet_imagenet(const Hyperparameters& hp, std::int64_t depth);  // 50 or 101
ZooModel make_vgg16(const Hyperparameters& hp);
ZooModel make_alexnet(const Hyperparameters& hp);
ZooModel make_inception_v3(const Hyperparameters& hp);
ZooModel make_efficientnet(const Hyperparameters& hp, int variant);  // B0..B4
ZooModel make_amoebanet_d(const Hyperparameters& hp);
ZooModel make_unet(const Hyperparameters& hp);
ZooModel make_transformer(const Hyperparameters& hp);  // encoder-decoder
ZooModel make_bert(const Hyperparameters& hp);
ZooModel make_gpt2(const Hyperparameters& hp);
ZooModel make_lstm_lm(const Hyperparameters& hp);
ZooModel make_mnist_mlp(const Hyperparameters& hp);
ZooModel make_vgg16_cifar(const Hyperparameters& hp);
ZooModel make_ssd300(const Hyperparameters& hp);
// How GNMT's decoder runs: each layer over the whole target sequence (PyTorch's cuDNN LSTMs), or
// one while-loop step per target token through every layer (TensorFlow's dynamic_rnn).
enum class GnmtDecoder { layers, step_loop };
ZooModel make_gnmt(const Hyperparameters& hp, GnmtDecoder decoder);
ZooModel make_ncf(const Hyperparameters& hp);
ZooModel make_tacotron2(const Hyperparameters& hp);
ZooModel make_waveglow(const Hyperparameters& hp);
// tf1_graph: as DeepLearningExamples' TensorFlow script builds it (NetBuilder::set_tf1_graph).
ZooModel make_transformer_xl(const Hyperparameters& hp, bool attention_dropout,
                             bool tf1_graph = false);
ZooModel make_t5(const Hyperparameters& hp);
ZooModel make_gpt3(const Hyperparameters& hp);
ZooModel make_llama(const Hyperparameters& hp);

// Runs the catalog's generator of `name` (a catalog name) on resolved hyper-parameters and fills
// in the name, description and hyper-parameters; build_zoo_model and shard_tensor_parallel go
// through it. Throws ShapeError as the generators do.
ZooModel generate_catalog_model(const std::string& name,
                                const std::map<std::string, double>& values,
                                const TensorParallelism& parallel);

}  // namespace trainsim::models
