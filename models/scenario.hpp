#pragma once
// A training scenario: cluster, model, batch, precision, optimizer, parallelism, communication
// and input pipeline, loaded strictly from JSON (with --set overrides applied first).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/convergence.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/config/json_source.hpp"
#include "sim/config/profile_library.hpp"
#include "sim/hw/specs.hpp"

namespace trainsim::models {

// bert_adam: Adam as NVIDIA DeepLearningExamples' BertAdam runs it (PyTorch/LanguageModeling/BERT/
// optimization.py, which run_squad.py uses without --fp16): a Python loop of unfused tensor ops
// per parameter (models/kernel_plan.cpp prices them).
enum class Optimizer { sgd, momentum, adam, lamb, bert_adam, jit_lamb };
// How the step clips the gradients by their global norm before the optimizer, as
// torch.nn.utils.clip_grad_norm_ runs it: not at all; a norm kernel and then a scaling kernel per
// tensor (PyTorch 1.x, and 2.x with foreach=False); or a multi-tensor _foreach_norm and
// _foreach_mul_ (PyTorch 2.x's default on CUDA). Both add the total norm's few scalar kernels.
enum class GradientClipping { none, per_tensor, foreach };
enum class EchoMode { example, batch };
enum class PipelineSchedule { gpipe, one_f_one_b };
// What backward recomputes instead of storing (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", Sec. 4-5): nothing; only the score-sized part of
// attention (softmax, its dropout, the probabilities: cheap to recompute, large to store);
// everything but checkpointed inputs. `"recompute": true / false` keep meaning full / none.
enum class Recompute { none, selective, full };
// The order ranks are laid out over the cluster, innermost first (Megatron-LM's
// parallel_state: tensor-parallel groups are consecutive ranks, then data, then pipeline).
enum class MeshOrder { tp_dp_pp, tp_pp_dp, dp_tp_pp };

struct InputPipelineSpec {
  bool enabled = false;          // false: inputs are synthetic and always ready
  double read_s_per_sample = 0;  // CPU seconds of one core per sample, per stage
  double decode_s_per_sample = 0;
  double augment_s_per_sample = 0;
  double batch_s_per_sample = 0;
  double storage_bytes_per_sample = 0;  // read from storage at the host's read bandwidth
  int workers = 1;                      // host cores given to the pipeline (per host)
  int prefetch_batches = 2;
  // Bytes copied host-to-device per element (default: the model's).
  InputDtype input_dtype = InputDtype::uint8;
  int echo_factor = 1;
  EchoMode echo_mode = EchoMode::batch;
  bool echo_before_augment = false;  // true: each echoed copy is augmented again (costs CPU)
};

// How the step prices its collectives (issue 14): flow-level message schedules on the cluster's
// network (default), or the alpha-beta closed forms when a scenario asks for them.
enum class CommModel { flow_level, alpha_beta };

// "communication.compression": how data parallelism exchanges gradients. Dense allreduce, or a
// sparsified exchange of the top density x elements per rank (Shi et al., ICDCS 2019:
// topk = allgather of every rank's selection, gtopk = the tree that keeps the global top-k).
enum class Compression { none, topk, gtopk };
const char* compression_name(Compression c);

struct CommSpec {
  // "communication.algorithm" for the data-parallel gradient collectives; `automatic` lets the
  // collective coster pick (NCCL's tuner).
  sim::collectives::Algorithm algorithm = sim::collectives::Algorithm::ring;
  CommModel model = CommModel::flow_level;  // "communication.model": "flow" | "alpha_beta"
  double bucket_bytes = 25e6;               // PyTorch DDP's default bucket
  bool overlap = true;
  // "communication.contention": the step's collectives take SMs and DRAM bandwidth from the
  // compute they overlap (models/training_step.cpp); false: they run beside it for free.
  bool contention = true;
  Compression compression = Compression::none;
  double density = 0.001;
};

// "target": the quality the job trains to (models/convergence.hpp): a shipped workload's fit, or
// explicit S_min / B_noise with optional standard errors.
struct ConvergenceTarget {
  std::string workload;  // empty when the parameters were given explicitly
  std::string metric;    // the workload's target, for reports
  ConvergenceParams params;
  // Worth of a repeated (echoed) sample relative to a fresh one; from the echo insertion point
  // unless the scenario gives `target.repeat_weight`.
  double repeat_weight = 0;
};

struct Scenario {
  std::string name;
  sim::ClusterSpec cluster;
  ZooModel model;
  int batch_per_replica = 1;
  bool batch_max = false;  // "batch_per_replica": "max": the largest that fits (pipeline sim)
  sim::Dtype precision = sim::Dtype::fp32;
  Optimizer optimizer = Optimizer::momentum;
  GradientClipping gradient_clipping = GradientClipping::none;  // "gradient_clipping"
  int data_parallel = 1;
  int pipeline_stages = 1;
  int tensor_parallel = 1;         // "parallelism.tensor": Megatron-style splits of each entry
  bool sequence_parallel = false;  // "parallelism.sequence_parallel"
  int zero = 0;                    // "parallelism.zero": ZeRO stage 0-3 (3 = FSDP full shard)
  int virtual_stages = 1;          // "parallelism.virtual_stages": interleaved 1F1B chunks
  MeshOrder order = MeshOrder::tp_dp_pp;  // "parallelism.order"
  int microbatches = 1;
  int grad_accum = 1;
  std::vector<int> balance;  // layers per pipeline stage; empty: balanced by simulated cost
  PipelineSchedule schedule = PipelineSchedule::gpipe;
  std::int64_t global_batch = 0;  // > 0: grad_accum = global / (batch x data)
  Recompute recompute = Recompute::none;
  bool inference = false;
  CommSpec comm;
  InputPipelineSpec input;
  int steps = 6;
  int warmup_steps = 2;
  double workspace_bytes = 0;
  sim::FrameworkSpec framework;  // `framework`: a hw_profiles/frameworks/ profile
  bool fused_attention = false;  // FlashAttention-style attention kernels (time and memory)
  std::optional<ConvergenceTarget> target;  // "target": steps/time/cost to a quality

  // Devices one replica of the model occupies, and the whole job.
  int model_parallel() const { return tensor_parallel * pipeline_stages; }
  int devices() const { return data_parallel * tensor_parallel * pipeline_stages; }
};

const char* recompute_name(Recompute r);
const char* mesh_order_name(MeshOrder o);

// The expansion load_scenario applies while overriding: "model": NAME becomes {"name": NAME},
// profile names (the cluster, the profiles it names, the framework) become their objects so a
// --set can reach inside them.
sim::StringExpander scenario_expander(const sim::ProfileLibrary& profiles);

// build_zoo_model plus the checks a scenario applies to the network (a resolution too small for
// its downsampling is refused). `where` labels errors, `resolution_where` that one.
ZooModel build_scenario_model(const std::string& name, const std::map<std::string, double>& hyper,
                              const std::string& where, const std::string& resolution_where);

// Loads `doc` (from `file`) after applying `overrides` ("PATH=VALUE"). `file` labels errors.
Scenario load_scenario(nlohmann::json doc, const std::string& file,
                       const std::vector<std::string>& overrides,
                       const sim::ProfileLibrary& profiles);

}  // namespace trainsim::models
