// Tensor and sequence parallelism of zoo models (shard_tensor_parallel): per-rank parameters,
// FLOPs, GEMM shapes, collectives and activation memory against the closed forms of Megatron-LM
// (Shoeybi et al. 2019), Narayanan et al. 2021 and Korthikanti et al. 2022.
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/zoo/tensor_parallel.hpp"
#include "models/zoo/zoo.hpp"
#include "sim/core/input_error.hpp"
#include "support/zoo_models.hpp"

using trainsim::InputError;
using trainsim::models::build_zoo_model;
using trainsim::models::KernelSpec;
using trainsim::models::Layer;
using trainsim::models::shard_tensor_parallel;
using trainsim::models::TpCollective;
using trainsim::models::TpCollectiveOp;
using trainsim::models::TransformerPart;
using trainsim::models::ZooModel;
using trainsim::test::build;
using trainsim::test::layer_named;
using trainsim::test::params_of;

namespace {

ZooModel shard(const ZooModel& m, int tp, bool sp) {
  return shard_tensor_parallel(m, tp, sp, "parallelism.tensor");
}

double hp(const ZooModel& m, const char* key) {
  return m.hyperparameters.at(key);
}

// Megatron's padded vocabulary: a multiple of 128 x tp.
double padded(double vocab, int tp) {
  const double multiple = 128.0 * tp;
  return static_cast<double>(static_cast<std::int64_t>((vocab + multiple - 1) / multiple)) *
         multiple;
}

struct Counted {
  int allreduce = 0;
  int all_gather = 0;
  int reduce_scatter = 0;
};

Counted count(const std::vector<TpCollective>& cs, double elements) {
  Counted c;
  for (const auto& x : cs) {
    INFO(x.what);
    CHECK(x.elements_per_sample == elements);
    if (x.op == TpCollectiveOp::allreduce) ++c.allreduce;
    if (x.op == TpCollectiveOp::all_gather) ++c.all_gather;
    if (x.op == TpCollectiveOp::reduce_scatter) ++c.reduce_scatter;
  }
  return c;
}

// FLOPs of the GEMM kernels (linear layers; attention's batched GEMMs are class gemm too).
double gemm_flops(const std::vector<KernelSpec>& ks) {
  double f = 0;
  for (const auto& k : ks) {
    if (k.cls == trainsim::sim::KernelClass::gemm || k.cls == trainsim::sim::KernelClass::attention)
      f += k.flops;
  }
  return f;
}

// Activation bytes one layer (attention + MLP entries) keeps per sample, 16-bit activations.
double layer_saved_bytes(const ZooModel& m, const std::string& attn, const std::string& mlp) {
  return layer_named(m, attn).saved_bytes(2) + layer_named(m, mlp).saved_bytes(2);
}

}  // namespace

TEST_CASE("tp 1 returns the model unchanged; every split keeps the entry list") {
  const ZooModel gpt = build("gpt3_1_3b");
  const ZooModel same = shard(gpt, 1, true);
  CHECK(same.layers.size() == gpt.layers.size());
  CHECK(same.params() == gpt.params());
  CHECK(same.fwd_flops() == gpt.fwd_flops());
  for (const auto& l : same.layers) {
    CHECK(l.tp_fwd.empty());
    CHECK(l.tp_bwd.empty());
  }
  // Every transformer family splits (Transformer-XL and the T5 decoder's 114 target tokens only
  // without sequence parallelism), with the same entries in the same order.
  struct Case {
    const char* name;
    int tp;
    bool sp;
  };
  const Case cases[] = {
      {"transformer", 2, true}, {"bert_large", 4, true},          {"gpt2", 4, true},
      {"t5_base", 4, false},    {"transformerxl_base", 2, false}, {"llama3_8b", 8, true},
      {"gpt3_13b", 8, true}};
  for (const auto& c : cases) {
    INFO(c.name << " tp " << c.tp << (c.sp ? " sp" : ""));
    const ZooModel whole = build(c.name);
    const ZooModel rank = shard(whole, c.tp, c.sp);
    REQUIRE(rank.layers.size() == whole.layers.size());
    for (std::size_t i = 0; i < whole.layers.size(); ++i)
      CHECK(rank.layers[i].name == whole.layers[i].name);
    CHECK(rank.params() < whole.params());
    CHECK(rank.fwd_macs() < whole.fwd_macs());
    CHECK(rank.name == whole.name);
    CHECK(rank.hyperparameters == whole.hyperparameters);
  }
}

TEST_CASE("per-rank parameters: split weights / tp plus replicated ones") {
  constexpr int tp = 8;
  SECTION("GPT-3 175B") {
    // Shoeybi et al. 2019, Sec. 3: QKV and fc1 column-parallel (weights and biases / tp), the
    // output projection and fc2 row-parallel (weights / tp, biases whole), layer norms whole; the
    // token table vocabulary-parallel over 50257 padded to 51200, the position table whole, the
    // head tied to the token table.
    const ZooModel whole = build("gpt3_175b");
    const ZooModel rank = shard(whole, tp, false);
    const double l = hp(whole, "n_layer");
    const double h = hp(whole, "d_model");
    const double v = hp(whole, "vocab");
    const double s = hp(whole, "seq_len");
    const double vp = padded(v, tp);
    CHECK(vp == 51200);
    const double replicated = s * h + l * (2 * h + h + 2 * h + h) + 2 * h;
    const double split = vp * h + l * (12 * h * h + 3 * h + 4 * h);
    CHECK(static_cast<double>(rank.params()) == split / tp + replicated);
    // Summed over the ranks: the whole model (Narayanan et al. 2021, Sec. 5.1, plus the final
    // norm), the padding rows, and tp - 1 more copies of the replicated parameters.
    // (12 l h^2 (1 + 13 / (12 h) + (V + s) / (12 l h)), multiplied out to stay exact.)
    const double narayanan = 12 * l * h * h + 13 * l * h + (v + s) * h + 2 * h;
    CHECK(static_cast<double>(whole.params()) == narayanan);
    CHECK(tp * static_cast<double>(rank.params()) ==
          narayanan + (vp - v) * h + (tp - 1) * replicated);
    // Sequence parallelism splits activations, not parameters.
    CHECK(shard(whole, tp, true).params() == rank.params());
  }
  SECTION("Llama 2 70B") {
    // Grouped-query attention: q and o are h x h, k and v h x (kv_heads x head_dim), all split
    // by heads; SwiGLU's gate, up and down split by d_ff; RMSNorm scales whole; the untied token
    // table and output layer vocabulary-parallel over 32000 padded to 32768.
    const ZooModel whole = build("llama2_70b");
    const ZooModel rank = shard(whole, tp, true);
    const double l = hp(whole, "n_layer");
    const double h = hp(whole, "d_model");
    const double v = hp(whole, "vocab");
    const double f = hp(whole, "d_ff");
    const double kv = hp(whole, "kv_heads") * (h / hp(whole, "heads"));
    const double vp = padded(v, tp);
    CHECK(vp == 32768);
    const double replicated = l * 2 * h + h;
    const double split = 2 * vp * h + l * (2 * h * h + 2 * h * kv + 3 * h * f);
    CHECK(static_cast<double>(rank.params()) == split / tp + replicated);
    CHECK(tp * static_cast<double>(rank.params()) ==
          static_cast<double>(whole.params()) + 2 * (vp - v) * h + (tp - 1) * replicated);
  }
}

TEST_CASE("per-rank matmul FLOPs of each split entry are the whole entry's / tp") {
  constexpr int tp = 8;
  for (const char* name : {"gpt3_175b", "llama2_70b"}) {
    const ZooModel whole = build(name);
    for (const bool sp : {false, true}) {
      INFO(name << (sp ? " sp" : ""));
      const ZooModel rank = shard(whole, tp, sp);
      for (std::size_t i = 0; i < whole.layers.size(); ++i) {
        const Layer& w = whole.layers[i];
        const Layer& r = rank.layers[i];
        if (!w.transformer) continue;
        INFO(w.name);
        const TransformerPart part = w.transformer->part;
        if (part == TransformerPart::attention || part == TransformerPart::mlp) {
          CHECK(r.fwd_macs == w.fwd_macs / tp);
        }
        if (part == TransformerPart::head) {
          // The logits GEMM covers the padded vocabulary's share.
          const double s = hp(whole, "seq_len");
          const double h = hp(whole, "d_model");
          CHECK(r.fwd_macs == s * h * padded(hp(whole, "vocab"), tp) / tp);
        }
      }
    }
  }
  // Without biases (Llama) every GEMM kernel, forward and backward, is the whole one's / tp.
  const ZooModel llama = build("llama2_70b");
  const ZooModel rank = shard(llama, tp, false);
  for (const char* entry : {"layers.3.self_attn", "layers.3.mlp"}) {
    INFO(entry);
    const Layer& w = layer_named(llama, entry);
    const Layer& r = layer_named(rank, entry);
    CHECK(gemm_flops(r.fwd_kernels) == gemm_flops(w.fwd_kernels) / tp);
    CHECK(gemm_flops(r.bwd_kernels) == gemm_flops(w.bwd_kernels) / tp);
  }
  // GEMM shapes: q_proj column-parallel (n = h / tp), o_proj row-parallel (k = h / tp), the
  // MLP's down projection row-parallel (k = d_ff / tp); rows stay the whole sequence.
  const Layer& attn = layer_named(rank, "layers.3.self_attn");
  std::vector<trainsim::sim::GemmShape> linears;
  for (const auto& k : attn.fwd_kernels) {
    if (std::string(k.what) == "linear fwd") linears.push_back(k.gemm);
  }
  REQUIRE(linears.size() == 4);  // q, k, v, o
  CHECK(linears[0].m == 4096);
  CHECK(linears[0].n == 8192 / tp);
  CHECK(linears[1].n == 8 * 128 / tp);
  CHECK(linears[3].n == 8192);
  CHECK(linears[3].k == 8192 / tp);
  const Layer& mlp = layer_named(rank, "layers.3.mlp");
  std::vector<trainsim::sim::GemmShape> mlp_linears;
  for (const auto& k : mlp.fwd_kernels) {
    if (std::string(k.what) == "linear fwd") mlp_linears.push_back(k.gemm);
  }
  REQUIRE(mlp_linears.size() == 3);  // gate, up, down
  CHECK(mlp_linears[0].n == 28672 / tp);
  CHECK(mlp_linears[2].k == 28672 / tp);
  CHECK(mlp_linears[2].n == 8192);
}

TEST_CASE("collectives per layer: Narayanan et al. 2021 Sec. 3.3 and sequence parallelism") {
  constexpr int tp = 8;
  const ZooModel whole = build("gpt3_175b");
  const double s = hp(whole, "seq_len");
  const double h = hp(whole, "d_model");
  SECTION("tensor parallelism: 2 allreduces of s h forward, 2 backward per layer") {
    const ZooModel rank = shard(whole, tp, false);
    for (const char* entry : {"h.7.attn", "h.7.mlp"}) {
      INFO(entry);
      const Layer& l = layer_named(rank, entry);
      REQUIRE(l.tp_fwd.size() == 1);
      REQUIRE(l.tp_bwd.size() == 1);
      CHECK(count(l.tp_fwd, s * h).allreduce == 1);
      CHECK(count(l.tp_bwd, s * h).allreduce == 1);
      CHECK_FALSE(l.tp_fwd[0].at_start);  // after the output projection / fc2
      CHECK_FALSE(l.tp_bwd[0].at_start);  // QKV's / fc1's input gradient
    }
    // Vocabulary-parallel embedding: its output summed over the ranks; the head: its input
    // gradient, and the cross entropy's three statistics of one value per token.
    const Layer& embed = layer_named(rank, "embed");
    CHECK(count(embed.tp_fwd, s * h).allreduce == 1);
    CHECK(embed.tp_bwd.empty());
    const Layer& head = layer_named(rank, "lm_head");
    CHECK(count(head.tp_fwd, s).allreduce == 3);
    CHECK(count(head.tp_bwd, s * h).allreduce == 1);
  }
  SECTION("sequence parallelism: all-gather + reduce-scatter instead of each allreduce") {
    const ZooModel rank = shard(whole, tp, true);
    Counted fwd;
    Counted bwd;
    for (const char* entry : {"h.7.attn", "h.7.mlp"}) {
      INFO(entry);
      const Layer& l = layer_named(rank, entry);
      // Forward: gather the sequence shards before QKV / fc1, reduce-scatter after the output
      // projection / fc2.
      REQUIRE(l.tp_fwd.size() == 2);
      CHECK(l.tp_fwd[0].op == TpCollectiveOp::all_gather);
      CHECK(l.tp_fwd[0].at_start);
      CHECK(l.tp_fwd[1].op == TpCollectiveOp::reduce_scatter);
      CHECK_FALSE(l.tp_fwd[1].at_start);
      // Backward, the reverse: gather the output gradient first, reduce-scatter the input
      // gradient last; between them Megatron-LM gathers the saved input shard again for the
      // weight gradient (NVIDIA/Megatron-LM@960c06b megatron/core/tensor_parallel/layers.py,
      // LinearWithGradAccumulationAndAsyncCommunication.backward).
      REQUIRE(l.tp_bwd.size() == 3);
      CHECK(l.tp_bwd[0].op == TpCollectiveOp::all_gather);
      CHECK(l.tp_bwd[0].at_start);
      CHECK(l.tp_bwd[1].op == TpCollectiveOp::all_gather);
      CHECK(l.tp_bwd[2].op == TpCollectiveOp::reduce_scatter);
      const Counted f = count(l.tp_fwd, s * h);
      const Counted b = count(l.tp_bwd, s * h);
      fwd.all_gather += f.all_gather;
      fwd.reduce_scatter += f.reduce_scatter;
      bwd.all_gather += b.all_gather;
      bwd.reduce_scatter += b.reduce_scatter;
      CHECK(f.allreduce + b.allreduce == 0);
    }
    // Per layer: the 4 allreduces become 4 all-gathers and 4 reduce-scatters (Korthikanti et
    // al. 2022, Sec. 4.2.2), plus the 2 re-gathers of the saved inputs in backward.
    CHECK(fwd.all_gather + bwd.all_gather == 4 + 2);
    CHECK(fwd.reduce_scatter + bwd.reduce_scatter == 4);
    // GPT's learned positions are added to the whole sequence: the embedding allreduces, then
    // takes its shard (megatron-core LanguageModelEmbedding), whose gradient is gathered back.
    const Layer& embed = layer_named(rank, "embed");
    CHECK(count(embed.tp_fwd, s * h).allreduce == 1);
    CHECK(count(embed.tp_bwd, s * h).all_gather == 1);
    const Layer& head = layer_named(rank, "lm_head");
    REQUIRE(head.tp_fwd.size() == 4);
    CHECK(head.tp_fwd[0].op == TpCollectiveOp::all_gather);
    CHECK(head.tp_fwd[0].elements_per_sample == s * h);
    CHECK(count({head.tp_fwd.begin() + 1, head.tp_fwd.end()}, s).allreduce == 3);
    const Counted hb = count(head.tp_bwd, s * h);
    CHECK(hb.all_gather == 1);
    CHECK(hb.reduce_scatter == 1);
    // Llama has no position table: its embedding reduce-scatters straight into the shards.
    const ZooModel llama = shard(build("llama2_70b"), tp, true);
    const Layer& tokens = layer_named(llama, "embed_tokens");
    const double ls = hp(llama, "seq_len") * hp(llama, "d_model");
    CHECK(count(tokens.tp_fwd, ls).reduce_scatter == 1);
    CHECK(count(tokens.tp_bwd, ls).all_gather == 1);
    CHECK(tokens.output_elements == ls / tp);  // the stream between entries is split too
  }
}

TEST_CASE("cross-attention and replicated entries under tensor parallelism") {
  // Cross-attention's key/value projection is column-parallel over the encoder output too: its
  // input gradient is allreduced (gathered and reduce-scattered under sequence parallelism).
  const ZooModel whole = build("transformer");
  const double s = hp(whole, "seq_len");
  const double d = hp(whole, "d_model");
  const ZooModel tp = shard(whole, 2, false);
  const Layer& cross = layer_named(tp, "decoder.0.cross_attn");
  CHECK(count(cross.tp_fwd, s * d).allreduce == 1);
  CHECK(count(cross.tp_bwd, s * d).allreduce == 2);  // the memory's and the queries' input
  const ZooModel sp = shard(whole, 2, true);
  const Layer& cross_sp = layer_named(sp, "decoder.0.cross_attn");
  const Counted f = count(cross_sp.tp_fwd, s * d);
  CHECK(f.all_gather == 2);
  CHECK(f.reduce_scatter == 1);
  // The encoder output travels with the decoder stream as the rank's shard, and is kept for
  // backward once (by the first cross-attention), as without parallelism.
  CHECK(layer_named(sp, "decoder.embed").output_elements == 2 * s * d / 2);
  const double first = layer_named(sp, "decoder.0.cross_attn").saved_elements;
  const double second = layer_named(sp, "decoder.1.cross_attn").saved_elements;
  CHECK(first - second == Approx(s * d / 2));
  // BERT's pooler and classifier are replicated: no parameters split, no collectives, except
  // the pooler's gather of the sequence shards under sequence parallelism.
  const ZooModel bert = build("bert_base");
  for (const bool seq_parallel : {false, true}) {
    const ZooModel rank = shard(bert, 4, seq_parallel);
    CHECK(layer_named(rank, "pooler").params == layer_named(bert, "pooler").params);
    CHECK(layer_named(rank, "classifier").params == layer_named(bert, "classifier").params);
    CHECK(layer_named(rank, "classifier").tp_fwd.empty());
    CHECK(layer_named(rank, "pooler").tp_fwd.size() == (seq_parallel ? 1U : 0U));
    CHECK(layer_named(rank, "pooler").tp_bwd.empty());
  }
}

TEST_CASE("activation memory per layer and rank: Korthikanti et al. 2022, Table 2") {
  // Eq. (1)-(5), per layer, 16-bit activations, bytes: no parallelism sbh(34 + 5as/h); tensor
  // parallel sbh(10 + 24/t + 5as/(ht)); with sequence parallelism sbh(34/t + 5as/(ht)). The zoo
  // counts GPT-3's layer exactly as the paper does (Sec. 4.1: attention 11sbh + 5as^2b, MLP
  // 19sbh, two layer norms 4sbh), so the three hold exactly; b = 1 (per sample).
  const ZooModel whole = build("gpt3_175b");
  const double s = hp(whole, "seq_len");
  const double h = hp(whole, "d_model");
  const double a = hp(whole, "heads");
  const double sbh = s * h;
  CHECK(layer_saved_bytes(whole, "h.5.attn", "h.5.mlp") == Approx(sbh * (34 + 5 * a * s / h)));
  for (const int t : {2, 4, 8}) {
    INFO("t = " << t);
    const ZooModel tp = shard(whole, t, false);
    const ZooModel sp = shard(whole, t, true);
    CHECK(layer_saved_bytes(tp, "h.5.attn", "h.5.mlp") ==
          Approx(sbh * (10 + 24.0 / t + 5 * a * s / (h * t))));
    CHECK(layer_saved_bytes(sp, "h.5.attn", "h.5.mlp") ==
          Approx(sbh * (34.0 / t + 5 * a * s / (h * t))));
  }
  // Llama 2 70B has another constant: RMSNorm, no dropout, rotated q and k kept apart from v,
  // grouped-query k and v (kv = 1024 wide), SwiGLU (the gate's input, the SiLU output, the up
  // branch and their product, each s x d_ff). Saved elements: attention 4sh + 2s kv + as^2,
  // MLP 2sh + 4s d_ff; bytes sbh(40.5) + 2as^2 at 2 bytes each. The same dependence on t:
  // the norms' inputs and the inputs of q/k/v and of gate/up (4sh) stay whole under tensor
  // parallelism, everything divides by t under sequence parallelism.
  const ZooModel llama = build("llama2_70b");
  const double ls = hp(llama, "seq_len");
  const double lh = hp(llama, "d_model");
  const double la = hp(llama, "heads");
  const double kv = hp(llama, "kv_heads") * (lh / la);
  const double f = hp(llama, "d_ff");
  const double one = 2 * ((4 * ls * lh + 2 * ls * kv + la * ls * ls) + (2 * ls * lh + 4 * ls * f));
  CHECK(one == Approx(ls * lh * 40.5 + 2 * la * ls * ls));
  const char* attn = "layers.9.self_attn";
  const char* mlp = "layers.9.mlp";
  CHECK(layer_saved_bytes(llama, attn, mlp) == Approx(one));
  const double kept = 2 * 4 * ls * lh;
  for (const int t : {2, 8}) {
    INFO("t = " << t);
    CHECK(layer_saved_bytes(shard(llama, t, false), attn, mlp) == Approx(kept + (one - kept) / t));
    CHECK(layer_saved_bytes(shard(llama, t, true), attn, mlp) == Approx(one / t));
  }
}

TEST_CASE("models that cannot be split are refused with the value") {
  const auto refused = [](const std::string& name, const std::map<std::string, double>& overrides,
                          int tp, bool sp, const std::string& what) {
    INFO(name << " tp " << tp);
    const ZooModel m = build(name, overrides);
    CHECK_THROWS_AS(shard(m, tp, sp), InputError);
    CHECK_THROWS_WITH(shard(m, tp, sp), Catch::Contains("parallelism.tensor") &&
                                            Catch::Contains(what) &&
                                            Catch::Contains("tp=" + std::to_string(tp)));
  };
  refused("gpt3_175b", {}, 5, false, "heads=96");
  refused("llama2_70b", {}, 16, false, "kv_heads=8");
  refused("llama2_7b", {{"d_ff", 11001}}, 2, false, "d_ff=11001");
  refused("resnet50", {}, 2, false, "no transformer entries");
  // Sequence parallelism splits every sequence: T5's 114 target tokens do not split in 4.
  refused("t5_base", {}, 4, true, "114 tokens");
  refused("transformerxl_base", {}, 2, true, "Transformer-XL");
  refused("gpt3_1_3b", {}, 0, false, "tp=0");
  // A split model is not split again.
  CHECK_THROWS_WITH(shard(shard(build("gpt3_1_3b"), 2, false), 2, false),
                    Catch::Contains("already split"));
}
