// TensorFlow's automatic mixed precision graph rewrite (framework `amp_fp32_ops:
// graph_rewrite`): an op runs in 16 bits only between two allow-list ops with no deny-list op
// (softmax, a layer norm's Mean) upstream of it, so a transformer block's memory-bound kernels
// run in fp32 and its GEMMs' operands and results are cast; a convolution block's batch norm and
// ReLU, between convolutions, stay 16-bit. torch.amp (`listed`) runs only its fp32-list ops in
// fp32.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "models/kernel_plan.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Launch;
using trainsim::models::Pass;
using trainsim::sim::AmpFp32Ops;

namespace {

// `layer`'s launches in `pass` for 8 samples of `model` under TensorFlow's graph executor (no
// fusion, so each op is a launch of its own) in `precision`, with the fp32 policy `ops`.
std::vector<Launch> launches(const std::string& model, const std::string& layer, Pass pass,
                             const std::string& precision, AmpFp32Ops ops) {
  auto s = trainsim::test::scenario(
      {"model=" + model, "framework=tensorflow_graph", "precision=" + precision});
  s.framework.amp_fp32_ops = ops;
  std::vector<Launch> out;
  for (const auto& l : s.model.layers) {
    if (l.name == layer) trainsim::models::layer_launches(s, l, pass, 8, out);
  }
  REQUIRE(!out.empty());
  return out;
}

const Launch* find(const std::vector<Launch>& ls, std::string_view what) {
  for (const auto& l : ls) {
    if (what == l.what) return &l;
  }
  return nullptr;
}

int count_of(const std::vector<Launch>& ls, std::string_view what) {
  int n = 0;
  for (const auto& l : ls) {
    if (what == l.what) n += l.count;
  }
  return n;
}

}  // namespace

TEST_CASE("TensorFlow's AMP rewrite runs a transformer block's memory-bound kernels in fp32") {
  const double launch_s = trainsim::test::scenario({"framework=tensorflow_graph"})
                              .cluster.accelerator.kernel_launch_overhead_s;
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const auto listed = launches("bert_large", "layer.0.mlp", pass, "fp16", AmpFp32Ops::listed);
    const auto rewrite =
        launches("bert_large", "layer.0.mlp", pass, "fp16", AmpFp32Ops::graph_rewrite);
    // GELU (downstream of nothing but the GEMM, on the way to the layer norm) moves twice the
    // bytes: fp32 against fp16; the dropout too, but for its one-byte mask.
    const auto body_ratio = [&](const char* what) {
      const Launch* a = find(listed, what);
      const Launch* b = find(rewrite, what);
      REQUIRE(a != nullptr);
      REQUIRE(b != nullptr);
      return (b->device_s - launch_s) / (a->device_s - launch_s);
    };
    CHECK(body_ratio(pass == Pass::forward ? "activation fwd" : "activation bwd") ==
          Approx(2).epsilon(0.02));
    const double dropout = body_ratio(pass == Pass::forward ? "dropout fwd" : "dropout bwd");
    CHECK(dropout > 1.5);
    CHECK(dropout < 2);
    // The GEMMs are unchanged; each forward or data-gradient GEMM gets a cast (TF's Cast ops
    // around the allow-list op); the weight gradients reuse them.
    const Launch* gemm_a = find(listed, pass == Pass::forward ? "linear fwd" : "linear dgrad");
    const Launch* gemm_b = find(rewrite, pass == Pass::forward ? "linear fwd" : "linear dgrad");
    REQUIRE(gemm_a != nullptr);
    REQUIRE(gemm_b != nullptr);
    CHECK(gemm_b->device_s == gemm_a->device_s);
    CHECK(count_of(rewrite, "autocast cast") == 2);
    // The layer norm was fp32 already under both policies, and only torch.amp's form casts
    // around it.
    CHECK(count_of(listed, "autocast cast") == 1);
  }
}

TEST_CASE("TensorFlow's AMP rewrite leaves a convolution block's norm and ReLU in 16 bits") {
  for (const char* layer : {"bn1", "relu"}) {
    for (const Pass pass : {Pass::forward, Pass::backward}) {
      const auto listed = launches("resnet50", layer, pass, "fp16", AmpFp32Ops::listed);
      const auto rewrite = launches("resnet50", layer, pass, "fp16", AmpFp32Ops::graph_rewrite);
      REQUIRE(listed.size() == rewrite.size());
      for (std::size_t i = 0; i < listed.size(); ++i) {
        CHECK(std::string_view(listed[i].what) == rewrite[i].what);
        CHECK(listed[i].device_s == rewrite[i].device_s);
      }
    }
  }
}

TEST_CASE("TensorFlow's AMP rewrite changes nothing in fp32") {
  const auto listed =
      launches("bert_large", "layer.0.attention", Pass::backward, "fp32", AmpFp32Ops::listed);
  const auto rewrite = launches("bert_large", "layer.0.attention", Pass::backward, "fp32",
                                AmpFp32Ops::graph_rewrite);
  REQUIRE(listed.size() == rewrite.size());
  for (std::size_t i = 0; i < listed.size(); ++i)
    CHECK(listed[i].device_s == rewrite[i].device_s);
}

TEST_CASE("the TensorFlow framework profiles use the AMP rewrite, PyTorch's its fp32 list") {
  for (const char* f : {"tensorflow_graph", "tensorflow_xla"}) {
    CHECK(trainsim::test::scenario({std::string("framework=") + f}).framework.amp_fp32_ops ==
          AmpFp32Ops::graph_rewrite);
  }
  CHECK(trainsim::test::scenario({"framework=pytorch_eager"}).framework.amp_fp32_ops ==
        AmpFp32Ops::listed);
}

TEST_CASE("the AMP rewrite keeps a layer in fp32 only with a softmax or a layer norm, in 16 bits") {
  const auto layer_of = [](const trainsim::models::Scenario& s, const std::string& name) {
    for (const auto& l : s.model.layers) {
      if (l.name == name) return l;
    }
    FAIL("no layer " << name);
    return trainsim::models::Layer{};
  };
  const auto bert16 =
      trainsim::test::scenario({"model=bert_large", "framework=tensorflow_xla", "precision=fp16"});
  const auto bert32 =
      trainsim::test::scenario({"model=bert_large", "framework=tensorflow_xla", "precision=fp32"});
  const auto resnet16 =
      trainsim::test::scenario({"model=resnet50", "framework=tensorflow_xla", "precision=fp16"});
  const auto torch16 =
      trainsim::test::scenario({"model=bert_large", "framework=pytorch_eager", "precision=fp16"});
  CHECK(trainsim::models::rewrite_keeps_fp32(bert16, layer_of(bert16, "layer.0.attention")));
  CHECK(trainsim::models::rewrite_keeps_fp32(bert16, layer_of(bert16, "layer.0.mlp")));
  CHECK_FALSE(trainsim::models::rewrite_keeps_fp32(bert32, layer_of(bert32, "layer.0.mlp")));
  CHECK_FALSE(trainsim::models::rewrite_keeps_fp32(resnet16, layer_of(resnet16, "bn1")));
  CHECK_FALSE(trainsim::models::rewrite_keeps_fp32(torch16, layer_of(torch16, "layer.0.mlp")));
}
