// Structure and conventions of the zoo: layer granularity that pipeline balance lists rely on,
// backward-cost conventions, input description, and errors for bad hyper-parameters.
#include <catch2/catch.hpp>
#include <numeric>
#include <set>
#include <string>

#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo.hpp"
#include "sim/core/input_error.hpp"
#include "support/zoo_models.hpp"

using trainsim::InputError;
using trainsim::models::build_zoo_model;
using trainsim::models::InputDtype;
using trainsim::models::OpClass;
using trainsim::models::zoo_catalog;
using trainsim::models::ZooModel;
using trainsim::test::build;
using trainsim::test::layer_named;
using trainsim::test::params_of;

TEST_CASE("every catalog model builds with consistent totals") {
  const auto catalog = zoo_catalog();
  CHECK(catalog.size() == 52);
  for (const auto& info : catalog) {
    INFO(info.name);
    const ZooModel m = build(info.name);
    CHECK(m.name == info.name);
    CHECK(m.hyperparameters == info.defaults);
    REQUIRE(!m.layers.empty());
    CHECK(m.params() > 0);
    CHECK(m.fwd_flops() >= 2 * m.fwd_macs());
    CHECK(m.bwd_flops() > m.fwd_flops());
    CHECK(m.saved_elements() > 0);
    CHECK(m.input_bytes_per_sample() > 0);
    std::set<std::string> names;
    for (const auto& l : m.layers) {
      CHECK(names.insert(l.name).second);
      CHECK(l.output_elements > 0);
      CHECK(!l.output_shape.empty());
    }
  }
}

TEST_CASE("layer counts match torchgpipe's nn.Sequential, which its balance lists sum to") {
  // tests/reference_data/torchgpipe_speed_benchmarks.csv: AmoebaNet-D (18, 256) balance [7, 17],
  // ResNet-101 [370], U-Net (5, 64) [241]; torchgpipe_memory_benchmarks.csv: U-Net (11, 128)
  // [505], (24, 128) [526, 551], (48, 160) sums to 2133; AmoebaNet-D (18, *) [24].
  CHECK(build("amoebanet_d").layers.size() == 24);
  CHECK(build("resnet101").layers.size() == 370);
  CHECK(build("unet").layers.size() == 241);
  CHECK(build("unet", {{"B", 11}, {"C", 128}}).layers.size() == 505);
  CHECK(build("unet", {{"B", 24}, {"C", 128}}).layers.size() == 526 + 551);
  CHECK(build("unet", {{"B", 48}, {"C", 160}}).layers.size() ==
        800 + 140 + 62 + 36 + 36 + 36 + 36 + 987);
}

TEST_CASE("backward convention: input and weight gradients each cost one forward of a conv") {
  const ZooModel m = build("resnet50");
  const auto& first = m.layers.front();
  CHECK(first.op == OpClass::conv);
  CHECK(first.bwd_input_flops == 0);  // the data needs no gradient
  CHECK(first.bwd_weight_flops == Approx(2 * first.fwd_macs));
  for (const auto& l : m.layers) {
    if (l.name == "layer1.0.conv2") {
      CHECK(l.bwd_input_flops == Approx(2 * l.fwd_macs));
      CHECK(l.bwd_weight_flops == Approx(2 * l.fwd_macs));
      CHECK(l.saved_elements == 0);  // its input is relu1's output, already kept by relu1
    }
  }
  CHECK(m.train_flops() == Approx(3 * m.fwd_flops()).epsilon(0.05));
}

TEST_CASE("op classes are meaningful") {
  const ZooModel b0 = build("efficientnet_b0");
  const ZooModel g16 = build("efficientnet_b4_g16");
  auto count = [](const ZooModel& m, OpClass op) {
    return std::count_if(m.layers.begin(), m.layers.end(),
                         [&](const auto& l) { return l.op == op; });
  };
  CHECK(count(b0, OpClass::depthwise_conv) == 16);  // one per MBConv block
  CHECK(count(b0, OpClass::grouped_conv) == 0);
  CHECK(count(g16, OpClass::grouped_conv) ==
        count(build("efficientnet_b4"), OpClass::depthwise_conv));
  CHECK(count(build("gpt2"), OpClass::attention) == 12);
  CHECK(count(build("lstm_ptb"), OpClass::recurrent) == 2);
  CHECK(count(build("bert_base"), OpClass::embedding) == 1);
}

TEST_CASE("G16 grouped convs hold 16 channels per group") {
  const ZooModel m = build("efficientnet_b4_g16");
  bool found = false;
  for (const auto& l : m.layers) {
    if (l.name == "features.2.1.dwconv") {
      // B4's second stage: 32 channels expanded 4x to 128, 3x3 kernel, 16 input channels per
      // group: 128 * 16 * 9 weights plus BN's gamma and beta.
      CHECK(l.params == 128 * 16 * 9 + 2 * 128);
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("input resolution and sequence length scale the work") {
  CHECK(build("resnet50", {{"resolution", 448}}).fwd_macs() ==
        Approx(4 * build("resnet50").fwd_macs()).epsilon(0.01));
  const ZooModel bert = build("bert_base", {{"seq_len", 512}});
  CHECK(bert.input_shape == std::vector<std::int64_t>{512});
  CHECK(bert.input_dtype == InputDtype::int32);
  CHECK(bert.input_bytes_per_sample() == 2048);
  const ZooModel img = build("resnet50");
  CHECK(img.input_dtype == InputDtype::uint8);
  CHECK(img.input_bytes_per_sample() == 3 * 224 * 224);
  CHECK(build("mnist_mlp").input_dtype == InputDtype::fp32);
}

TEST_CASE("bad models and hyper-parameters are input errors that name the culprit") {
  CHECK_THROWS_WITH(build("resnet5"), Catch::Contains("unknown model 'resnet5'") &&
                                          Catch::Contains("did you mean 'resnet50'"));
  CHECK_THROWS_WITH(
      build("resnet50", {{"resolutoin", 224}}),
      Catch::Contains("--set resolutoin") && Catch::Contains("did you mean 'resolution'"));
  CHECK_THROWS_WITH(build("resnet50", {{"resolution", 0}}), Catch::Contains("resolution=0"));
  CHECK_THROWS_WITH(build("resnet50", {{"resolution", 2.5}}), Catch::Contains("positive integer"));
  CHECK_THROWS_WITH(build("vgg16", {{"resolution", 8}}), Catch::Contains("resolution=8"));
  CHECK_THROWS_WITH(build("gpt2", {{"heads", 5}}), Catch::Contains("heads=5"));
  CHECK_THROWS_WITH(build("resnet20", {{"depth", 21}}), Catch::Contains("depth=21"));
  CHECK_THROWS_AS(build("amoebanet_d", {{"N", 10}}), InputError);
  CHECK_THROWS_WITH(build("waveglow", {{"segment_length", 8001}}),
                    Catch::Contains("segment_length=8001"));
  CHECK_THROWS_WITH(build("transformerxl_base", {{"vocab", 1000}}), Catch::Contains("vocab=1000"));
  CHECK_THROWS_WITH(build("ncf", {{"mlp_0", 255}}), Catch::Contains("mlp_0=255"));
  CHECK_THROWS_WITH(build("gnmt", {{"layers", 1}}), Catch::Contains("layers=1"));
}

TEST_CASE("an LSTM launches cuDNN's kernels: per step one recurrent GEMM and one gate kernel") {
  using trainsim::models::KernelSpec;
  using trainsim::models::LstmInput;
  using trainsim::models::NetBuilder;
  const std::int64_t h = 256, steps = 10;
  const auto build_lstm = [&](LstmInput input, std::int64_t width) {
    NetBuilder nb;
    const auto x = nb.input({steps, width}, true);
    nb.begin("lstm", OpClass::recurrent, x.elements());
    nb.end(nb.lstm(x, h, input));
    return nb.take_layers().at(0);
  };
  const auto sum_flops = [](const std::vector<KernelSpec>& ks) {
    double f = 0;
    for (const auto& k : ks)
      f += k.flops * k.repeat;
    return f;
  };
  // cuDNN's form only (the layer also carries TensorFlow's BlockLSTM form, tested below).
  const auto cudnn_form = [](trainsim::models::Layer l) {
    for (auto* ks : {&l.fwd_kernels, &l.bwd_kernels})
      std::erase_if(*ks, [](const KernelSpec& k) {
        return k.rnn_form == trainsim::models::RnnForm::tf_block_only;
      });
    return l;
  };
  const auto linear = cudnn_form(build_lstm(LstmInput::linear, h));
  const auto skip = cudnn_form(build_lstm(LstmInput::skip, h));
  // Linear input: the input projection GEMM over all steps, then the steps.
  REQUIRE(linear.fwd_kernels.size() == 3);
  CHECK(std::string(linear.fwd_kernels[0].what) == "lstm input projection");
  CHECK(linear.fwd_kernels[1].repeat == steps);
  CHECK(linear.fwd_kernels[1].cls == trainsim::sim::KernelClass::recurrent);
  CHECK(linear.fwd_kernels[2].repeat == steps);
  CHECK(linear.fwd_kernels[2].cls == trainsim::sim::KernelClass::elementwise);
  // Skip input (CUDNN_SKIP_INPUT, DeepBench's mode): no input GEMMs, no input weights.
  REQUIRE(skip.fwd_kernels.size() == 2);
  CHECK(skip.params == 4 * h * h + 8 * h);
  CHECK(linear.params == 4 * h * (h + h) + 8 * h);
  const auto weight_grad = [](const auto& layer) {
    for (const auto& k : layer.bwd_kernels)
      if (std::string(k.what) == "lstm weight grad") return k.flops;
    return 0.0;
  };
  CHECK(weight_grad(skip) == Approx(weight_grad(linear) / 2));
  CHECK(sum_flops(skip.fwd_kernels) < sum_flops(linear.fwd_kernels));
  CHECK(skip.bwd_kernels.size() + 1 == linear.bwd_kernels.size());  // no input dgrad GEMM
  // Skip input needs inputs as wide as the hidden state.
  CHECK_THROWS_AS(build_lstm(LstmInput::skip, h + 1), trainsim::models::ShapeError);
}

TEST_CASE("an LSTM also carries TensorFlow's BlockLSTM form: per step xh, one GEMM, the gates") {
  using trainsim::models::LstmInput;
  using trainsim::models::NetBuilder;
  using trainsim::models::RnnForm;
  const std::int64_t h = 128, in = 64, steps = 7;
  NetBuilder nb;
  const auto x = nb.input({steps, in}, true);
  nb.begin("lstm", OpClass::recurrent, x.elements());
  nb.end(nb.lstm(x, h, LstmInput::linear));
  const auto layer = nb.take_layers().at(0);
  const auto flops_of = [](const auto& ks, RnnForm form) {
    double f = 0;
    for (const auto& k : ks)
      if (k.rnn_form == form) f += k.flops * k.repeat;
    return f;
  };
  // Both forms do the same GEMM work: 2 x 4h(in + h) per step and sample each way, and the
  // weight gradient once more in backward.
  const double gemm = 2.0 * 4 * h * (in + h) * steps;
  CHECK(flops_of(layer.fwd_kernels, RnnForm::tf_block_only) > gemm);
  CHECK(flops_of(layer.fwd_kernels, RnnForm::tf_block_only) ==
        Approx(flops_of(layer.fwd_kernels, RnnForm::cudnn_only)));
  CHECK(flops_of(layer.bwd_kernels, RnnForm::tf_block_only) ==
        Approx(flops_of(layer.bwd_kernels, RnnForm::cudnn_only)));
  // BlockLSTM accumulates the weight gradient every step (a GEMM whose reduction is the batch);
  // cuDNN runs it once over all steps.
  int block_wgrad = 0, cudnn_wgrad = 0;
  for (const auto& k : layer.bwd_kernels) {
    if (std::string(k.what) == "lstm weight grad step") block_wgrad = k.repeat;
    if (std::string(k.what) == "lstm weight grad") cudnn_wgrad = k.repeat;
  }
  CHECK(block_wgrad == steps);
  CHECK(cudnn_wgrad == 1);
  // cuDNN adds the weight gradient into dw (cudnnRNNBackwardWeights is additive): one pass after
  // the GEMM reading its result and dw and writing dw, whatever the batch and the steps.
  const auto bwd_kernel = [&](const std::string& what) {
    const trainsim::models::KernelSpec* found = nullptr;
    for (const auto& k : layer.bwd_kernels) {
      if (k.what == what) found = &k;
    }
    return found;
  };
  const trainsim::models::KernelSpec* accumulate = bwd_kernel("lstm weight grad accumulate");
  REQUIRE(accumulate != nullptr);
  CHECK(accumulate->rnn_form == RnnForm::cudnn_only);
  CHECK(accumulate->act_elements == 0);
  CHECK(accumulate->param_elements == Approx(3.0 * 4 * h * (in + h)));
  // It writes the eight bias vectors' gradients too: the gate gradients (4h per sample and step)
  // summed over samples and steps, once; BlockLSTM sums them every step.
  const trainsim::models::KernelSpec* biases = bwd_kernel("lstm weight grad biases");
  REQUIRE(biases != nullptr);
  CHECK(biases->rnn_form == RnnForm::cudnn_only);
  CHECK(biases->repeat == 1);
  CHECK(biases->act_elements == Approx(4.0 * h * steps));
  CHECK(biases->param_elements == Approx(8.0 * h));
  for (const auto& k : layer.fwd_kernels)
    CHECK(k.rnn_form != RnnForm::any);  // every kernel belongs to exactly one form
}

TEST_CASE("BERT projects Q, K and V with three Linears; GPT-2 with one fused QKV") {
  // Google's and NVIDIA DeepLearningExamples' modeling.py: query, key and value Linears, each
  // with a weight and a bias; GPT-2's c_attn is one fused projection.
  const auto linear_fwd = [](const trainsim::models::Layer& l) {
    int n = 0;
    for (const auto& k : l.fwd_kernels)
      n += std::string(k.what) == "linear fwd";
    return n;
  };
  const ZooModel bert = build("bert_large");
  const auto& bert_attn = layer_named(bert, "layer.0.attention");
  CHECK(linear_fwd(bert_attn) == 4);     // query, key, value, output
  CHECK(bert_attn.param_tensors == 10);  // 4 weights, 4 biases, the layer norm's 2
  CHECK(bert_attn.params == 4 * (1024 * 1024 + 1024) + 2 * 1024);
  // 24 x (10 + the MLP's 6) + embeddings (3 tables, 1 norm) + pooler + classifier: 393, as
  // DeepLearningExamples' BERT-large for SQuAD.
  CHECK(bert.param_tensors() == 24 * 16 + 5 + 2 + 2);
  const ZooModel gpt2 = build("gpt2");
  for (const auto& l : gpt2.layers) {
    if (l.op != OpClass::attention) continue;
    CHECK(linear_fwd(l) == 2);  // c_attn (fused QKV), c_proj
    break;
  }
}
