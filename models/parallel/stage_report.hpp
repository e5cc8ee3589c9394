#pragma once
// What the pipeline simulator reports beyond the common step report: one line per stage (its
// layers, per-micro-batch costs, busy and idle time, memory) and how the batch was chosen.

#include <cstdint>
#include <string>

namespace trainsim::models {

struct StageMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_state_bytes = 0;
  double activations_bytes = 0;  // peak: stored micro-batches (or their boundaries) + one recompute
  double workspace_bytes = 0;
  double peak_bytes = 0;
  double capacity_bytes = 0;
  bool fits = true;
  int in_flight = 0;  // micro-batches (chunk passes) whose activations are held at the peak
};

struct StageReport {
  int stage = 0;
  int first_layer = 0;  // index into the model's layer list
  int layers = 0;
  std::string first_layer_name;
  std::string last_layer_name;
  std::int64_t params = 0;
  double forward_s = 0;    // one (largest) micro-batch
  double backward_s = 0;   // one micro-batch, without recomputation
  double recompute_s = 0;  // one micro-batch (0 without re-materialization)
  double send_bytes = 0;   // activations sent to the next stage per (largest) micro-batch
  double send_s = 0;       // their transfer time on the link to the next stage
  double allreduce_s = 0;  // this stage's gradient allreduce across its data-parallel peers
  double busy_s = 0;       // per step: forward + backward + recompute + optimizer
  double bubble_s = 0;     // per step: idle, waiting on other stages
  int in_flight = 0;       // micro-batches whose activations are held at the peak
  StageMemory memory;
};

struct PipelineSummary {
  int stages = 1;
  int microbatches = 1;  // per accumulation round
  int grad_accum = 1;
  std::string schedule;  // "gpipe" | "1f1b"
  bool recompute = false;
  std::string recompute_mode = "none";  // none | selective | full
  int virtual_stages = 1;
  std::int64_t batch_per_replica = 0;  // the batch actually used
  std::string batch_source;            // "given" | "largest that fits"
  std::int64_t max_batch_that_fits = 0;
  double ideal_bubble_fraction = 0;  // (K-1)/(M+K-1) for the schedule's micro-batch count
};

}  // namespace trainsim::models
