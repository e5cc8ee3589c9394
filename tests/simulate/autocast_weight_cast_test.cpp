// A 16-bit autocast step casts the fp32 weights that ops on the framework's lower-precision list
// take (convolutions, linear layers, RNNs), not its norm scales or embedding tables: the H200's
// profile of ResNet-50 in bf16 under torch.amp has 56 cast copies per step (55 weights and the
// input), against the model's 161 parameter tensors
// (tests/reference_data/h200_profile_kernels.csv). torch.amp issues the casts from C++ inside the
// op's dispatch; Apex O1 from Python.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/kernel_plan.hpp"
#include "models/zoo/net_builder.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Launch;
using trainsim::models::NetBuilder;
using trainsim::models::OpClass;
using trainsim::models::Pass;
using trainsim::models::Scenario;

namespace {

// Launches named `what` in `pass` over every layer of `s`'s model: their count and host time.
struct Named {
  int count = 0;
  double host_s = -1;
};

Named named(const Scenario& s, const std::string& what, Pass pass) {
  Named n;
  for (const Launch& l : trainsim::test::model_launches(s, pass, 32)) {
    if (what != l.what) continue;
    n.count += l.count;
    n.host_s = l.host_s;
  }
  return n;
}

}  // namespace

TEST_CASE("autocast casts ResNet-50's conv and fc weights, not its batch norms' parameters") {
  const auto s = trainsim::test::scenario(
      {"model=resnet50", "precision=bf16", "framework=pytorch_eager", "cluster=dgx-h100"});
  REQUIRE(s.model.param_tensors() == 161);
  // 53 bias-free convolutions and the classifier's weight and bias.
  CHECK(named(s, "weight cast", Pass::forward).count == 55);
  CHECK(named(s, "weight grad cast", Pass::backward).count == 55);
  // fp32 and fp32-master steps cast nothing.
  const auto fp32 = trainsim::test::scenario(
      {"model=resnet50", "precision=fp32", "framework=pytorch_eager", "cluster=dgx-h100"});
  CHECK(named(fp32, "weight cast", Pass::forward).count == 0);
}

TEST_CASE("torch.amp's weight casts cost the host a C++ dispatch; Apex O1's a Python one") {
  using trainsim::sim::AmpWeightCasts;
  struct Case {
    const char* framework;
    AmpWeightCasts casts;
    Pass priced_as;  // the pass whose per-kernel host time a forward weight cast costs
  };
  for (const Case& c : {Case{"pytorch_eager", AmpWeightCasts::dispatcher, Pass::backward},
                        Case{"pytorch_apex_amp", AmpWeightCasts::framework_op, Pass::forward}}) {
    INFO(c.framework);
    const auto s = trainsim::test::scenario({"model=resnet50", "precision=fp16", "cluster=dgx-h100",
                                             std::string("framework=") + c.framework});
    REQUIRE(s.framework.amp_weight_casts == c.casts);
    CHECK(named(s, "weight cast", Pass::forward).host_s ==
          Approx(trainsim::models::host_launch_s(s, c.priced_as)).epsilon(1e-12));
    // Backward's casts are the autograd engine's either way.
    CHECK(named(s, "weight grad cast", Pass::backward).host_s ==
          Approx(trainsim::models::host_launch_s(s, Pass::backward)).epsilon(1e-12));
  }
  // The C++ dispatch is the cheaper.
  const auto eager = trainsim::test::scenario(
      {"model=resnet50", "precision=fp16", "cluster=dgx-h100", "framework=pytorch_eager"});
  CHECK(trainsim::models::host_launch_s(eager, Pass::backward) <
        trainsim::models::host_launch_s(eager, Pass::forward));
}

TEST_CASE("a tied output projection casts the embedding's table; the embedding itself does not") {
  NetBuilder nb;
  const auto ids = nb.input({128}, false);
  nb.begin("embedding", OpClass::embedding, ids.elements());
  const auto x = nb.embedding(ids, 1000, 64, false);
  nb.end(x);
  nb.begin("norm", OpClass::normalization, x.elements());
  const auto y = nb.layer_norm(x);
  nb.end(y);
  nb.begin("head", OpClass::matmul, y.elements());
  nb.end(nb.linear(y, 1000, false, true));
  const auto layers = nb.take_layers();
  REQUIRE(layers.size() == 3);
  CHECK(layers[0].params == 64000);
  CHECK(layers[0].cast_param_tensors == 0);
  CHECK(layers[1].cast_param_tensors == 0);  // layer norm runs in fp32 on fp32 scales
  CHECK(layers[2].params == 0);              // the table is the embedding's
  CHECK(layers[2].cast_params == 64000);
  CHECK(layers[2].cast_param_tensors == 1);
}
