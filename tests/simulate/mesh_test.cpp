// The one mesh step simulator (issue 15): the same job expressed by different keys gets the same
// answer, LLM layouts simulate with every part of the breakdown, ZeRO shards memory by its closed
// forms, tensor parallelism splits the work, recomputation modes trade memory for time.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/training_step.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Scenario;
using trainsim::models::simulate_training;
using trainsim::models::StepReport;

using trainsim::test::breakdown_sum;
using trainsim::test::scenario;

namespace {

const std::string kExamples = std::string(TRAINSIM_SOURCE_DIR) + "/examples/";

// A 1.3B GPT on one DGX A100 (autocast: fp32 weights and gradients, Adam's two fp32 moments).
std::vector<std::string> gpt(std::vector<std::string> more) {
  std::vector<std::string> sets = {"model=gpt3_1_3b", "batch_per_replica=8",
                                   "optimizer=adam",  "input.enabled=false",
                                   "steps=3",         "warmup_steps=1"};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

}  // namespace

TEST_CASE("micro-batches and accumulation rounds of one stage are the same job") {
  // The demo at 2 x 128 samples per step and replica, expressed both ways: one simulator, one
  // memory model, the same flow-level collectives.
  const StepReport micro =
      simulate_training(scenario({"batch_per_replica=256", "parallelism.microbatches=2"}));
  const StepReport accum =
      simulate_training(scenario({"batch_per_replica=128", "parallelism.grad_accum=2"}));
  // Equal up to rounding: the input pipeline makes one 256-sample batch per round instead of two
  // 128-sample ones, which changes nothing in the steady state.
  CHECK(micro.step_time_s == Approx(accum.step_time_s).epsilon(1e-12));
  CHECK(micro.global_batch == accum.global_batch);
  CHECK(micro.memory.peak_bytes_per_device == accum.memory.peak_bytes_per_device);
  CHECK(micro.memory.max_microbatch_that_fits == accum.memory.max_microbatch_that_fits);
  CHECK(micro.memory.max_batch_that_fits == 2 * accum.memory.max_batch_that_fits);
  CHECK(micro.collective_model == accum.collective_model);
  // "batch_per_replica": "max" takes the same memory model.
  const StepReport max = simulate_training(scenario({"batch_per_replica=max"}));
  CHECK(max.pipeline.batch_per_replica == accum.memory.max_microbatch_that_fits);
}

TEST_CASE("GPT-3 175B on 1024 A100 and Llama 2 70B on 64 H100: every part of the breakdown") {
  const StepReport gpt3 = simulate_training(scenario({}, kExamples + "gpt3_175b_1024xa100.json"));
  CHECK(gpt3.devices == 1024);
  CHECK(gpt3.tensor_parallel == 8);
  CHECK(gpt3.pipeline_stages == 16);
  CHECK(gpt3.breakdown.compute_s > 0);
  CHECK(gpt3.breakdown.recompute_s > 0);  // full recomputation
  CHECK(gpt3.breakdown.tp_comm_s > 0);
  CHECK(gpt3.comm_time_s > 0);  // data-parallel gradient allreduce
  CHECK(gpt3.breakdown.bubble_s > 0);
  CHECK(gpt3.breakdown.optimizer_s > 0);
  CHECK(breakdown_sum(gpt3) == Approx(gpt3.step_time_s).epsilon(1e-9));
  CHECK(gpt3.memory.fits);
  CHECK(gpt3.mfu > 0.2);
  CHECK(gpt3.mfu < 0.6);
  // The bubble of 1F1B with 192 micro-batches over 16 stages is at least the ideal one.
  CHECK(gpt3.breakdown.bubble_s / gpt3.step_time_s >= 0.9 * gpt3.pipeline.ideal_bubble_fraction);

  const StepReport llama = simulate_training(scenario({}, kExamples + "llama2_70b_64xh100.json"));
  CHECK(llama.devices == 64);
  CHECK(llama.zero == 1);
  CHECK(llama.breakdown.tp_comm_s > 0);
  CHECK(llama.breakdown.zero_comm_s > 0);  // the distributed optimizer's parameter all-gather
  CHECK(llama.comm_time_s > 0);            // its gradient reduce-scatters
  CHECK(llama.breakdown.bubble_s > 0);
  CHECK(breakdown_sum(llama) == Approx(llama.step_time_s).epsilon(1e-9));
  CHECK(llama.memory.fits);
  // Determinism: the same inputs give bit-identical outputs.
  CHECK(simulate_training(scenario({}, kExamples + "llama2_70b_64xh100.json")).step_time_s ==
        llama.step_time_s);
}

TEST_CASE("ZeRO shards optimizer state, gradients and parameters over the data-parallel group") {
  const auto mem = [](int zero) {
    return simulate_training(scenario(gpt({"parallelism.zero=" + std::to_string(zero)}))).memory;
  };
  const auto z0 = mem(0);
  const auto z1 = mem(1);
  const auto z2 = mem(2);
  const auto z3 = mem(3);
  // Rajbhandari et al. 2020, Sec. 5 (here with fp32 weights and gradients under autocast):
  // stage 1 divides the optimizer state by Nd = 8, stage 2 also the gradients, stage 3 also the
  // parameters (plus two gathered layers' 16-bit parameters).
  CHECK(z1.optimizer_state_bytes == Approx(z0.optimizer_state_bytes / 8));
  CHECK(z1.gradients_bytes == z0.gradients_bytes);
  CHECK(z2.gradients_bytes == Approx(z0.gradients_bytes / 8));
  CHECK(z2.weights_bytes == z0.weights_bytes);
  CHECK(z3.weights_bytes > z0.weights_bytes / 8);
  CHECK(z3.weights_bytes < z0.weights_bytes / 4);
  CHECK(z0.peak_bytes_per_device > z1.peak_bytes_per_device);
  CHECK(z1.peak_bytes_per_device > z2.peak_bytes_per_device);
  CHECK(z2.peak_bytes_per_device > z3.peak_bytes_per_device);
}

TEST_CASE("ZeRO communication: reduce-scatter + all-gather, and FSDP's per-layer gathers") {
  const StepReport z0 = simulate_training(scenario(gpt({})));
  const StepReport z1 = simulate_training(scenario(gpt({"parallelism.zero=1"})));
  const StepReport z3 = simulate_training(scenario(gpt({"parallelism.zero=3"})));
  CHECK(z1.breakdown.zero_comm_s > 0);
  CHECK(z0.breakdown.zero_comm_s == 0);
  // ZeRO-3 gathers the 16-bit parameters twice (forward, backward) and reduce-scatters the fp32
  // autocast gradients: (2 + 2 + 4) bytes per parameter x (P-1)/P, the same volume as the
  // allreduce of fp32 gradients (2 x 4 x (P-1)/P), so about the same communication time.
  CHECK(z3.comm_time_s == Approx(z0.comm_time_s).epsilon(0.15));
  CHECK(breakdown_sum(z3) == Approx(z3.step_time_s).epsilon(1e-9));
  // With master weights (16-bit gradients) it is 1.5x the allreduce's bytes.
  const StepReport m0 = simulate_training(scenario(gpt({"framework=megatron_lm"})));
  const StepReport m3 =
      simulate_training(scenario(gpt({"framework=megatron_lm", "parallelism.zero=3"})));
  CHECK(m3.comm_time_s > 1.3 * m0.comm_time_s);
}

TEST_CASE("tensor parallelism splits the work and adds its collectives") {
  const StepReport tp1 = simulate_training(scenario(gpt({})));
  const StepReport tp2 =
      simulate_training(scenario(gpt({"parallelism.tensor=2", "parallelism.data=4"})));
  const StepReport sp2 = simulate_training(scenario(
      gpt({"parallelism.tensor=2", "parallelism.data=4", "parallelism.sequence_parallel=true"})));
  CHECK(tp1.breakdown.tp_comm_s == 0);
  CHECK(tp2.breakdown.tp_comm_s > 0);
  // Per device, the GEMMs halve; replicated norms and element-wise work do not.
  CHECK(tp2.breakdown.compute_s < 0.7 * tp1.breakdown.compute_s);
  CHECK(tp2.breakdown.compute_s > 0.45 * tp1.breakdown.compute_s);
  CHECK(tp2.memory.weights_bytes < 0.6 * tp1.memory.weights_bytes);
  // Sequence parallelism splits the replicated activations too (Korthikanti et al. 2022).
  CHECK(sp2.memory.activations_bytes < tp2.memory.activations_bytes);
  CHECK(tp2.global_batch == tp1.global_batch / 2);
}

TEST_CASE("recomputation: selective keeps less than none and re-runs less than full") {
  const StepReport none = simulate_training(scenario(gpt({})));
  const StepReport sel = simulate_training(scenario(gpt({"recompute=selective"})));
  const StepReport full = simulate_training(scenario(gpt({"recompute=full"})));
  CHECK(sel.memory.activations_bytes < none.memory.activations_bytes);
  CHECK(full.memory.activations_bytes < sel.memory.activations_bytes);
  CHECK(none.breakdown.recompute_s == 0);
  CHECK(sel.breakdown.recompute_s > 0);
  CHECK(sel.breakdown.recompute_s < full.breakdown.recompute_s);
  // `true` / `false` keep their meaning.
  CHECK(simulate_training(scenario(gpt({"recompute=true"}))).step_time_s == full.step_time_s);
  CHECK(simulate_training(scenario(gpt({"recompute=false"}))).step_time_s == none.step_time_s);
}
