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
  // The PyTorch and TensorFlow recipes of a DeepLearningExamples model train the same network at
  // the same settings; the catalog's two entries share its defaults.
  // GNMT v2: 4+4 LSTM layers of 1024, train-max-length 50, a 32320-token shared vocabulary.
  static const std::map<std::string, double> gnmt{
      {"hidden", 1024}, {"layers", 4}, {"seq_len", 50}, {"vocab", 32320}};
  // Transformer-XL base: wt103_base.yaml (PyTorch) and run_wt103_base.sh (TensorFlow).
  static const std::map<std::string, double> transformerxl_base{
      {"n_layer", 16},
      {"d_model", 512},
      {"n_head", 8},
      {"d_head", 64},
      {"d_inner", 2048},
      {"tgt_len", 192},
      {"mem_len", 192},
      {"vocab", 267735},
      // adaptive: true (a head and three tails; 1 = train.py without it)
      {"adaptive_clusters", 4},
      {"div_val", 1}};
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
      {"resnet32",
       "ResNet-32 for CIFAR-10 (He et al. 2016, option A shortcuts); depth = 6n+2",
       {{"depth", 32}, {"resolution", 32}, {"num_classes", 10}},
       make_resnet_cifar},
      {"resnet56",
       "ResNet-56 for CIFAR-10 (He et al. 2016, option A shortcuts); depth = 6n+2",
       {{"depth", 56}, {"resolution", 32}, {"num_classes", 10}},
       make_resnet_cifar},
      {"vgg16",
       "VGG-16 (configuration D, torchvision)",
       {{"resolution", 224}, {"num_classes", 1000}},
       make_vgg16},
      {"vgg16_cifar",
       "VGG-16 for CIFAR-10 with batch norm and one linear classifier (gTop-k S-SGD code, "
       "hclhkbu/gtopkssgd models/vgg.py)",
       {{"resolution", 32}, {"num_classes", 10}},
       make_vgg16_cifar},
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
       "GPT-2 small (124M), language-model head tied to the token embedding; GELU as Hugging Face "
       "transformers computes it (gelu_new: eight eager ops)",
       {{"n_layer", 12},
        {"d_model", 768},
        {"heads", 12},
        {"seq_len", 1024},
        {"vocab", 50257},
        {"gelu_kernels", 8}},
       make_gpt2},
      {"gpt2_medium",
       "GPT-2 medium (355M)",
       {{"n_layer", 24},
        {"d_model", 1024},
        {"heads", 16},
        {"seq_len", 1024},
        {"vocab", 50257},
        {"gelu_kernels", 8}},
       make_gpt2},
      {"gpt2_large",
       "GPT-2 large (774M)",
       {{"n_layer", 36},
        {"d_model", 1280},
        {"heads", 20},
        {"seq_len", 1024},
        {"vocab", 50257},
        {"gelu_kernels", 8}},
       make_gpt2},
      {"gpt2_xl",
       "GPT-2 XL (1.5B)",
       {{"n_layer", 48},
        {"d_model", 1600},
        {"heads", 25},
        {"seq_len", 1024},
        {"vocab", 50257},
        {"gelu_kernels", 8}},
       make_gpt2},
      {"lstm_ptb",
       "2-layer LSTM language model on PTB (Zaremba et al. 2014 medium; hidden=1500 for large)",
       {{"layers", 2}, {"hidden", 650}, {"seq_len", 35}, {"vocab", 10000}},
       make_lstm_lm},
      {"mnist_mlp",
       "3-layer MLP for MNIST (MXNet's example mlp: 128-64-10, ReLU)",
       {{"hidden1", 128}, {"hidden2", 64}, {"resolution", 28}, {"num_classes", 10}},
       make_mnist_mlp},
      // NVIDIA DeepLearningExamples (PyTorch) models, at the settings of its training scripts.
      {"ssd300",
       "SSD300 v1.1 with a ResNet-50 backbone on COCO (DeepLearningExamples PyTorch "
       "Detection/SSD)",
       {{"resolution", 300}, {"num_classes", 81}},
       make_ssd300},
      {"gnmt",
       "GNMT v2 (DeepLearningExamples PyTorch Translation/GNMT): 4+4 LSTM layers of 1024, first "
       "encoder layer bidirectional, normalized Bahdanau attention, shared vocabulary; seq_len "
       "tokens per sentence on each side (train-max-length 50)",
       gnmt, [](const Hyperparameters& hp) { return make_gnmt(hp, GnmtDecoder::layers); }},
      {"gnmt_tf",
       "GNMT v2 as DeepLearningExamples' TensorFlow nmt.py trains it: the same network, its "
       "decoder a tf.nn.dynamic_rnn loop over unfused LSTM cells and the attention, one step per "
       "target token (one bias per LSTM)",
       gnmt, [](const Hyperparameters& hp) { return make_gnmt(hp, GnmtDecoder::step_loop); }},
      {"ncf",
       "NeuMF on MovieLens-20M (DeepLearningExamples PyTorch Recommendation/NCF): GMF with 64 "
       "factors and MLP 256-256-128-64; a sample is one (user, item) pair",
       {{"users", 138493},
        {"items", 26744},
        {"factors", 64},
        {"mlp_0", 256},
        {"mlp_1", 256},
        {"mlp_2", 128},
        {"mlp_3", 64}},
       make_ncf},
      {"tacotron2",
       "Tacotron 2 (DeepLearningExamples PyTorch SpeechSynthesis/Tacotron2); text_len characters "
       "and mel_frames frames per utterance as the padded batch runs them (LJSpeech's longest)",
       // A training batch is padded to its longest utterance (DeepLearningExamples
       // tacotron2/data_function.py TextMelCollate pads text and mels to the batch maximum), and
       // the decoder loop runs that many steps. datasheet: LJSpeech-1.1 README
       // (keithito.com/LJ-Speech-Dataset): longest clip 10.10 s, i.e. 10.10 s x 22050 Hz / 256
       // hop = 870 mel frames; a batch of 64 or more random clips almost always holds one near
       // it. estimate: its transcript at the mean rate of 1,308,678 characters per 23.9 h
       // (100 characters per 6.57 s clip), 154 characters. (Per utterance on average: 100
       // characters and 566 frames; throughput tables count those real frames.)
       {{"text_len", 154}, {"mel_frames", 870}, {"n_symbols", 148}, {"n_mel_channels", 80}},
       make_tacotron2},
      {"waveglow",
       "WaveGlow (DeepLearningExamples PyTorch SpeechSynthesis/Tacotron2 waveglow, training "
       "defaults: 512 WN channels, 8000-sample segments)",
       {{"segment_length", 8000}, {"n_channels", 512}, {"n_flows", 12}, {"n_layers", 8}},
       make_waveglow},
      {"transformerxl_base",
       "Transformer-XL base on WikiText-103 (DeepLearningExamples PyTorch "
       "LanguageModeling/Transformer-XL wt103_base.yaml); tgt_len tokens per segment, mem_len "
       "cached",
       transformerxl_base,
       // wt103_base.yaml: dropatt 0.0
       [](const Hyperparameters& hp) { return make_transformer_xl(hp, false); }},
      {"transformerxl_base_tf",
       "Transformer-XL base as DeepLearningExamples' TensorFlow script trains it (tf/model.py, "
       "run_wt103_base.sh: the same network and settings): its ops as TF1 runs them, tf.nn.dropout "
       "as five kernels, the relative attention's transpose, pad-and-slice shift and arithmetic "
       "mask, tf.contrib's layer norm as ten kernels",
       transformerxl_base,
       // run_wt103_base.sh: --dropatt=0.0
       [](const Hyperparameters& hp) { return make_transformer_xl(hp, false, true); }},
      {"transformerxl_large",
       "Transformer-XL large on WikiText-103 (DeepLearningExamples PyTorch "
       "LanguageModeling/Transformer-XL wt103_large.yaml); tgt_len tokens per segment, mem_len "
       "cached",
       {{"n_layer", 18},
        {"d_model", 1024},
        {"n_head", 16},
        {"d_head", 64},
        {"d_inner", 4096},
        {"tgt_len", 384},
        {"mem_len", 384},
        {"vocab", 267735},
        // wt103_large.yaml: adaptive: true (a head and three tails; 1 = train.py without it)
        {"adaptive_clusters", 4},
        {"div_val", 4}},
       // wt103_large.yaml: dropatt 0.2
       [](const Hyperparameters& hp) { return make_transformer_xl(hp, true); }},
      // T5 v1.0 (Raffel et al. 2020, Sec. 3.7 "Model sizes"; Hugging Face t5-small/base/large
      // configs, 32128-token vocabulary). Span-corruption pre-training with 512 input tokens, 15%
      // noise and spans of 3 gives 114 target tokens (google-research/text-to-text-transfer-
      // transformer, t5/data/preprocessors.py random_spans_helper).
      {"t5_small",
       "T5 small (60M): encoder-decoder, relative position bias, ReLU MLP, tied output layer",
       {{"layers", 6},
        {"d_model", 512},
        {"d_ff", 2048},
        {"heads", 8},
        {"d_kv", 64},
        {"seq_len", 512},
        {"tgt_len", 114},
        {"vocab", 32128}},
       make_t5},
      {"t5_base",
       "T5 base (220M): encoder-decoder, relative position bias, ReLU MLP, tied output layer",
       {{"layers", 12},
        {"d_model", 768},
        {"d_ff", 3072},
        {"heads", 12},
        {"d_kv", 64},
        {"seq_len", 512},
        {"tgt_len", 114},
        {"vocab", 32128}},
       make_t5},
      {"t5_large",
       "T5 large (770M): encoder-decoder, relative position bias, ReLU MLP, tied output layer",
       {{"layers", 24},
        {"d_model", 1024},
        {"d_ff", 4096},
        {"heads", 16},
        {"d_kv", 64},
        {"seq_len", 512},
        {"tgt_len", 114},
        {"vocab", 32128}},
       make_t5},
      // GPT-3 (Brown et al. 2020, Table 2.1: n_layers, d_model, n_heads, d_head; n_ctx 2048,
      // GPT-2's 50257-token vocabulary, tied embedding). All layers dense (the paper alternates
      // dense and locally banded sparse attention). Where Table 2.1's n_heads x d_head is not
      // d_model the attention width is n_heads x d_head (13B: 40 x 128 = 5120 on d_model 5140);
      // for 1.3B that product (24 x 128) would add 0.2B parameters to the published 1.3B, so it
      // has 16 heads of 128, as Megatron-LM and NeMo configure GPT-3 1.3B.
      {"gpt3_125m",
       "GPT-3 Small (125M)",
       {{"n_layer", 12},
        {"d_model", 768},
        {"heads", 12},
        {"d_head", 64},
        {"seq_len", 2048},
        {"vocab", 50257}},
       make_gpt3},
      {"gpt3_350m",
       "GPT-3 Medium (350M)",
       {{"n_layer", 24},
        {"d_model", 1024},
        {"heads", 16},
        {"d_head", 64},
        {"seq_len", 2048},
        {"vocab", 50257}},
       make_gpt3},
      {"gpt3_760m",
       "GPT-3 Large (760M)",
       {{"n_layer", 24},
        {"d_model", 1536},
        {"heads", 16},
        {"d_head", 96},
        {"seq_len", 2048},
        {"vocab", 50257}},
       make_gpt3},
      {"gpt3_1_3b",
       "GPT-3 XL (1.3B), 16 heads of 128",
       {{"n_layer", 24},
        {"d_model", 2048},
        {"heads", 16},
        {"d_head", 128},
        {"seq_len", 2048},
        {"vocab", 50257}},
       make_gpt3},
      {"gpt3_2_7b",
       "GPT-3 2.7B",
       {{"n_layer", 32},
        {"d_model", 2560},
        {"heads", 32},
        {"d_head", 80},
        {"seq_len", 2048},
        {"vocab", 50257}},
       make_gpt3},
      {"gpt3_6_7b",
       "GPT-3 6.7B",
       {{"n_layer", 32},
        {"d_model", 4096},
        {"heads", 32},
        {"d_head", 128},
        {"seq_len", 2048},
        {"vocab", 50257}},
       make_gpt3},
      {"gpt3_13b",
       "GPT-3 13B (d_model 5140, attention width 40 x 128)",
       {{"n_layer", 40},
        {"d_model", 5140},
        {"heads", 40},
        {"d_head", 128},
        {"seq_len", 2048},
        {"vocab", 50257}},
       make_gpt3},
      {"gpt3_175b",
       "GPT-3 175B",
       {{"n_layer", 96},
        {"d_model", 12288},
        {"heads", 96},
        {"d_head", 128},
        {"seq_len", 2048},
        {"vocab", 50257}},
       make_gpt3},
      // Llama 2 (Touvron et al. 2023, Table 1 and Meta's params.json: 4096-token context, 32000
      // tokens, grouped-query attention with 8 KV heads for 70B) and Llama 3 (Meta 2024 model
      // card and params.json: 8192-token context, 128256 tokens, 8 KV heads).
      {"llama2_7b",
       "Llama 2 7B: RMSNorm, SwiGLU, rotary positions, untied output",
       {{"n_layer", 32},
        {"d_model", 4096},
        {"heads", 32},
        {"kv_heads", 32},
        {"d_ff", 11008},
        {"seq_len", 4096},
        {"vocab", 32000}},
       make_llama},
      {"llama2_13b",
       "Llama 2 13B: RMSNorm, SwiGLU, rotary positions, untied output",
       {{"n_layer", 40},
        {"d_model", 5120},
        {"heads", 40},
        {"kv_heads", 40},
        {"d_ff", 13824},
        {"seq_len", 4096},
        {"vocab", 32000}},
       make_llama},
      {"llama2_70b",
       "Llama 2 70B: grouped-query attention (8 KV heads), RMSNorm, SwiGLU, rotary positions",
       {{"n_layer", 80},
        {"d_model", 8192},
        {"heads", 64},
        {"kv_heads", 8},
        {"d_ff", 28672},
        {"seq_len", 4096},
        {"vocab", 32000}},
       make_llama},
      {"llama3_8b",
       "Llama 3 8B: grouped-query attention (8 KV heads), RMSNorm, SwiGLU, rotary positions",
       {{"n_layer", 32},
        {"d_model", 4096},
        {"heads", 32},
        {"kv_heads", 8},
        {"d_ff", 14336},
        {"seq_len", 8192},
        {"vocab", 128256}},
       make_llama},
      {"llama3_70b",
       "Llama 3 70B: grouped-query attention (8 KV heads), RMSNorm, SwiGLU, rotary positions",
       {{"n_layer", 80},
        {"d_model", 8192},
        {"heads", 64},
        {"kv_heads", 8},
        {"d_ff", 28672},
        {"seq_len", 8192},
        {"vocab", 128256}},
       make_llama},
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

ZooModel generate_catalog_model(const std::string& name,
                                const std::map<std::string, double>& values,
                                const TensorParallelism& parallel) {
  for (const auto& e : entries()) {
    if (name != e.name) continue;
    ZooModel model = e.generate(Hyperparameters(values, parallel));
    model.name = e.name;
    model.description = e.description;
    model.hyperparameters = values;
    return model;
  }
  throw std::logic_error("generate_catalog_model: no catalog model '" + name + "'");
}

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
    model = generate_catalog_model(entry->name, values, {});
  } catch (const ShapeError& e) {
    std::string settings;
    for (const auto& [key, value] : overrides)
      settings += " " + key + "=" + format_value(value);
    throw InputError(model_where, std::string("cannot be built with") +
                                      (settings.empty() ? " its defaults" : settings) + ": " +
                                      e.what());
  }
  return model;
}

}  // namespace trainsim::models
