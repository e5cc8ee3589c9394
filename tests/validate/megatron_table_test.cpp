// The Megatron-LM table's rows as trainsim runs them: the layouts taken from the paper's scripts,
// the FLOP formula that turns iteration times into TFLOP/s, the batch reading of the 2020 tables,
// and the scenarios built from them (the accuracy itself is pinned in pins.json).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "cli/profiles_source.hpp"
#include "cli/validate_megatron.hpp"
#include "models/scenario.hpp"

namespace {

using trainsim::cli::MegatronRun;

const MegatronRun& find_run(const std::vector<MegatronRun>& runs, const std::string& prefix) {
  for (const MegatronRun& r : runs)
    if (r.label.rfind(prefix, 0) == 0) return r;
  FAIL("no run labelled " << prefix);
  return runs.front();
}

}  // namespace

TEST_CASE("megatron table: every row gets the layout Megatron-LM ran") {
  const auto runs = trainsim::cli::megatron_runs();
  std::map<std::string, int> by_source;
  for (const MegatronRun& r : runs) {
    ++by_source[r.source_id];
    INFO(r.label);
    CHECK(r.tensor * r.pipeline * r.data == r.gpus);
    CHECK(r.micro_batch * r.microbatches * r.data == r.global_batch);
    CHECK(r.layers % (r.pipeline * r.virtual_stages) == 0);  // whole layers per model chunk
  }
  CHECK(by_source["mlm2021_a100"] == 10);
  CHECK(by_source["mlm2021_gpt3"] == 1);
  CHECK(by_source["mlm2020_tables"] == 12);

  // NVIDIA/Megatron-LM @de7dc40 examples/sc21/run_table_1.sh.
  const MegatronRun& small = find_run(runs, "GPT 1.7B ");
  CHECK(small.tensor == 1);
  CHECK(small.data == 32);
  CHECK(small.micro_batch == 16);
  CHECK(small.microbatches == 1);
  CHECK(small.overlap_grad_reduce);  // --DDP-impl torch
  const MegatronRun& b18 = find_run(runs, "GPT 18B ");
  CHECK(b18.tensor == 8);
  CHECK(b18.data == 32);
  CHECK(b18.microbatches == 4);  // 1024 / (32 x 8): gradient accumulation without a pipeline
  const MegatronRun& b76 = find_run(runs, "GPT 76B ");
  CHECK(b76.pipeline == 4);
  CHECK(b76.data == 32);
  CHECK(b76.micro_batch == 2);
  CHECK(b76.microbatches == 28);
  CHECK(b76.virtual_stages == 3);        // 60 layers / (4 stages x 5 layers per virtual stage)
  CHECK_FALSE(b76.overlap_grad_reduce);  // --DDP-impl local
  const MegatronRun& b530 = find_run(runs, "GPT 530B ");
  CHECK(b530.pipeline == 35);
  CHECK(b530.data == 9);
  CHECK(b530.microbatches == 280);
  CHECK(b530.virtual_stages == 3);
  const MegatronRun& t1 = find_run(runs, "GPT 1T ");
  CHECK(t1.pipeline == 64);
  CHECK(t1.data == 6);
  CHECK(t1.microbatches == 512);
  CHECK(t1.virtual_stages == 1);
  // README @50a4b5f GPT-3 example: 1024 GPUs = tp 8 x pp 16 x dp 8, 1536 / 8 = 192 micro-batches.
  const MegatronRun& gpt3 = find_run(runs, "GPT-3 175B ");
  CHECK(gpt3.data == 8);
  CHECK(gpt3.microbatches == 192);
  // 2020: batch 8 / 16 per model replica; 2048 over 128 replicas.
  const MegatronRun& v8 = find_run(runs, "GPT-2 8B on 8 V100");
  CHECK(v8.tensor == 8);
  CHECK(v8.data == 1);
  CHECK(v8.global_batch == 8);
  const MegatronRun& a8 = find_run(runs, "GPT-2 8B on 1024 A100");
  CHECK(a8.tensor == 8);
  CHECK(a8.data == 128);
  CHECK(a8.micro_batch == 16);
}

TEST_CASE("megatron table: eq. 3 turns every published iteration time into its TFLOP/s") {
  // Narayanan et al. 2021 eq. 3 with the batches read as above reproduces the 2020 tables'
  // TeraFLOPs per GPU from their iteration times within 0.1% (so "batch size 8" is per replica,
  // and the runs recomputed activations), and the GPT-3 example's 138 TFLOP/s from "around 32
  // seconds" within 0.3%.
  int checked = 0;
  for (const MegatronRun& r : trainsim::cli::megatron_runs()) {
    if (!r.iteration_ms) continue;
    INFO(r.label);
    const double tflops =
        trainsim::cli::megatron_flops_per_iteration(r) / (*r.iteration_ms * 1e-3) / r.gpus / 1e12;
    CHECK(tflops == Approx(r.tflops_per_gpu).epsilon(r.source_id == "mlm2021_gpt3" ? 3e-3 : 1e-3));
    ++checked;
  }
  CHECK(checked == 13);
  // GPT-3 175B: 4.51e18 FLOPs per iteration of 1536 sequences.
  const auto runs = trainsim::cli::megatron_runs();
  CHECK(trainsim::cli::megatron_flops_per_iteration(find_run(runs, "GPT-3 175B ")) ==
        Approx(4.5113e18).epsilon(1e-4));
}

TEST_CASE("megatron table: each row's scenario loads with its model, layout and precision") {
  const trainsim::sim::ProfileLibrary profiles = trainsim::cli::load_profile_library({});
  for (const MegatronRun& r : trainsim::cli::megatron_runs()) {
    INFO(r.label);
    const auto s = trainsim::models::load_scenario(trainsim::cli::megatron_scenario(r, profiles),
                                                   r.label, {}, profiles);
    CHECK(s.devices() == r.gpus);
    CHECK(s.cluster.nodes == std::max(1, r.gpus / s.cluster.accelerators_per_node));
    CHECK(s.tensor_parallel == r.tensor);
    CHECK(s.pipeline_stages == r.pipeline);
    CHECK(s.virtual_stages == r.virtual_stages);
    CHECK(s.batch_per_replica * s.data_parallel * s.grad_accum == r.global_batch);
    CHECK(s.recompute == trainsim::models::Recompute::full);
    CHECK(s.precision == trainsim::sim::Dtype::fp16);
    CHECK(s.framework.name == "megatron_lm");
    CHECK(s.comm.overlap == r.overlap_grad_reduce);
    // The zoo model has Megatron's parameter count: 12 l h^2 (1 + 13 / (12 h) + (V + p) /
    // (12 l h)) with p learned positions (Narayanan et al. 2021, Sec. 5.1), ties included.
    const double l = r.layers, h = r.hidden, v = r.vocab, p = r.seq_len;
    const double megatron_params = 12 * l * h * h * (1 + 13 / (12 * h) + (v + p) / (12 * l * h));
    CHECK(static_cast<double>(s.model.params()) == Approx(megatron_params).epsilon(1e-5));
  }
}

TEST_CASE("megatron_lm framework profile: Megatron's fp16 optimizer and Apex FusedAdam") {
  const trainsim::sim::ProfileLibrary profiles = trainsim::cli::load_profile_library({});
  const auto f = profiles.framework("megatron_lm", "test");
  // Float16OptimizerWithFloat16Params: fp16 model, fp32 main parameters.
  CHECK(f.mixed_precision == trainsim::sim::MixedPrecision::master_weights);
  // Apex multi_tensor_adam: depth 4 (grad, param, m, v) -> 36 tensors per launch.
  CHECK(f.optimizer_kernels == trainsim::sim::OptimizerKernels::fused);
  CHECK(f.tensors_per_optimizer_kernel == 36);
  CHECK(f.fusion == trainsim::sim::Fusion::pointwise);
  CHECK_FALSE(f.graph_launch);
  CHECK(f.host_syncs_per_step == 1);
}
