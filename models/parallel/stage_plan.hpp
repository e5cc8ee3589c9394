#pragma once
// A pipeline replica laid out on devices: which layers each stage runs, what one micro-batch
// costs it (roofline kernels, the same per-layer formulas as the single-device step), what it
// sends to its neighbours over the cluster's links, its share of the data-parallel gradient
// allreduce, and its memory under the schedule. Also finds the largest batch that fits.

#include <cstdint>
#include <vector>

#include "models/parallel/stage_report.hpp"
#include "models/scenario.hpp"

namespace trainsim::models {

struct StageCosts {
  int first_layer = 0;
  int layers = 0;
  std::int64_t params = 0;
  // Index 0: a micro-batch of floor(N/M) samples, 1: of ceil(N/M) samples.
  double forward_s[2] = {0, 0};
  double backward_s[2] = {0, 0};
  double recompute_s[2] = {0, 0};
  double send_bytes[2] = {0, 0};  // activations to the next stage (gradients back are as large)
  double send_s[2] = {0, 0};
  double allreduce_s = 0;
  double optimizer_s = 0;
  StageMemory memory;
  int in_flight = 0;
};

struct StagePlan {
  std::int64_t batch = 0;  // N per replica per accumulation round
  int microbatches = 1;
  std::vector<int> balance;
  std::vector<StageCosts> stages;
  std::int64_t max_batch_that_fits = 0;  // for this balance, K, M, schedule and recompute
  bool batch_was_max = false;
};

// Lays out `s` (with s.batch_per_replica, or the largest batch that fits when s.batch_max).
// Throws InputError when no batch fits and "max" was asked for.
StagePlan plan_stages(const Scenario& s);

// Memory of each stage for a per-replica batch `batch` under `balance`.
std::vector<StageMemory> stage_memory(const Scenario& s, const std::vector<int>& balance,
                                      std::int64_t batch);

}  // namespace trainsim::models
