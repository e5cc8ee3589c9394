#pragma once
// Capacity planning: for each catalog option and node count, the device-mesh layouts of the job
// (tensor x pipeline x data parallelism, interleaving, ZeRO stage, recomputation, micro-batch)
// at the scenario's global batch, pruned with the memory model (models::estimate_memory) before
// anything is simulated; their simulated throughput, MFU, time and cost for a piece of work; the
// Pareto front of cost vs time, the cheapest layout meeting the target and the best-MFU layout
// per option and node count.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/plan_catalog.hpp"
#include "models/scenario.hpp"
#include "models/training_step.hpp"

namespace trainsim::cli {

struct PlanTarget {
  std::optional<double> samples_per_s;  // a throughput target, or
  std::optional<double> time_s;         // a time to train `work_samples`
  double work_samples = 1e6;            // epochs x dataset samples (1e6 when not given)
  bool work_given = false;
  std::string text;  // as given, for reports
};

// "20000 samples/s" (or a bare number: samples/s) or a duration such as "24 h".
PlanTarget parse_plan_target(const std::string& text, std::optional<double> epochs,
                             std::optional<double> dataset_samples);

// The bounds of the layout search.
struct PlanSearchOptions {
  int max_pipeline = 8;  // pipeline depths 1, 2, 4, ... up to this
  int max_tensor = 0;    // tensor degrees 1, 2, 4, ... up to this; 0: the option's node size
  // Largest micro-batch tried in a pipeline (samples). Narayanan et al. 2021, "Efficient
  // Large-Scale Language Model Training on GPU Clusters Using Megatron-LM" (SC21), Sec. 3.4 and
  // Fig. 7: the best micro-batch of their GPT models lies in 1-8; larger ones only lengthen the
  // pipeline bubble (fewer micro-batches per step at a fixed global batch).
  int max_microbatch = 8;
  bool interleave = true;  // also try the interleaved 1F1B schedule for pipelines
};

// What became of a layout.
enum class CandidateStatus {
  simulated,
  no_fit,         // not one micro-batch fits in memory, even with full recomputation
  dominated,      // a lower ZeRO stage fits with the same recomputation and micro-batch
  not_divisible,  // the devices or the global batch do not divide into this layout
  failed,         // the scenario refused the layout, or the simulation failed (see `failure`)
};
const char* candidate_status_name(CandidateStatus s);

struct Candidate {
  std::size_t option = 0;  // index into the catalog
  int nodes = 1;
  int devices = 1;
  int data = 1;
  int tensor = 1;
  bool sequence_parallel = false;
  int pipeline = 1;
  int virtual_stages = 1;
  int zero = 0;
  models::Recompute recompute = models::Recompute::none;
  std::int64_t replica_batch = 0;         // global batch / data
  std::vector<int> micro_batches_to_try;  // largest first
  int micro_batch = 0;                    // samples per micro-batch (0 until one fits)
  int microbatches = 0;  // micro-batches per replica per step (pipelined or accumulated)
  std::vector<std::string> cluster_overrides;  // the option's cluster and node count
  std::vector<std::string> layout_overrides;   // the layout, as `simulate --set` takes it
  // Filled by evaluation:
  CandidateStatus status = CandidateStatus::failed;
  std::string failure;  // why it was not simulated (empty when it was)
  models::StepReport report;
  double samples_per_s = 0;
  double mfu = 0;
  double time_s = 0;           // for the work, or to the scenario's convergence target
  double to_target_steps = 0;  // steps to the target (0 without one)
  double cost = 0;             // for the work, in the catalog's currency
  double price_per_hour = 0;   // all nodes
  bool meets_target = false;
  bool pareto = false;
  bool best_mfu = false;  // the highest MFU of its option and node count
  bool simulated() const { return status == CandidateStatus::simulated; }
};

// The global batch every layout keeps: batch_per_replica x data x grad_accum of `base` (the
// scenario as given). Throws InputError for "batch_per_replica": "max" (no fixed global batch).
std::int64_t plan_global_batch(const models::Scenario& base, const std::string& origin);

// The layouts to consider, in a fixed order: option, nodes, tensor degree, pipeline depth,
// interleaving, ZeRO stage. Tensor degrees the model cannot be split into are left out (only 1
// for models without transformer entries); layouts the devices or the global batch do not divide
// into appear once per (tensor, pipeline) with status not_divisible.
std::vector<Candidate> enumerate_candidates(const PlanCatalog& catalog,
                                            const PlanSearchOptions& options,
                                            const models::Scenario& base);

// Picks each layout's recomputation (the least of none < selective < full) and micro-batch (the
// largest that fits) with the memory model, then simulates the layouts that fit and are not
// dominated (on `jobs` threads; results do not depend on it). `load` turns a candidate into its
// scenario: the plan's scenario with the cluster overrides, then the user's --set overrides (so
// they can adjust the chosen cluster), then the layout. A layout the scenario rejects is a
// candidate that was not simulated, with the reason.
struct LoadedCandidate {
  models::Scenario scenario;
  std::string label;  // the scenario and its overrides, for messages
};
using CandidateLoader = std::function<LoadedCandidate(const Candidate&)>;
// `progress` (optional) is called after each group of layouts with (done, total) candidates.
using PlanProgress = std::function<void(std::size_t done, std::size_t total)>;
struct PlanCounts {
  std::size_t memory_checks = 0;  // models::estimate_memory calls
  std::size_t simulated = 0;
};
PlanCounts evaluate_candidates(std::vector<Candidate>& candidates, const PlanCatalog& catalog,
                               const PlanTarget& target, const models::Scenario& base, int jobs,
                               const CandidateLoader& load, const PlanProgress& progress = {});

// Marks the simulated candidates on the Pareto front of (cost, time): none is both cheaper and
// faster. Returns their indices, cheapest first.
std::vector<std::size_t> mark_pareto_front(std::vector<Candidate>& candidates);
// The cheapest candidate meeting the target (ties: the faster, then the earlier).
std::optional<std::size_t> cheapest_meeting_target(const std::vector<Candidate>& candidates);
// Marks and returns the highest-MFU simulated candidate of each option and node count (ties: the
// earlier), in candidate order.
std::vector<std::size_t> mark_best_mfu(std::vector<Candidate>& candidates);

// "dp16 tp8 pp8 v5 z1 mb2 sel": data, tensor, pipeline (and virtual stages), ZeRO stage,
// micro-batch, and the recomputation when there is one.
std::string layout_name(const Candidate& c);

}  // namespace trainsim::cli
