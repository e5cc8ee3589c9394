// LAMB against Adam in the optimizer step: the same state, more launches and more memory traffic
// (apex FusedLAMB's four launches where FusedAdam has one; the update written once and read
// twice, the weights and the gradient read once more).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/kernel_plan.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Launch;
using trainsim::models::optimizer_launches;
using trainsim::models::Scenario;
using trainsim::test::scenario;

namespace {

const Launch& step_launch(const std::vector<Launch>& launches) {
  for (const Launch& l : launches) {
    if (std::string(l.what) == "optimizer") return l;
  }
  FAIL("no optimizer launch");
  return launches.front();
}

std::vector<Launch> launches_of(const Scenario& s) {
  std::vector<Launch> out;
  optimizer_launches(s, static_cast<double>(s.model.params()), s.model.param_tensors(), out);
  return out;
}

}  // namespace

TEST_CASE("LAMB launches four kernels where Adam launches one, and moves more bytes") {
  // fp32 so that neither step unscales gradients; the optimizer kernels are memory-bound.
  // (PyTorch's own Adam is torch.optim's foreach step of eight ops: below.)
  for (const char* framework : {"megatron_lm", "tensorflow_graph"}) {
    INFO(framework);
    const std::vector<std::string> base{"framework=" + std::string(framework), "precision=fp32"};
    std::vector<std::string> adam_sets = base, lamb_sets = base;
    adam_sets.push_back("optimizer=adam");
    lamb_sets.push_back("optimizer=lamb");
    const Scenario adam_s = scenario(adam_sets), lamb_s = scenario(lamb_sets);
    REQUIRE(lamb_s.optimizer == trainsim::models::Optimizer::lamb);
    const Launch adam = step_launch(launches_of(adam_s));
    const Launch lamb = step_launch(launches_of(lamb_s));
    CHECK(lamb.count == 4 * adam.count);
    // Adam reads and writes weights and both moments and reads the gradient: 28 bytes per fp32
    // parameter; LAMB adds 20 and the gradient's 4 more: 52. Per tensor (TF), most of
    // ResNet-50's tensors are small enough that each launch costs its latency, so four launches
    // cost up to four times one.
    const double ratio = (lamb.device_s * lamb.count) / (adam.device_s * adam.count);
    CHECK(ratio > 1.5);
    CHECK(ratio < (std::string(framework) == "tensorflow_graph" ? 4.0 : 52.0 / 28.0 * 1.25));
    // The same two fp32 moments per parameter.
    CHECK(trainsim::models::optimizer_state_bytes_per_param(lamb_s) ==
          trainsim::models::optimizer_state_bytes_per_param(adam_s));
  }
}

TEST_CASE("BertAdam launches twelve unfused ops per tensor after one global norm") {
  // DeepLearningExamples' BertAdam (optimization.py): a multi-tensor L2 norm of the gradients,
  // then per tensor mul_, add_, mul_, addcmul_, sqrt, + eps, /, decay *, +=, lr *, neg, add_.
  const std::vector<std::string> base{"framework=pytorch_eager", "precision=fp32"};
  std::vector<std::string> adam_sets = base, bert_sets = base;
  adam_sets.push_back("optimizer=adam");
  bert_sets.push_back("optimizer=bert_adam");
  const Scenario adam_s = scenario(adam_sets), bert_s = scenario(bert_sets);
  REQUIRE(bert_s.optimizer == trainsim::models::Optimizer::bert_adam);
  const std::vector<Launch> bert = launches_of(bert_s);
  const int tensors = bert_s.model.param_tensors();
  REQUIRE(bert.size() == 13);
  CHECK(std::string(bert.front().what) == "grad global norm");
  CHECK(bert.front().count == (tensors + 109) / 110);  // the profile's 110 tensors per launch
  double per_tensor_device_s = 0;
  for (std::size_t i = 1; i < bert.size(); ++i) {
    CHECK(bert[i].count == tensors);
    CHECK(bert[i].host_s == Approx(bert_s.framework.host_optimizer_per_kernel_s));
    per_tensor_device_s += bert[i].device_s * bert[i].count;
  }
  // 116 bytes per fp32 parameter in twelve passes against foreach Adam's 28 in one: several
  // times the device time, and twelve host launches per tensor against 8 per 110 tensors.
  double adam_device_s = 0, adam_launches = 0;
  for (const Launch& l : launches_of(adam_s)) {
    adam_device_s += l.device_s * l.count;
    adam_launches += l.count;
  }
  CHECK(per_tensor_device_s > 116.0 / 28.0 * adam_device_s * 0.9);
  CHECK(12.0 * tensors > 10 * adam_launches);
  // The same two fp32 moments per parameter as Adam.
  CHECK(trainsim::models::optimizer_state_bytes_per_param(bert_s) ==
        trainsim::models::optimizer_state_bytes_per_param(adam_s));
  // Under torch.amp the gradients are unscaled first, as for any optimizer.
  const std::vector<Launch> amp =
      launches_of(scenario({"framework=pytorch_eager", "precision=fp16", "optimizer=bert_adam"}));
  REQUIRE(amp.size() == 14);
  CHECK(std::string(amp.front().what) == "grad unscale");
}

TEST_CASE("torch.optim's foreach steps move each op's tensors") {
  // PyTorch eager (multi_tensor optimizer kernels), fp32: one kernel per op and group of tensors,
  // each reading and writing whole fp32 tensors (kernel_plan.cpp, kForeach*Ops).
  struct Case {
    const char* optimizer;
    std::size_t ops;
    double bytes_per_param;
  };
  for (const Case& c : {Case{"sgd", 1, 12}, Case{"momentum", 3, 32}, Case{"adam", 8, 80}}) {
    INFO(c.optimizer);
    const Scenario s = scenario(
        {"framework=pytorch_eager", "precision=fp32", "optimizer=" + std::string(c.optimizer)});
    const auto launches = launches_of(s);
    REQUIRE(launches.size() == c.ops);
    const auto& acc = s.cluster.accelerator;
    // The device's streaming rate for optimizer kernels, from one large reference kernel.
    trainsim::sim::Kernel ref;
    ref.cls = trainsim::sim::KernelClass::optimizer;
    ref.bytes = 1e9;
    const double bytes_per_s =
        ref.bytes / (trainsim::sim::kernel_time_s(acc, ref) - acc.kernel_launch_overhead_s);
    double streamed_s = 0;
    for (const Launch& l : launches) {
      CHECK(l.count >= (s.model.param_tensors() + 109) / 110);  // multi_tensor_apply's limits
      streamed_s += l.count * (l.device_s - acc.kernel_launch_overhead_s);
    }
    CHECK(streamed_s * bytes_per_s ==
          Approx(c.bytes_per_param * static_cast<double>(s.model.params())).epsilon(1e-9));
  }
}

TEST_CASE("a foreach op launches as multi_tensor_apply splits it") {
  // 320 chunks of 65,536 elements or 110 / 64 / 48 tensors (one to three lists) per launch:
  // GPT-2's 124 M parameters in 148 tensors take 7 launches for each of AdamW's eight ops, as
  // the H200 profile of its bf16 step has (tests/reference_data/h200_profile_kernels.csv).
  const Scenario s =
      scenario({"framework=pytorch_eager", "precision=fp32", "optimizer=adam", "model=gpt2"});
  const auto launches = launches_of(s);
  REQUIRE(launches.size() == 8);
  for (const Launch& l : launches) {
    INFO(l.what);
    CHECK(l.count == 7);
  }
}
