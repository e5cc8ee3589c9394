// The LLM families (GPT-3, Llama 2, Llama 3) against published parameter counts and closed
// forms, and the per-entry structure that tensor parallelism reads (TransformerEntryInfo).
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>

#include "models/zoo/zoo.hpp"
#include "sim/core/input_error.hpp"
#include "support/zoo_models.hpp"

using trainsim::InputError;
using trainsim::models::build_zoo_model;
using trainsim::models::Layer;
using trainsim::models::OpClass;
using trainsim::models::TransformerPart;
using trainsim::models::ZooModel;
using trainsim::test::build;
using trainsim::test::layer_named;
using trainsim::test::params_of;

TEST_CASE("GPT-3 family: Brown et al. 2020, Table 2.1") {
  // Table 2.1's n_params, rounded by the paper to 2-3 significant figures: GPT-3 Medium (24 x 1024)
  // counts 355.9M with its 2048 positions where the table says 350M, 2.7B (32 x 2560) 2.65B. So
  // the tolerance is 2%; the exact structure is checked against Narayanan et al.'s closed form
  // below.
  struct Ref {
    const char* name;
    double params;
  };
  const Ref refs[] = {{"gpt3_125m", 125e6}, {"gpt3_350m", 350e6},  {"gpt3_760m", 760e6},
                      {"gpt3_1_3b", 1.3e9}, {"gpt3_2_7b", 2.7e9},  {"gpt3_6_7b", 6.7e9},
                      {"gpt3_13b", 13.0e9}, {"gpt3_175b", 175.0e9}};
  for (const auto& r : refs) {
    INFO(r.name);
    CHECK(params_of(build(r.name)) == Approx(r.params).epsilon(0.02));
  }
  // Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters",
  // Sec. 5.1: P = 12 l h^2 (1 + 13 / (12 h) + (V + s) / (12 l h)), which leaves out the final
  // layer norm (2h). Holds where n_heads x d_head = d_model (all sizes but 13B).
  for (const char* name : {"gpt3_125m", "gpt3_1_3b", "gpt3_6_7b", "gpt3_175b"}) {
    const ZooModel m = build(name);
    const double l = m.hyperparameters.at("n_layer");
    const double h = m.hyperparameters.at("d_model");
    const double v = m.hyperparameters.at("vocab");
    const double s = m.hyperparameters.at("seq_len");
    INFO(name);
    CHECK(params_of(m) ==
          Approx(12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h)) + 2 * h)
              .epsilon(1e-12));
    CHECK(2 * m.fwd_macs() == Approx(24 * s * l * h * h * (1 + s / (6 * h)) + 2 * s * h * v));
  }
  // 13B: d_model 5140 with 40 heads of 128 (a 5120-wide attention); Table 2.1's 13.0B follows
  // 12 l d_model^2, i.e. a 5140-wide attention, 0.5% more.
  const ZooModel m13 = build("gpt3_13b");
  CHECK(params_of(m13) == Approx(13.0e9).epsilon(0.006));
  const Layer& attn = layer_named(m13, "h.0.attn");
  CHECK(attn.params == 5140 * 3 * 5120 + 3 * 5120 + 5120 * 5140 + 5140 + 2 * 5140);
}

TEST_CASE("Llama 2 and Llama 3 parameter counts") {
  // keras-team/keras-hub@71453d0 keras_hub/src/models/llama/llama_presets.py llama2_7b_en:
  // 6,738,415,616; llama3/llama3_presets.py llama3_8b_en: 8,030,261,248 (Hugging Face's
  // num_parameters() for meta-llama/Llama-2-7b-hf and Meta-Llama-3-8B).
  CHECK(build("llama2_7b").params() == 6'738'415'616);
  CHECK(build("llama3_8b").params() == 8'030'261'248);
  // Hugging Face model pages (safetensors "Model size"): Llama-2-13b-hf 13.0B, Llama-2-70b-hf
  // 69.0B, Meta-Llama-3-70B 70.6B; half a unit of the last digit.
  CHECK(params_of(build("llama2_13b")) == Approx(13.0e9).epsilon(0.05 / 13.0));
  CHECK(params_of(build("llama2_70b")) == Approx(69.0e9).epsilon(0.05 / 69.0));
  CHECK(params_of(build("llama3_70b")) == Approx(70.6e9).epsilon(0.05 / 70.6));
  // One 70B layer by hand: grouped-query attention (q and o 8192 x 8192, k and v 8192 x 1024),
  // SwiGLU (three 8192 x 28672), two RMSNorm scales; no biases.
  const ZooModel m = build("llama2_70b");
  const std::int64_t d = 8192;
  CHECK(layer_named(m, "layers.7.self_attn").params == 2 * d * d + 2 * d * 1024 + d);
  CHECK(layer_named(m, "layers.7.mlp").params == 3 * d * 28672 + d);
  // Untied output projection: the head holds a table as large as the embedding's, plus the norm.
  CHECK(layer_named(m, "lm_head").params == 32000 * d + d);
  // Forward multiply-adds of one attention entry at s = 4096: the projections, Q K^T and P V over
  // all 64 heads of 128 (the full score matrix, causal or not).
  const double s = 4096;
  CHECK(layer_named(m, "layers.7.self_attn").fwd_macs ==
        Approx(s * (2.0 * d * d + 2.0 * d * 1024) + 2 * s * s * d));
}

TEST_CASE("every transformer entry records what tensor parallelism splits") {
  for (const char* name : {"gpt2", "bert_base", "transformer", "t5_small", "gpt3_125m", "llama2_7b",
                           "llama3_8b", "transformerxl_base"}) {
    INFO(name);
    const ZooModel m = build(name);
    int attention = 0;
    int mlp = 0;
    for (const auto& l : m.layers) {
      if (l.op == OpClass::attention) {
        REQUIRE(l.transformer.has_value());
        CHECK(l.transformer->part == TransformerPart::attention);
        CHECK(l.transformer->heads > 0);
        CHECK(l.transformer->heads % l.transformer->kv_heads == 0);
        CHECK(l.transformer->seq > 0);
        CHECK(l.transformer->kv_seq > 0);
        ++attention;
      }
      if (l.transformer && l.transformer->part == TransformerPart::mlp) {
        CHECK(l.transformer->d_ff > 0);
        ++mlp;
      }
    }
    CHECK(attention > 0);
    CHECK(mlp > 0);
  }
  // Language models open with the token embedding and close with the vocabulary projection.
  for (const char* name : {"gpt2", "gpt3_175b", "llama2_70b", "llama3_70b", "t5_base"}) {
    INFO(name);
    const ZooModel m = build(name);
    REQUIRE(m.layers.front().transformer.has_value());
    CHECK(m.layers.front().transformer->part == TransformerPart::embedding);
    CHECK(m.layers.front().transformer->vocab == m.hyperparameters.at("vocab"));
    REQUIRE(m.layers.back().transformer.has_value());
    CHECK(m.layers.back().transformer->part == TransformerPart::head);
    CHECK(m.layers.back().transformer->vocab == m.hyperparameters.at("vocab"));
  }
}

TEST_CASE("two entries per layer, with grouped-query, gated and cross-attention structure") {
  // Decoder-only models: embedding, (attention, MLP) per layer, head.
  CHECK(build("llama2_70b").layers.size() == 2 * 80 + 2);
  CHECK(build("gpt3_175b").layers.size() == 2 * 96 + 2);
  const ZooModel llama = build("llama2_70b");
  const auto& a = *layer_named(llama, "layers.0.self_attn").transformer;
  CHECK(a.heads == 64);
  CHECK(a.kv_heads == 8);
  CHECK(a.head_dim == 128);
  CHECK(a.d_model == 8192);
  CHECK(a.seq == 4096);
  CHECK(a.kv_seq == 4096);
  CHECK(!a.cross);
  const auto& f = *layer_named(llama, "layers.0.mlp").transformer;
  CHECK(f.d_ff == 28672);
  CHECK(f.gated);
  CHECK(!layer_named(build("gpt3_125m"), "h.0.mlp").transformer->gated);
  // T5: encoder (attention, MLP) and decoder (self, cross, MLP) layers between two embedding
  // entries and the head; cross-attention reads the 512 encoder positions from 114 targets.
  const ZooModel t5 = build("t5_small");
  CHECK(t5.layers.size() == 1 + 2 * 6 + 1 + 3 * 6 + 1);
  const auto& cross = *layer_named(t5, "decoder.3.cross_attn").transformer;
  CHECK(cross.cross);
  CHECK(cross.seq == 114);
  CHECK(cross.kv_seq == 512);
  // Only the first self-attention of each stack holds the 32 x heads relative-bias table.
  CHECK(layer_named(t5, "encoder.0.self_attn").params -
            layer_named(t5, "encoder.1.self_attn").params ==
        32 * 8);
  // Transformer-XL: keys and values cover the cached memory and the segment.
  const ZooModel xl_model = build("transformerxl_base");
  const auto& xl = *layer_named(xl_model, "layers.5.attn").transformer;
  CHECK(xl.seq == 192);
  CHECK(xl.kv_seq == 192 + 192);
}

TEST_CASE("LLM hyper-parameters can be overridden and are checked") {
  const ZooModel shorter = build("llama2_7b", {{"seq_len", 2048}});
  CHECK(shorter.input_shape == std::vector<std::int64_t>{2048});
  CHECK(shorter.params() == build("llama2_7b").params());  // rotary positions have no table
  CHECK(shorter.fwd_macs() < 0.55 * build("llama2_7b").fwd_macs());
  // GPT-3's position table grows with a context longer than n_ctx = 2048.
  CHECK(build("gpt3_125m", {{"seq_len", 4096}}).params() ==
        build("gpt3_125m").params() + 2048 * 768);
  CHECK_THROWS_WITH(build("llama2_70b", {{"kv_heads", 3}}), Catch::Contains("kv_heads=3"));
  CHECK_THROWS_WITH(build("llama3_8b", {{"heads", 5}}), Catch::Contains("heads=5"));
  CHECK_THROWS_AS(build("gpt3_175b", {{"n_layers", 4}}), InputError);
}
