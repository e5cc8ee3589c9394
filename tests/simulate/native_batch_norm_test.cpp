// PyTorch calls cuDNN's batch norm except for bf16 activations, which run its native kernels
// (aten/src/ATen/native/Normalization.cpp, _select_batch_norm_backend): the H200's ResNet-50
// profile has 4 forward and 3 backward kernels per batch norm in bf16 (channels-last), cuDNN's
// one each way in TF32 (tests/reference_data/h200_profile_kernels.csv). The framework profile's
// batch_norm says which.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/kernel_plan.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Launch;
using trainsim::models::Pass;
using trainsim::models::Scenario;

namespace {

Scenario resnet(const std::string& precision, const std::string& framework) {
  return trainsim::test::scenario(
      {"model=resnet50", "precision=" + precision, "framework=" + framework, "cluster=dgx-h100"});
}

// The launches of ResNet-50's first batch norm (the stem's) in `pass`.
std::vector<Launch> bn_launches(const Scenario& s, Pass pass) {
  for (const auto& l : s.model.layers) {
    if (l.op != trainsim::models::OpClass::normalization) continue;
    std::vector<Launch> out;
    trainsim::models::layer_launches(s, l, pass, 32, out);
    return out;
  }
  FAIL("no batch norm in " << s.model.name);
  return {};
}

}  // namespace

TEST_CASE("PyTorch's bf16 batch norm runs its native kernels, launched from one op") {
  const auto s = resnet("bf16", "pytorch_eager");
  REQUIRE(s.framework.batch_norm == trainsim::sim::BatchNormKernels::native_for_bf16);
  const auto fwd = bn_launches(s, Pass::forward);
  REQUIRE(fwd.size() == 4);
  CHECK(std::string(fwd[0].what) == "bn semaphores");
  CHECK(std::string(fwd[3].what) == "bn normalize");
  // The op's dispatch once; the rest from its C++.
  CHECK(fwd[0].host_s == Approx(trainsim::models::host_launch_s(s, Pass::forward)).epsilon(1e-12));
  for (std::size_t i = 1; i < fwd.size(); ++i)
    CHECK(fwd[i].host_s == Approx(s.framework.host_library_launch_s).epsilon(1e-12));
  const auto bwd = bn_launches(s, Pass::backward);
  REQUIRE(bwd.size() == 3);
  CHECK(bwd[0].host_s == Approx(trainsim::models::host_launch_s(s, Pass::backward)).epsilon(1e-12));
}

TEST_CASE("cuDNN's batch norm serves fp16 in PyTorch and bf16 elsewhere") {
  for (const auto& [precision, framework] : std::vector<std::pair<std::string, std::string>>{
           {"fp16", "pytorch_eager"}, {"tf32", "pytorch_eager"}, {"bf16", "tensorflow_xla"}}) {
    INFO(precision << " " << framework);
    const auto s = resnet(precision, framework);
    const auto fwd = bn_launches(s, Pass::forward);
    REQUIRE(fwd.size() == 1);
    CHECK(std::string(fwd[0].what) == "bn fwd");
    CHECK(bn_launches(s, Pass::backward).size() == 1);
  }
}

TEST_CASE("the native batch norm moves the bytes cuDNN's does, in more kernels") {
  const auto s = resnet("bf16", "pytorch_eager");
  for (const auto& l : s.model.layers) {
    if (l.op != trainsim::models::OpClass::normalization) continue;
    for (const auto* specs : {&l.fwd_kernels, &l.bwd_kernels}) {
      double native = 0, cudnn = 0;
      for (const auto& k : *specs) {
        const double bytes = trainsim::models::instantiate(k, 32, trainsim::sim::Dtype::bf16).bytes;
        (k.norm_form == trainsim::models::NormForm::native_only ? native : cudnn) += bytes;
      }
      REQUIRE(cudnn > 0);
      // The activations' traffic alike; the native kernels also touch per-channel statistics.
      CHECK(native == Approx(cudnn).epsilon(0.01));
    }
    break;
  }
}

TEST_CASE("the native batch norm's big kernels stream at a normalisation's rate") {
  // They walk channels-last rows an element per thread and reduce per channel: the H200's bf16
  // ResNet-50 profile times them at 1.8-2.9 TB/s, a normalisation's rate, and the statistics,
  // Welford's running mean and variance, slower still (net_builder.cpp, batch_norm).
  const auto s = resnet("bf16", "pytorch_eager");
  int big = 0;
  for (const auto& l : s.model.layers) {
    if (l.op != trainsim::models::OpClass::normalization) continue;
    for (const auto* specs : {&l.fwd_kernels, &l.bwd_kernels}) {
      for (const auto& k : *specs) {
        if (k.norm_form != trainsim::models::NormForm::native_only || k.act_elements == 0) continue;
        INFO(k.what);
        CHECK(k.cls == trainsim::sim::KernelClass::normalization);
        CHECK((k.element_math == trainsim::sim::ElementMath::layer_norm) ==
              (std::string(k.what) == "bn stats"));
        ++big;
      }
    }
    break;
  }
  CHECK(big == 4);  // statistics, normalisation, scale/shift gradients, input gradient
}
