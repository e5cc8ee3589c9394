// The catalog: names, descriptions and default hyper-parameters of every zoo model, and the
// validation of user overrides.
#include <cmath>
#include <sstream>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo.hpp"
#include "sim/config/nearest_name.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::models {

std::int64_t Hyperparameters::get(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end())
    throw std::logic_error("zoo generator reads undeclared hyper-parameter '" + key + "'");
  return static_cast<std::int64_t>(it->second);
}

namespace {

using Generator = ZooModel (*)(const Hyperparameters&);

struct Entry {
  const char* name;
  const char* description;
  std::map<std::string, double> defaults;
  Generator generate;
};

const std::vector<Entry>& entries() {
  // Resolutions and sequence lengths are those of the reference papers / benchmarks.
  static const std::vector<Entry> table{
      {"resnet20",
       "ResNet-20 for CIFAR-10 (He et al. 2016, option A shortcuts); depth = 6n+2",
       {{"depth", 20}, {"resolution", 32}, {"num_classes", 10}},
       make_resnet_cifar},
      {"resnet50",
       "ResNet-50 v1.5 (torchvision; torchgpipe Sequential granularity)",
       {{"resolution", 224}, {"num_classes", 1000}},
       [](const Hyperparameters& hp) { return make_resnet_imagenet(hp, 50); }},
      {"resnet101",
       "ResNet-101 v1.5 (torchvision; torchgpipe Sequential granularity, 370 layers)",
       {{"resolution", 224}, {"num_classes", 1000}},
       [](const Hyperparameters& hp) { return make_resnet_imagenet(hp, 101); }},
      {"vgg16",
       "VGG-16 (configuration D, torchvision)",
       {{"resolution", 224}, {"num_classes", 1000}},
       make_vgg16},
      {"alexnet",
       "AlexNet (torchvision's one-GPU variant)",
       {{"resolution", 224}, {"num_classes", 1000}},
       make_alexnet},
      {"inception_v3",
       "Inception-v3 (torchvision, without the auxiliary classifier)",
       {{"resolution", 299}, {"num_classes", 1000}},
       make_inception_v3},
      {"efficientnet_b0",
       "EfficientNet-B0 (Tan & Le 2019; torchvision)",
       {{"resolution", 224}, {"num_classes", 1000}, {"group_dim", 1}, {"expand_ratio", 6}},
       [](const Hyperparameters& hp) { return make_efficientnet(hp, 0); }},
      {"efficientnet_b1",
       "EfficientNet-B1 (width 1.0, depth 1.1)",
       {{"resolution", 240}, {"num_classes", 1000}, {"group_dim", 1}, {"expand_ratio", 6}},
       [](const Hyperparameters& hp) { return make_efficientnet(hp, 1); }},
      {"efficientnet_b2",
       "EfficientNet-B2 (width 1.1, depth 1.2)",
       {{"resolution", 260}, {"num_classes", 1000}, {"group_dim", 1}, {"expand_ratio", 6}},
       [](const Hyperparameters& hp) { return make_efficientnet(hp, 2); }},
      {"efficientnet_b3",
       "EfficientNet-B3 (width 1.2, depth 1.4)",
       {{"resolution", 300}, {"num_classes", 1000}, {"group_dim", 1}, {"expand_ratio", 6}},
       [](const Hyperparameters& hp) { return make_efficientnet(hp, 3); }},
      {"efficientnet_b4",
       "EfficientNet-B4 (width 1.4, depth 1.8)",
       {{"resolution", 380}, {"num_classes", 1000}, {"group_dim", 1}, {"expand_ratio", 6}},
       [](const Hyperparameters& hp) { return make_efficientnet(hp, 4); }},
      {"efficientnet_b4_g16",
       "G16-EfficientNet-B4 (Masters et al. 2021): grouped convs of 16 channels per group, "
       "expansion ratio 4",
       {{"resolution", 380}, {"num_classes", 1000}, {"group_dim", 16}, {"expand_ratio", 4}},
       [](const Hyperparameters& hp) { return make_efficientnet(hp, 4); }},
      {"amoebanet_d",
       "AmoebaNet-D (N cells, F filters) as in torchgpipe's benchmark (24 layers at N=18)",
       {{"N", 18}, {"F", 256}, {"resolution", 224}, {"num_classes", 1000}},
       make_amoebanet_d},
      {"unet",
       "Simplified U-Net (B convs per block, C base channels, depth 5) as in torchgpipe's "
       "benchmark",
       {{"B", 5}, {"C", 64}, {"resolution", 192}, {"out_channels", 1}},
       make_unet},
      {"transformer",
       "Transformer encoder-decoder (Vaswani et al. 2017 base); layers = encoder + decoder layers",
       {{"layers", 12},
        {"d_model", 512},
        {"d_ff", 2048},
        {"heads", 8},
        {"seq_len", 128},
        {"vocab", 37000}},
       make_transformer},
      {"transformer48",
       "GPipe's Transformer-48: 24 encoder + 24 decoder layers, d_model 2048, d_ff 8192, 32 heads",
       {{"layers", 48},
        {"d_model", 2048},
        {"d_ff", 8192},
        {"heads", 32},
        {"seq_len", 256},
        {"vocab", 32000}},
       make_transformer},
      {"bert_base",
       "BERT-base encoder with pooler and a sequence-classification head",
       {{"layers", 12},
        {"d_model", 768},
        {"d_ff", 3072},
        {"heads", 12},
        {"seq_len", 128},
        {"vocab", 30522},
        {"num_classes", 2}},
       make_bert},
      {"bert_large",
       "BERT-large encoder with pooler and a sequence-classification head",
       {{"layers", 24},
        {"d_model", 1024},
        {"d_ff", 4096},
        {"heads", 16},
        {"seq_len", 128},
        {"vocab", 30522},
        {"num_classes", 2}},
       make_bert},
      {"gpt2",
       "GPT-2 small (124M), language-model head tied to the token embedding",
       {{"n_layer", 12}, {"d_model", 768}, {"heads", 12}, {"seq_len", 1024}, {"vocab", 50257}},
       make_gpt2},
      {"gpt2_medium",
       "GPT-2 medium (355M)",
       {{"n_layer", 24}, {"d_model", 1024}, {"heads", 16}, {"seq_len", 1024}, {"vocab", 50257}},
       make_gpt2},
      {"gpt2_large",
       "GPT-2 large (774M)",
       {{"n_layer", 36}, {"d_model", 1280}, {"heads", 20}, {"seq_len", 1024}, {"vocab", 50257}},
       make_gpt2},
      {"gpt2_xl",
       "GPT-2 XL (1.5B)",
       {{"n_layer", 48}, {"d_model", 1600}, {"heads", 25}, {"seq_len", 1024}, {"vocab", 50257}},
       make_gpt2},
      {"lstm_ptb",
       "2-layer LSTM language model on PTB (Zaremba et al. 2014 medium; hidden=1500 for large)",
       {{"layers", 2}, {"hidden", 650}, {"seq_len", 35}, {"vocab", 10000}},
       make_lstm_lm},
      {"mnist_mlp",
       "3-layer MLP for MNIST (MXNet's example mlp: 128-64-10, ReLU)",
       {{"hidden1", 128}, {"hidden2", 64}, {"resolution", 28}, {"num_classes", 10}},
       make_mnist_mlp},
  };
  return table;
}

std::string format_value(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

template <typename Range, typename F>
std::vector<std::string> names_of(const Range& range, F f) {
  std::vector<std::string> names;
  for (const auto& x : range)
    names.push_back(f(x));
  return names;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string best = sim::nearest_name(word, candidates);
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words)
    s += (s.empty() ? "" : ", ") + w;
  return s;
}

}  // namespace

std::vector<ModelInfo> zoo_catalog() {
  std::vector<ModelInfo> out;
  for (const auto& e : entries())
    out.push_back({e.name, e.description, e.defaults});
  return out;
}

ZooModel build_zoo_model(const std::string& name, const std::map<std::string, double>& overrides,
                         const std::string& where) {
  const Entry* entry = nullptr;
  for (const auto& e : entries()) {
    if (name == e.name) entry = &e;
  }
  if (entry == nullptr) {
    const auto names = names_of(entries(), [](const Entry& e) { return std::string(e.name); });
    throw InputError("model '" + name + "'", "unknown model '" + name + "'" +
                                                 did_you_mean(name, names) +
                                                 "; known models: " + join(names));
  }
  const std::string model_where = "model '" + name + "'";
  std::map<std::string, double> values = entry->defaults;
  const auto keys = names_of(entry->defaults, [](const auto& kv) { return kv.first; });
  for (const auto& [key, value] : overrides) {
    const std::string key_where = where.empty() ? model_where : where + " " + key;
    if (entry->defaults.count(key) == 0) {
      throw InputError(key_where, model_where + " has no hyper-parameter '" + key + "'" +
                                      did_you_mean(key, keys) +
                                      "; its hyper-parameters are: " + join(keys));
    }
    if (!std::isfinite(value) || value <= 0 || value != std::floor(value) || value > 1e12) {
      throw InputError(key_where, model_where + ": " + key + "=" + format_value(value) +
                                      " must be a positive integer");
    }
    values[key] = value;
  }
  ZooModel model;
  try {
    model = entry->generate(Hyperparameters(values));
  } catch (const ShapeError& e) {
    std::string settings;
    for (const auto& [key, value] : overrides)
      settings += " " + key + "=" + format_value(value);
    throw InputError(model_where, std::string("cannot be built with") +
                                      (settings.empty() ? " its defaults" : settings) + ": " +
                                      e.what());
  }
  model.name = entry->name;
  model.description = entry->description;
  model.hyperparameters = values;
  return model;
}

}  // namespace trainsim::models
