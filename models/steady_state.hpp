#pragma once
// The steady-state step time of a simulated run: warm-up steps are excluded, so the mean runs
// from the end of the last warm-up step to the end of the last step.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim::models {

// `step_end_s` holds the end time of every step; throws when the run did not finish all
// `steps` (a stalled simulation is a model bug, not an input error).
inline double steady_step_time_s(const std::vector<double>& step_end_s, int steps, int warmup_steps,
                                 const std::string& what) {
  if (static_cast<int>(step_end_s.size()) != steps) throw std::runtime_error(what + " stalled");
  const double t0 =
      warmup_steps == 0 ? 0.0 : step_end_s[static_cast<std::size_t>(warmup_steps - 1)];
  return (step_end_s.back() - t0) / (steps - warmup_steps);
}

}  // namespace trainsim::models
