#pragma once
// Starting point for the nonlinear fit: the line b/v = b/v0 + t, solved by weighted linear least
// squares, clamped into the feasible region (v0 > 0, t >= 0).

#include <span>

#include "fit/fit_types.hpp"

namespace trainsim::fit {

struct LinearStart {
  double v0_samples_per_s = 0.0;
  double t_s = 0.0;
};

// Needs at least two distinct batch sizes (the caller checks; see require_identifiable).
LinearStart linear_start(std::span<const Point> points, bool relative);

}  // namespace trainsim::fit
