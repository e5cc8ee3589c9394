#include "models/parallel/pipeline_schedule.hpp"

#include <algorithm>

namespace trainsim::models {

std::vector<PipeOp> stage_schedule(PipelineSchedule schedule, int stage, int stages,
                                   int microbatches, int rounds, bool inference) {
  std::vector<PipeOp> ops;
  const int total = microbatches * rounds;
  ops.reserve(static_cast<std::size_t>(inference ? total : 2 * total));
  if (inference) {
    for (int j = 0; j < total; ++j)
      ops.push_back({true, j});
    return ops;
  }
  if (schedule == PipelineSchedule::gpipe) {
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

int peak_in_flight(PipelineSchedule schedule, int stage, int stages, int microbatches, int rounds) {
  if (schedule == PipelineSchedule::gpipe) return microbatches;
  return std::min(stages - stage, microbatches * rounds);
}

double ideal_bubble_fraction(PipelineSchedule schedule, int stages, int microbatches, int rounds) {
  const double m = schedule == PipelineSchedule::gpipe ? microbatches
                                                       : static_cast<double>(microbatches) * rounds;
  return (stages - 1) / (m + stages - 1);
}

const char* schedule_name(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::gpipe ? "gpipe" : "1f1b";
}

}  // namespace trainsim::models
