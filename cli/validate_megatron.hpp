#pragma once
// Megatron-LM's published GPT throughput
// (tests/reference_data/megatron_lm_throughput_2020_2021.csv) as `trainsim validate` runs it: each
// row becomes the layout Megatron-LM ran (tensor x pipeline x data parallelism, micro-batch size,
// interleaving, full activation recomputation, fp16 with fp32 main parameters, Adam) and is
// compared in achieved TFLOP/s per GPU, counted with Megatron's own FLOP formula over the simulated
// iteration time.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/profile_library.hpp"

namespace trainsim::cli {

// One row of the CSV with the run's layout (from the CSV, the paper's scripts or the README).
struct MegatronRun {
  std::string source_id;  // the CSV's source_id: mlm2021_a100, mlm2021_gpt3, mlm2020_tables
  std::string series;     // rows of one weak-scaling curve
  std::string label;      // readable row name
  int line = 0;           // CSV line

  // GPT hyper-parameters.
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int seq_len = 0;
  int vocab = 0;
  bool gpt2_positions = false;  // 2020 rows: GPT-2 with a 1024-row position table

  // Layout: gpus = tp x pp x dp; global_batch = micro_batch x microbatches x dp.
  int gpus = 0;
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int micro_batch = 1;
  int microbatches = 1;  // per replica per iteration (gradient accumulation without a pipeline)
  int virtual_stages = 1;
  int global_batch = 0;
  // torch DistributedDataParallel (bucketed all-reduce overlapped with backward); false: Megatron's
  // local DDP, one all-reduce of the whole gradient after the last backward.
  bool overlap_grad_reduce = false;
  std::string cluster;      // cluster profile
  std::string accelerator;  // replaces the profile's accelerator where not empty

  // Published figures.
  double tflops_per_gpu = 0;
  std::optional<double> iteration_ms;
};

// Every row of the CSV with its layout; std::logic_error where a row and the layout taken from the
// paper's scripts disagree (hidden size, layers, GPUs, batch, model-parallel size).
std::vector<MegatronRun> megatron_runs();

// Model FLOPs of one iteration as Megatron-LM counts them (forward, backward and the recomputed
// forward): 96 B s l h^2 (1 + s / (6 h) + V / (16 l h)).
double megatron_flops_per_iteration(const MegatronRun& run);

// The scenario document that simulates `run` (cluster profiles are read from `profiles`).
nlohmann::json megatron_scenario(const MegatronRun& run, const sim::ProfileLibrary& profiles);

}  // namespace trainsim::cli
