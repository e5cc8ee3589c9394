// The Megatron-LM table behind `trainsim validate --table megatron`: GPT models from 1.2B to 1T
// parameters on 1 to 3072 V100/A100 GPUs, with the layouts Megatron-LM ran them in.
//
// Sources of the layouts (the CSV gives only some of them):
// - 2021 weak scaling (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on
//   GPU Clusters Using Megatron-LM", arXiv 2104.04473, Table 1; the README's cases_april2021.png):
//   the scripts that produced Table 1, NVIDIA/Megatron-LM @de7dc40 examples/sc21/run_table_1.sh
//   (tensor and pipeline sizes, micro-batch size, DDP implementation, layers per virtual stage,
//   --checkpoint-activations) and examples/sc21/CONFIG.sh (sequence 2048, --fp16).
// - GPT-3 175B (README @50a4b5f, 'GPT-3 Example'; examples/pretrain_gpt3_175B.sh at that commit):
//   tensor 8, pipeline 16, micro-batch 1, global batch 1536, --checkpoint-activations, --fp16,
//   the default local DDP; GPT-2's 50257-token vocabulary padded to 51200 (a multiple of 128 x
//   tensor size, megatron/tokenizer/tokenizer.py _vocab_size_with_padding).
// - 2020 tables (README and images/tables.tex @5281919): "model parallel" is Megatron v1's tensor
//   parallelism (it had no pipeline). "Batch size 8/16" is the batch per model replica, which is
//   the global batch of the 1-8 GPU runs: megatron/arguments.py at that commit, '--batch-size':
//   "Batch size per model instance (local batch size). Global batch size is local batch size times
//   data parallel size", as in Shoeybi et al. 2019 (arXiv 1909.08053) Sec. 5.1 ("a fixed batch
//   size of 8" for the model-parallel runs). "Batch size 2048" of the 128-way data-parallel runs is
//   global: 16 per replica. The published TFLOP/s agree with these batches and the FLOP formula
//   of megatron_flops_per_iteration (tests/validate/megatron_table_test.cpp checks all rows).
//   Megatron v1's default --DDP-impl local all-reduces the whole gradient after backward
//   (megatron/model/distributed.py at that commit).

#include "cli/validate_megatron.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "cli/validate_tables.hpp"
#include "models/scenario.hpp"
#include "models/training_step.hpp"

namespace trainsim::cli {

namespace {

constexpr const char* kCsv = "megatron_lm_throughput_2020_2021.csv";

// One row of NVIDIA/Megatron-LM @de7dc40 examples/sc21/run_table_1.sh (Table 1's runs).
struct Table1Layout {
  const char* size_label;
  int tensor, pipeline, micro_batch, global_batch, layers, hidden, heads, nodes;
  bool torch_ddp;
  int layers_per_virtual_stage;  // 0: --num-layers-per-virtual-pipeline-stage not given
};

// paper: NVIDIA/Megatron-LM @de7dc40 examples/sc21/run_table_1.sh: TP, PP, MBS, GBS, NLS, HS, NAH,
// NNODES, DDP and --num-layers-per-virtual-pipeline-stage of each MODEL_SIZE.
constexpr Table1Layout kTable1[] = {
    {"1.7B", 1, 1, 16, 512, 24, 2304, 24, 4, true, 0},
    {"3.6B", 2, 1, 16, 512, 30, 3072, 32, 8, true, 0},
    {"7.5B", 4, 1, 16, 512, 36, 4096, 32, 16, true, 0},
    {"18B", 8, 1, 8, 1024, 40, 6144, 48, 32, true, 0},
    {"39B", 8, 2, 4, 1536, 48, 8192, 64, 64, false, 0},
    {"76B", 8, 4, 2, 1792, 60, 10240, 80, 128, false, 5},
    {"145B", 8, 8, 2, 2304, 80, 12288, 96, 192, false, 5},
    {"310B", 8, 16, 1, 2160, 96, 16384, 128, 240, false, 3},
    {"530B", 8, 35, 1, 2520, 105, 20480, 128, 315, false, 1},
    {"1T", 8, 64, 1, 3072, 128, 25600, 160, 384, false, 0},
};
constexpr int kGpusPerNode = 8;  // paper: Narayanan et al. 2021, Sec. 5: 8 A100 GPUs per node

int as_int(const TableRow& r, const std::string& column) {
  const auto v = r.number(column);
  if (!v || *v != std::floor(*v)) {
    throw std::logic_error(std::string("tests/reference_data/") + kCsv + ":" +
                           std::to_string(r.line()) + ": column '" + column +
                           "' is not an integer: '" + r.at(column) + "'");
  }
  return static_cast<int>(*v);
}

void expect_equal(const TableRow& r, const char* what, long long csv, long long layout) {
  if (csv == layout) return;
  throw std::logic_error(std::string("tests/reference_data/") + kCsv + ":" +
                         std::to_string(r.line()) + ": " + what + " " + std::to_string(csv) +
                         " disagrees with the run's layout (" + std::to_string(layout) + ")");
}

MegatronRun run_2021(const TableRow& r) {
  MegatronRun run;
  const std::string size = r.at("model_size_label");
  const Table1Layout* layout = nullptr;
  for (const Table1Layout& l : kTable1)
    if (size == l.size_label) layout = &l;
  if (layout == nullptr) {
    throw std::logic_error(std::string("tests/reference_data/") + kCsv + ":" +
                           std::to_string(r.line()) + ": no Table 1 layout for '" + size + "'");
  }
  run.layers = layout->layers;
  run.hidden = layout->hidden;
  run.heads = layout->heads;
  run.seq_len = as_int(r, "seq_len");
  run.vocab = as_int(r, "vocab_size");
  run.gpus = layout->nodes * kGpusPerNode;
  run.tensor = layout->tensor;
  run.pipeline = layout->pipeline;
  run.micro_batch = layout->micro_batch;
  run.global_batch = layout->global_batch;
  run.overlap_grad_reduce = layout->torch_ddp;
  if (layout->layers_per_virtual_stage > 0) {
    run.virtual_stages = layout->layers / (layout->pipeline * layout->layers_per_virtual_stage);
  }
  expect_equal(r, "hidden_size", as_int(r, "hidden_size"), run.hidden);
  expect_equal(r, "num_layers", as_int(r, "num_layers"), run.layers);
  expect_equal(r, "num_gpus", as_int(r, "num_gpus"), run.gpus);
  expect_equal(r, "global_batch_size_sequences", as_int(r, "global_batch_size_sequences"),
               run.global_batch);
  expect_equal(r, "model_parallel_size_total", as_int(r, "model_parallel_size_total"),
               run.tensor * run.pipeline);
  run.series = "A100 (Selene) 2021";
  run.label = "GPT " + size + " on " + std::to_string(run.gpus) + " A100 (tp " +
              std::to_string(run.tensor) + ", pp " + std::to_string(run.pipeline) + ")";
  run.cluster = "selene";
  return run;
}

MegatronRun run_gpt3(const TableRow& r) {
  MegatronRun run;
  // paper: NVIDIA/Megatron-LM @50a4b5f examples/pretrain_gpt3_175B.sh: --num-layers 96
  // --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 --micro-batch-size 1
  // --global-batch-size 1536, tensor 8, pipeline 16, 128 nodes of 8 GPUs
  run.layers = 96;
  run.hidden = 12288;
  run.heads = 96;
  run.seq_len = 2048;
  run.vocab = 51200;  // GPT-2's 50257 padded to a multiple of 128 x 8 (see the file comment)
  run.gpus = as_int(r, "num_gpus");
  run.tensor = as_int(r, "tensor_mp_size");
  run.pipeline = as_int(r, "pipeline_mp_size");
  run.micro_batch = 1;
  run.global_batch = as_int(r, "global_batch_size_sequences");
  run.iteration_ms = 32000;  // paper: README @50a4b5f: "each iteration takes around 32 seconds"
  run.series = "A100 (Selene) 2021";
  run.label = "GPT-3 175B on 1024 A100 (tp 8, pp 16; README example)";
  run.cluster = "selene";
  return run;
}

MegatronRun run_2020(const TableRow& r) {
  MegatronRun run;
  const std::string table = r.at("table");
  const bool dgx2 = table.find("DGX-2") != std::string::npos;
  const bool data_parallel = table.find("data parallel") != std::string::npos;
  run.layers = as_int(r, "num_layers");
  run.hidden = as_int(r, "hidden_size");
  run.heads = as_int(r, "attention_heads");
  run.seq_len = as_int(r, "seq_len");
  run.vocab = as_int(r, "vocab_size");
  run.gpt2_positions = true;
  run.gpus = as_int(r, "num_gpus");
  run.tensor = as_int(r, "model_parallel_size_total");
  run.pipeline = 1;
  // paper: NVIDIA/Megatron-LM @5281919 images/tables.tex headings: batch size 8 (DGX-2), 16
  // (DGX-A100), 2048 over 128 replicas (DGX-A100 data parallel); per replica, as the file comment
  // explains.
  run.micro_batch = dgx2 ? 8 : 16;
  run.global_batch = data_parallel ? as_int(r, "global_batch_size_sequences") : run.micro_batch;
  run.iteration_ms = r.number("iteration_time_ms");
  run.series = std::string(dgx2 ? "DGX-2 V100" : "DGX A100") + " 2020 " +
               (data_parallel ? "model+data parallel" : "model parallel");
  run.label = "GPT-2 " + r.at("model_size_label") + " on " + std::to_string(run.gpus) +
              (dgx2 ? " V100 (DGX-2" : " A100 (DGX A100") + ", tp " + std::to_string(run.tensor) +
              (data_parallel ? ", dp 128)" : ")");
  if (dgx2) {
    run.cluster = "dgx-2";
  } else if (data_parallel) {
    // Multi-node DGX A100 (320 GB, 40 GB A100s, the 2020 model) on a fat tree of HDR InfiniBand
    // with 8 compute HCAs per node as in Selene; the README does not name the cluster.
    run.cluster = "selene";
    run.accelerator = "a100-sxm4-40gb";
  } else {
    run.cluster = "dgx-a100";
  }
  return run;
}

}  // namespace

std::vector<MegatronRun> megatron_runs() {
  std::vector<MegatronRun> runs;
  const fit::CsvTable table = embedded_table(kCsv);
  for (const fit::CsvRow& row : table.rows) {
    const TableRow r(table, row);
    const std::string id = r.at("source_id");
    MegatronRun run;
    if (id == "mlm2021_a100") {
      run = run_2021(r);
    } else if (id == "mlm2021_gpt3") {
      run = run_gpt3(r);
    } else if (id == "mlm2020_tables") {
      run = run_2020(r);
    } else {
      throw std::logic_error(std::string("tests/reference_data/") + kCsv + ":" +
                             std::to_string(r.line()) + ": unknown source_id '" + id + "'");
    }
    run.source_id = id;
    run.line = r.line();
    const auto tflops = r.number("tflops_per_gpu");
    if (!tflops || *tflops <= 0) {
      throw std::logic_error(std::string("tests/reference_data/") + kCsv + ":" +
                             std::to_string(r.line()) + ": no tflops_per_gpu");
    }
    run.tflops_per_gpu = *tflops;
    const int model_parallel = run.tensor * run.pipeline;
    run.data = run.gpus / model_parallel;
    const int per_replica = run.global_batch / run.data;
    run.microbatches = per_replica / run.micro_batch;
    if (run.data * model_parallel != run.gpus ||
        run.microbatches * run.micro_batch * run.data != run.global_batch) {
      throw std::logic_error(std::string("tests/reference_data/") + kCsv + ":" +
                             std::to_string(r.line()) + ": " + std::to_string(run.gpus) +
                             " GPUs and global batch " + std::to_string(run.global_batch) +
                             " do not divide into the layout");
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

double megatron_flops_per_iteration(const MegatronRun& run) {
  // paper: Narayanan et al. 2021 (arXiv 2104.04473), Sec. 5.1, eq. (3): F = 96 B s l h^2
  // (1 + s / (6 h) + V / (16 l h)): forward, backward and the forward recomputed under full
  // activation recomputation, with the logit layer.
  const double b = run.global_batch, s = run.seq_len, l = run.layers, h = run.hidden, v = run.vocab;
  return 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
}

nlohmann::json megatron_scenario(const MegatronRun& run, const sim::ProfileLibrary& profiles) {
  nlohmann::json cluster = profiles.find(run.cluster, "cluster", "megatron table").json;
  const int per_node = cluster["node"]["accelerators_per_node"].get<int>();
  cluster["nodes"] = std::max(1, run.gpus / per_node);
  if (!run.accelerator.empty()) cluster["node"]["accelerator"] = run.accelerator;
  nlohmann::json model = {{"name", run.gpt2_positions ? "gpt2" : "gpt3_175b"},
                          {"n_layer", run.layers},
                          {"d_model", run.hidden},
                          {"heads", run.heads},
                          {"seq_len", run.seq_len},
                          {"vocab", run.vocab}};
  if (!run.gpt2_positions) model["d_head"] = run.hidden / run.heads;
  // paper: Megatron-LM's GELU is one torch.jit-scripted kernel (megatron/model/utils.py,
  // gelu_impl), not Hugging Face's eight eager ops.
  if (run.gpt2_positions) model["gelu_kernels"] = 1;
  nlohmann::json parallelism = {
      {"data", run.data}, {"tensor", run.tensor}, {"pipeline", run.pipeline}};
  int batch_per_replica = run.micro_batch;
  if (run.pipeline > 1) {
    // Megatron-LM's pipelines run 1F1B (PipeDream-Flush; Narayanan et al. 2021, Sec. 2.2) over
    // the replica's micro-batches of one iteration.
    parallelism["schedule"] = "1f1b";
    parallelism["microbatches"] = run.microbatches;
    batch_per_replica = run.micro_batch * run.microbatches;
    if (run.virtual_stages > 1) parallelism["virtual_stages"] = run.virtual_stages;
  } else if (run.microbatches > 1) {
    parallelism["grad_accum"] = run.microbatches;
  }
  nlohmann::json communication = {{"overlap", run.overlap_grad_reduce}};
  // paper: torch DDP's default 25 MB buckets (torch.nn.parallel.DistributedDataParallel
  // bucket_cap_mb); Megatron's local DDP all-reduces one contiguous gradient buffer
  // (NVIDIA/Megatron-LM @50a4b5f megatron/model/distributed.py allreduce_gradients), i.e. one
  // bucket larger than any replica's gradient.
  communication["bucket_size"] = run.overlap_grad_reduce ? "25 MB" : "1 TB";
  return {{"name", "megatron " + run.label},
          {"cluster", cluster},
          {"model", model},
          {"framework", "megatron_lm"},
          {"batch_per_replica", batch_per_replica},
          {"precision", "fp16"},  // paper: --fp16 in every script and README table
          {"optimizer", "adam"},  // paper: Megatron-LM's default --optimizer adam (Apex FusedAdam)
          // paper: --checkpoint-activations in run_table_1.sh, pretrain_gpt3_175B.sh; the 2020
          // TFLOP/s count the recomputed forward (eq. 3 reproduces them only with it)
          {"recompute", "full"},
          {"parallelism", parallelism},
          {"communication", communication},
          {"steps", 2},
          {"warmup_steps", 1}};
}

namespace {

std::vector<fit::ValidationPoint> megatron_tflops(const sim::ProfileLibrary& lib) {
  std::vector<fit::ValidationPoint> out;
  for (const MegatronRun& run : megatron_runs()) {
    const models::Scenario s = models::load_scenario(
        megatron_scenario(run, lib), "megatron table line " + std::to_string(run.line), {}, lib);
    const models::StepReport report = models::simulate_training(s);
    const double iteration_s = run.global_batch / report.throughput_samples_per_s;
    fit::ValidationPoint p;
    p.series = run.series;
    p.x = run.gpus;
    p.label = run.label;
    if (run.iteration_ms) {
      std::ostringstream os;
      os.precision(4);
      os << "; iteration " << *run.iteration_ms << " ms, simulated " << 1e3 * iteration_s << " ms";
      p.label += os.str();
    }
    p.measured = run.tflops_per_gpu;
    p.predicted = megatron_flops_per_iteration(run) / iteration_s / run.gpus / 1e12;
    out.push_back(p);
  }
  fit::split_halves(out);
  return out;
}

}  // namespace

void add_megatron_tables(std::vector<ReferenceTable>& tables) {
  tables.push_back(
      {"megatron",
       "NVIDIA/Megatron-LM README @50a4b5f (2021 A100 weak scaling = Narayanan et al. 2021, arXiv "
       "2104.04473, Table 1; GPT-3 175B example) and @5281919 images/tables.tex (2020 DGX-2 and "
       "DGX A100 tables)",
       "TFLOP/s per GPU", megatron_tflops});
}

}  // namespace trainsim::cli
