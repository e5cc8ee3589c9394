#pragma once
// A training job laid out on its device mesh (data x tensor x pipeline, Megatron-LM's
// parallel_state layout): the model one tensor-parallel rank runs, the layers of each pipeline
// chunk (K x v chunks, chunk c on stage c mod K), the per-stage memory under the schedule (the one
// memory model of the project: weights, gradients and optimizer state under ZeRO, activations
// under the schedule and the recomputation mode, the working set), the largest batch that fits,
// and the cluster as each communication group sees it.

#include <cstdint>
#include <vector>

#include "models/parallel/stage_report.hpp"
#include "models/scenario.hpp"
#include "models/zoo/zoo_model.hpp"

namespace trainsim::models {

struct Chunk {
  int first_layer = 0;
  int layers = 0;
  int stage = 0;
  std::int64_t params = 0;  // per tensor-parallel rank
  int param_tensors = 0;
};

struct MeshPlan {
  ZooModel rank_model;     // what one tensor-parallel rank runs (the model itself at tp 1)
  std::int64_t batch = 0;  // N per replica per accumulation round
  int microbatches = 1;
  std::vector<int> balance;  // layers per chunk (K x v entries)
  std::vector<Chunk> chunks;
  std::vector<StageMemory> memory;       // per stage
  std::int64_t max_batch_that_fits = 0;  // per replica per round, 0 if not one micro-batch fits
  bool batch_was_max = false;
};

// Lays out `s` (with s.batch_per_replica, or the largest batch that fits when s.batch_max).
// Throws InputError when "max" finds no batch that fits or the model cannot be split.
MeshPlan plan_mesh(const Scenario& s);

// Per-stage memory of `chunks` for a per-replica batch of `batch` samples per round.
std::vector<StageMemory> mesh_memory(const Scenario& s, const ZooModel& rank_model,
                                     const std::vector<Chunk>& chunks, std::int64_t batch);

// The cluster as one group of `size` ranks `stride` ranks apart sees it, in a job where every
// rank is in such a group: a node holds apn / stride of its members (at least one) and shares its
// NICs with the node's other groups, which communicate at the same time (equal shares).
// CollectiveCoster prices the group as the first `size` ranks of this view.
sim::ClusterSpec group_view(const sim::ClusterSpec& c, int size, int stride);
// Members of such a group a node holds.
int group_members_per_node(const sim::ClusterSpec& c, int size, int stride);

// Rank strides of the mesh's groups under s.order (Megatron-LM: tensor ranks consecutive, then
// data, then pipeline).
struct MeshStrides {
  int tensor = 1;    // between the ranks of a tensor-parallel group
  int data = 1;      // between the ranks of a data-parallel group
  int pipeline = 1;  // between a stage's rank and the next stage's
};
MeshStrides mesh_strides(const Scenario& s);

// One activation transfer between neighbouring stages: the route's latency and the bandwidth a
// flow gets while every rank of the node sends across the same boundary.
struct StageLink {
  double latency_s = 0;
  double bw_bytes_per_s = 0;
};
StageLink stage_link(const Scenario& s);

}  // namespace trainsim::models
