// Parameter counts (and multiply-adds where published) of the public-benchmark models: NVIDIA
// DeepLearningExamples (SSD300, GNMT, NCF, Tacotron 2, WaveGlow, Transformer-XL), T5 and the CIFAR
// variants. Every expected value names its source. Tolerances: exact where the source gives the
// exact count, otherwise half a unit of the last published digit, unless the comment says why not.
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>

#include "models/zoo/zoo.hpp"
#include "support/zoo_models.hpp"

using trainsim::models::build_zoo_model;
using trainsim::models::ZooModel;
using trainsim::test::build;
using trainsim::test::layer_named;
using trainsim::test::params_of;

TEST_CASE("CIFAR VGG-16 (gTop-k S-SGD code) and ResNet-32/56 (He et al. 2016)") {
  // Shi et al. 2019, "A Distributed Synchronous SGD Algorithm with Global Top-k Sparsification
  // for Low Bandwidth Networks" (ICDCS), Table II: VGG-16 on CIFAR-10, 14,728,266 parameters, the
  // model of hclhkbu/gtopkssgd@0edc19b models/vgg.py.
  const ZooModel vgg = build("vgg16_cifar");
  CHECK(vgg.params() == 14'728'266);
  // Multiply-adds by hand from models/vgg.py: 3x3 convs at 32, 16, 8, 4 and 2 pixels, then the
  // 512 -> 10 classifier.
  const double macs = 32.0 * 32 * 64 * 27 + 32.0 * 32 * 64 * 576 + 16.0 * 16 * 128 * 576 +
                      16.0 * 16 * 128 * 1152 + 8.0 * 8 * 256 * 1152 + 2 * (8.0 * 8 * 256 * 2304) +
                      4.0 * 4 * 512 * 2304 + 2 * (4.0 * 4 * 512 * 4608) +
                      3 * (2.0 * 2 * 512 * 4608) + 512 * 10;
  CHECK(vgg.fwd_macs() == Approx(macs));
  // He et al. 2016, Table 6: ResNet-32 0.46 M, ResNet-56 0.85 M (option A shortcuts, CIFAR-10).
  CHECK(params_of(build("resnet32")) == Approx(0.46e6).epsilon(0.005 / 0.46));
  CHECK(params_of(build("resnet56")) == Approx(0.85e6).epsilon(0.005 / 0.85));
  // resnet20 is the same CIFAR network at depth 20 (its own test checks 0.27 M and the MACs).
  CHECK(build("resnet32").hyperparameters.at("depth") == 32);
  CHECK(build("resnet20", {{"depth", 56}}).params() == build("resnet56").params());
}

TEST_CASE("SSD300 with a ResNet-50 backbone (DeepLearningExamples)") {
  // yannqi/SSD-for-pytorch@da6afc3 README.md, which runs DeepLearningExamples' ssd/model.py:
  // "Model summary: 173 layers, 22894902 parameters" and "Model FLOPs: 20.213G" (thop's count of
  // multiply-adds at 300x300).
  const ZooModel m = build("ssd300");
  CHECK(m.params() == 22'894'902);
  // thop also counts batch norms and pooling, which fwd_macs leaves out (the backbone's batch
  // norms alone are about 0.3% of the multiply-adds), so the tolerance is 0.5%.
  CHECK(m.fwd_macs() / 1e9 == Approx(20.213).epsilon(0.005));
  // 8732 default boxes of 4 coordinates and 81 class scores reach the loss.
  CHECK(m.layers.back().saved_elements >= 8732.0 * 85);
}

TEST_CASE("GNMT v2 (DeepLearningExamples, MLPerf)") {
  // mlbench/mlbench.github.io@aeed8d3 _posts/2020-10-02-nlp-translation.md (the MLPerf GNMT
  // reference, 4+4 layers of 1024): "a total of 160,671,297 trainable parameters".
  CHECK(build("gnmt").params() == 160'671'297);
  // By hand from seq2seq/models/*.py with a 32320-token vocabulary: the shared embedding, the
  // bidirectional LSTM (2 x 4h(h + h) + 2 x 8h), one LSTM from 2h, two from h, the attention LSTM,
  // linear_q, linear_k, the score vector with its scalar and bias, three decoder LSTMs from 2h and
  // the classifier.
  const double h = 1024;
  const double v = 32320;
  auto lstm = [&](double in) { return 4 * h * (in + h) + 8 * h; };
  CHECK(params_of(build("gnmt")) == v * h + 2 * lstm(h) + lstm(2 * h) + 2 * lstm(h) + lstm(h) +
                                        2 * h * h + 2 * h + 1 + 3 * lstm(2 * h) + h * v + v);
}

TEST_CASE("GNMT v2 as TensorFlow's nmt.py trains it: a dynamic_rnn decoder loop") {
  // NVIDIA/DeepLearningExamples@729963dd TensorFlow/Translation/GNMT: the same encoder; every
  // decoder cell is a tf.nn.rnn_cell.LSTMCell (one bias) fed [input, attention], the first one
  // too (AttentionWrapper's cell_input_fn concatenates the previous attention); the attention's
  // memory and query layers, score vector, scalar and bias as in PyTorch's.
  const double h = 1024;
  const double v = 32320;
  auto lstm = [&](double in) { return 4 * h * (in + h) + 8 * h; };
  auto tf_cell = [&](double in) { return 4 * h * (in + h) + 4 * h; };
  const ZooModel tf = build("gnmt_tf");
  CHECK(params_of(tf) == v * h + 2 * lstm(h) + lstm(2 * h) + 2 * lstm(h) + 4 * tf_cell(2 * h) +
                             2 * h * h + 2 * h + 1 + h * v + v);
  // The same arithmetic up to the first cell's wider input (about 1% of it)...
  const ZooModel pt = build("gnmt");
  CHECK(tf.fwd_macs() == Approx(pt.fwd_macs()).epsilon(0.05));
  // ... launched step by step: the loop's forward runs some 80 kernels per target token, several
  // times what PyTorch's decoder layers launch (counting both of their LSTM forms).
  auto launches = [](const ZooModel& m, const std::string& prefix) {
    double n = 0;
    for (const auto& l : m.layers) {
      if (l.name.rfind(prefix, 0) != 0) continue;
      for (const auto& k : l.fwd_kernels)
        n += k.repeat;
    }
    return n;
  };
  CHECK(launches(tf, "decoder.rnn") > 50 * 70);
  CHECK(launches(tf, "decoder.rnn") > 3 * launches(pt, "decoder."));
}

TEST_CASE("NCF / NeuMF on MovieLens-20M (DeepLearningExamples)") {
  // kljp/sage@9e1e954 ncf/run.sh, which trains DeepLearningExamples' NCF on ml-20m:
  // "threshold=1/(2*(31832577*density)^(1/2))", i.e. 31,832,577 parameters.
  const ZooModel m = build("ncf");
  CHECK(m.params() == 31'832'577);
  // By hand from neumf.py: four embeddings, linears 256-256-128-64, the final 128 -> 1.
  const std::int64_t users = 138'493;
  const std::int64_t items = 26'744;
  CHECK(m.params() == (users + items) * (64 + 128) + (256 * 256 + 256) + (256 * 128 + 128) +
                          (128 * 64 + 64) + (128 + 1));
  CHECK(m.input_shape == std::vector<std::int64_t>{2});  // one (user, item) pair per sample
}

TEST_CASE("Tacotron 2 and WaveGlow (DeepLearningExamples SpeechSynthesis)") {
  // Kim et al. 2020, "Glow-TTS" (NeurIPS), model-size comparison: Tacotron 2 has 28.2M parameters.
  CHECK(params_of(build("tacotron2")) == Approx(28.2e6).epsilon(0.05 / 28.2));
  // Ping et al. 2020, "WaveFlow: A Compact Flow-based Model for Raw Audio" (ICML), WaveGlow rows:
  // 87.88M parameters with 256 residual channels (NVIDIA's released checkpoint), 268.29M with 512
  // (DeepLearningExamples' training default, --wn-channels 512).
  CHECK(params_of(build("waveglow", {{"n_channels", 256}})) ==
        Approx(87.88e6).epsilon(0.005 / 87.88));
  CHECK(params_of(build("waveglow")) == Approx(268.29e6).epsilon(0.005 / 268.29));
  // Forward multiply-adds by hand from waveglow/model.py for an 8000-sample segment (1000 groups
  // of 8, 32 mel frames): the upsampling ConvTranspose1d, then per flow the invertible 1x1 conv
  // over c channels (8, 6, 4 as channels leave early) and WN on c / 2 of them: start, 8 dilated
  // 3-tap and 8 conditioning convs to 1024, res/skip convs (the last to 512 only), end.
  const double positions = 1000;
  double macs = 80.0 * 32 * 80 * 1024;
  for (int k = 0; k < 12; ++k) {
    const double c = 8 - 2 * (k / 4);
    const double wn =
        c / 2 * 512 + 8 * (3 * 512 + 640) * 1024.0 + 7 * 512 * 1024.0 + 512 * 512.0 + 512 * c;
    macs += (c * c + wn) * positions;
  }
  CHECK(build("waveglow").fwd_macs() == Approx(macs));
}

TEST_CASE("Tacotron 2's decoder loop: every frame's backward touches the tensors made before it") {
  // decoder_inputs[i] takes frame i of the prenet's output {frames, 256}; select_backward fills a
  // zero tensor of the whole output and autograd adds it to the earlier frames' (pytorch/pytorch
  // FunctionsManual.cpp select_backward, input_buffer.cpp InputBuffer::add), and the attention's
  // memory {text, 512} and processed memory {text, 128} gather a gradient every frame too.
  const auto per_sample_elements = [](const ZooModel& m, const std::string& what) {
    double e = 0;
    for (const auto& l : m.layers) {
      for (const auto& k : l.bwd_kernels) {
        if (k.what == what) e += k.act_elements * k.repeat;
      }
    }
    return e;
  };
  for (const double frames : {100.0, 200.0}) {
    INFO("frames " << frames);
    const ZooModel m = build("tacotron2", {{"mel_frames", frames}, {"text_len", 150}});
    CHECK(per_sample_elements(m, "select bwd zeros") == Approx(frames * frames * 256));
    CHECK(per_sample_elements(m, "select grad accumulate") == Approx(3 * frames * frames * 256));
    CHECK(per_sample_elements(m, "attention input grad accumulate") ==
          Approx(3 * frames * 150 * (512 + 128)));
  }
}

TEST_CASE("Transformer-XL on WikiText-103 (Dai et al. 2019; DeepLearningExamples)") {
  // Dai et al. 2019, Table 1: the standard WikiText-103 model (16 layers, d_model 410, 10 heads of
  // 41, d_inner 2100, adaptive input and softmax with div_val 1) has 151M parameters.
  CHECK(params_of(build("transformerxl_base",
                        {{"d_model", 410}, {"n_head", 10}, {"d_head", 41}, {"d_inner", 2100}})) ==
        Approx(151e6).epsilon(0.5 / 151));
  // DeepLearningExamples' base (512 / 8 x 64 / 2048) has no published count; by hand from
  // mem_transformer.py: the table, 16 layers of qkv_net, r_net, o_net, two layer norms and the
  // feed-forward, the shared u and v, the cluster weights and the softmax's biases.
  const double d = 512;
  const double v = 267735;
  const double layer = 3 * d * d + d * d + d * d + 2 * d + (d * 2048 + 2048 + 2048 * d + d) + 2 * d;
  CHECK(params_of(build("transformerxl_base")) == v * d + 16 * layer + 2 * d + 3 * d + 3 + v);
  // Large (18 layers, d_model 1024, 16 heads, d_inner 4096, div_val 4): the module shapes of
  // mem_transformer.py give 285.2M, while Dai et al. 2019, Table 1 reports 257M for the same
  // configuration; the paper's figure cannot be reproduced from the released code, so the
  // generator follows the code and this check pins the 11% gap (fails if it grows past 12%).
  const ZooModel large = build("transformerxl_large");
  CHECK(params_of(large) == Approx(257e6).epsilon(0.12));
  const double D = 1024;
  const double tables = 19997 * D + 20000 * (D / 4) + 160000 * (D / 16) + 67738 * (D / 64);
  const double projections = D * (D + D / 4 + D / 16 + D / 64);
  const double large_layer = 5 * D * D + 4 * D + (D * 4096 + 4096 + 4096 * D + D);
  CHECK(params_of(large) ==
        tables + projections + 18 * large_layer + 2 * D + 3 * D + 3 + D * D + v);
}

TEST_CASE("Transformer-XL base as DeepLearningExamples' TensorFlow script builds it") {
  // The same network and arithmetic as the PyTorch recipe's base...
  const ZooModel tf = build("transformerxl_base_tf");
  const ZooModel pt = build("transformerxl_base");
  CHECK(tf.params() == pt.params());
  CHECK(tf.fwd_macs() == Approx(pt.fwd_macs()).epsilon(1e-12));
  // ... as TF1 ops: each dropout is five kernels forward and two backward where PyTorch's fused
  // dropout is one each way, and each relative attention adds a transpose, a second copy of the
  // shift and the two-op arithmetic mask, mirrored in backward.
  auto count = [](const ZooModel& m, const std::string& what, bool backward) {
    double n = 0;
    for (const auto& l : m.layers) {
      for (const auto& k : backward ? l.bwd_kernels : l.fwd_kernels)
        if (std::string(k.what).rfind(what, 0) == 0) n += k.repeat;
    }
    return n;
  };
  const double dropouts = count(pt, "dropout fwd", false);
  REQUIRE(dropouts > 16);
  CHECK(count(tf, "dropout", false) == 5 * dropouts);
  CHECK(count(tf, "dropout", true) == 2 * count(pt, "dropout bwd", true));
  CHECK(count(tf, "arithmetic mask", false) == 2 * 16);
  CHECK(count(tf, "relative", false) == count(pt, "relative", false) + 2 * 16);
  CHECK(count(tf, "relative", true) == count(pt, "relative", true) + 2 * 16);
  // Each layer norm is tf.contrib.layers.layer_norm's ops: nn.moments and
  // nn.batch_normalization, ten kernels forward (two of them on the rows alone) where PyTorch
  // runs one, and nineteen backward where PyTorch runs two.
  const double norms = count(pt, "layernorm fwd", false);
  REQUIRE(norms == 2 * 16);
  CHECK(count(tf, "layernorm", false) == 10 * norms);
  CHECK(count(tf, "layernorm", true) == 19 * norms);
  CHECK(count(pt, "layernorm", true) == 2 * norms);
}

TEST_CASE("Transformer-XL without adaptive softmax, as Lambda's benchmark runs it") {
  // train.py with adaptive=False has one embedding table and one full-vocabulary softmax. The run
  // logs print the counts: lambdal/deeplearning-benchmark@aa5addb pytorch/results/
  // A100_80GB_PCIe_v1/PyTorch_transformerxl{base,large}_FP32/*.txt, "#params = 191948759" (base)
  // and "#params = 519963095" (large at div_val 1, d_embed 1024).
  CHECK(build("transformerxl_base", {{"adaptive_clusters", 1}}).params() == 191'948'759);
  CHECK(build("transformerxl_large", {{"adaptive_clusters", 1}, {"div_val", 1}}).params() ==
        519'963'095);
  // The softmax is one {tgt_len x d_model} x {d_model x vocab} GEMM instead of a 20K head and
  // three tails that score only the fifth of the tokens whose targets fall in them: the forward
  // work grows by the other 248K columns for every token, less what the tails cost.
  const double full = build("transformerxl_base", {{"adaptive_clusters", 1}}).fwd_macs();
  const double adaptive = build("transformerxl_base").fwd_macs();
  const double extra_columns = 192.0 * 512 * (267735 - 19997);
  CHECK(full - adaptive < extra_columns);
  CHECK(full - adaptive > 0.85 * extra_columns);
  CHECK_THROWS_WITH(build("transformerxl_base", {{"adaptive_clusters", 5}}),
                    Catch::Contains("adaptive_clusters=5"));
  // One cluster needs no cutoff below the vocabulary; more clusters need the vocabulary above the
  // last cutoff they use.
  CHECK_NOTHROW(build("transformerxl_base", {{"adaptive_clusters", 1}, {"vocab", 1000}}));
  CHECK_THROWS_WITH(build("transformerxl_base", {{"adaptive_clusters", 2}, {"vocab", 1000}}),
                    Catch::Contains("cutoff (19997)"));
}

TEST_CASE("T5 v1.0 small, base, large and 3B (Raffel et al. 2020)") {
  // keras-team/keras-hub@71453d0 keras_hub/src/models/t5/t5_presets.py: t5_small_multi
  // 60,506,624, t5_base_multi 222,903,552, t5_large_multi 737,668,096 (the original T5
  // checkpoints; the large count is also the "Trainable Variables ... Total size: 737668096" of
  // google-research/text-to-text-transfer-transformer issue 326). Raffel et al. round them to 60M,
  // 220M and 770M.
  CHECK(build("t5_small").params() == 60'506'624);
  CHECK(build("t5_base").params() == 222'903'552);
  CHECK(build("t5_large").params() == 737'668'096);
  // keras-team/keras-nlp@f98a981 keras_nlp/models/t5/t5_presets.py: t5_3b 2,851,598,336 (d_ff
  // 16384, 32 heads of 128 on d_model 1024: the attention is wider than the model).
  CHECK(build("t5_large", {{"d_ff", 16384}, {"heads", 32}, {"d_kv", 128}}).params() ==
        2'851'598'336);
}
