#include "models/parallel/pipeline_schedule.hpp"

#include <algorithm>

namespace trainsim::models {

namespace {

// Megatron-LM's interleaved order: virtual micro-batch i (of total x v) is chunk (i / K) mod v
// (reversed for backward) of micro-batch (i / (K v)) K + i mod K.
std::vector<PipeOp> interleaved(int stage, int stages, int total, int v, bool inference) {
  std::vector<PipeOp> ops;
  const int virtual_total = total * v;
  const auto op = [&](int i, bool forward) {
    const int group = i / stages;
    const int chunk = forward ? group % v : v - 1 - group % v;
    const int micro = i / (stages * v) * stages + i % stages;
    return PipeOp{forward, micro, chunk};
  };
  const int warmup = inference
                         ? virtual_total
                         : std::min((stages - stage - 1) * 2 + (v - 1) * stages, virtual_total);
  int f = 0;
  int b = 0;
  for (; f < warmup; ++f)
    ops.push_back(op(f, true));
  while (f < virtual_total) {
    ops.push_back(op(f++, true));
    ops.push_back(op(b++, false));
  }
  while (b < virtual_total && !inference)
    ops.push_back(op(b++, false));
  return ops;
}

}  // namespace

std::vector<PipeOp> stage_schedule(PipelineSchedule schedule, int stage, int stages,
                                   int microbatches, int rounds, bool inference,
                                   int virtual_stages) {
  std::vector<PipeOp> ops;
  const int total = microbatches * rounds;
  if (virtual_stages > 1) return interleaved(stage, stages, total, virtual_stages, inference);
  ops.reserve(static_cast<std::size_t>(inference ? total : 2 * total));
  if (inference) {
    for (int j = 0; j < total; ++j)
      ops.push_back({true, j});
    return ops;
  }
  // One stage has no pipeline to fill: micro-batches run forward then backward one at a time
  // (Megatron-LM's forward_backward_no_pipelining, gradient accumulation), whatever the
  // schedule, so micro-batches and accumulation rounds are the same job.
  if (schedule == PipelineSchedule::gpipe && stages > 1) {
    for (int r = 0; r < rounds; ++r) {
      const int base = r * microbatches;
      for (int i = 0; i < microbatches; ++i)
        ops.push_back({true, base + i});
      for (int i = microbatches; i-- > 0;)
        ops.push_back({false, base + i});
    }
    return ops;
  }
  const int warmup = std::min(stages - stage - 1, total);
  for (int j = 0; j < warmup; ++j)
    ops.push_back({true, j});
  for (int j = warmup; j < total; ++j) {
    ops.push_back({true, j});
    ops.push_back({false, j - warmup});
  }
  for (int j = total - warmup; j < total; ++j)
    ops.push_back({false, j});
  return ops;
}

double ideal_bubble_fraction(PipelineSchedule schedule, int stages, int microbatches, int rounds,
                             int virtual_stages) {
  const double m = schedule == PipelineSchedule::gpipe ? microbatches
                                                       : static_cast<double>(microbatches) * rounds;
  const double bubble = (stages - 1) / static_cast<double>(virtual_stages);
  return bubble / (m + bubble);
}

const char* schedule_name(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::gpipe ? "gpipe" : "1f1b";
}

}  // namespace trainsim::models
