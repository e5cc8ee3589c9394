#pragma once
// The order in which one pipeline stage runs its forward and backward passes within a step.
//
// One stage: forward and backward of each micro-batch in turn, whatever the schedule.
// GPipe: per accumulation round, all M forwards, then all M backwards (last micro-batch first,
// as autograd unwinds them); activations of all M micro-batches are alive at once.
// 1F1B with a flush (PipeDream-Flush / Megatron's non-interleaved schedule): stage k runs
// K-k-1 warm-up forwards, then alternates one forward and one backward, then drains the
// remaining backwards; at most K-k micro-batches are alive. Gradient-accumulation rounds are one
// continuous stream of M x GA micro-batches (no flush between rounds, as the IPU's pipelined
// gradient accumulation does), so there is one fill and one drain per step.
// Interleaved 1F1B (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", Sec. 2.2; NVIDIA/Megatron-LM megatron/core/pipeline_parallel/
// schedules.py, forward_backward_pipelining_with_interleaving): each stage holds v model chunks
// (chunk c of K x v on stage c mod K) and runs (K - k - 1) x 2 + (v - 1) x K warm-up forwards
// over its chunks in groups of K micro-batches, then one forward and one backward alternately.

#include <vector>

#include "models/scenario.hpp"

namespace trainsim::models {

struct PipeOp {
  bool forward = true;
  int micro = 0;  // micro-batch index within the step, 0 .. M x GA - 1
  int chunk = 0;  // the stage's model chunk, 0 .. virtual_stages - 1 (global chunk chunk x K + k)
};

// The ops of stage `stage` of `stages`, for `microbatches` per round and `rounds` rounds.
// Inference has forwards only.
std::vector<PipeOp> stage_schedule(PipelineSchedule schedule, int stage, int stages,
                                   int microbatches, int rounds, bool inference,
                                   int virtual_stages = 1);

// The bubble fraction of uniform stages with free communication: (K-1)/(M'+K-1), where M' is
// the micro-batches between a fill and a drain (M for GPipe, M x GA for 1F1B).
// Interleaving divides it by v (Narayanan et al. 2021, Sec. 2.2.2).
double ideal_bubble_fraction(PipelineSchedule schedule, int stages, int microbatches, int rounds,
                             int virtual_stages = 1);

const char* schedule_name(PipelineSchedule schedule);

}  // namespace trainsim::models
