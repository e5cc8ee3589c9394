#pragma once
// The public entry points for fitting v = b/(b/v0 + t) to one series of measured points:
// linear start, Ceres refinement, uncertainty, goodness of fit, predictions.

#include <span>

#include "fit/fit_types.hpp"

namespace trainsim::fit {

// Throws InputError (naming the series and the lines of its points) unless the series has at
// least two distinct batch sizes: with one, v0 and t cannot be told apart.
void require_identifiable(const Series& series);

// Fits one series. Never throws for a fit that fails to converge or ends on a bound: those are
// reported in `converged`, `termination` and `at_bound`.
ThroughputFit fit_series(const Series& series, const FitOptions& options = {},
                         std::span<const double> predict_batches = {});

// Same, for bare points (e.g. from a calibration step); the result's group is "points".
ThroughputFit fit_points(std::span<const Point> points, const FitOptions& options = {},
                         std::span<const double> predict_batches = {});

// Throws InputError naming the series when a fitted value, goodness figure or prediction is not
// finite (the report never prints inf or NaN for them; undefined intervals are n/a).
void require_finite(const ThroughputFit& fit, const Series& series);

// Residuals per point, R^2, RMSE and the largest relative error (all in throughput units,
// unweighted), plus b50 and b90, for the v0 and t already in `fit`.
void fill_goodness(ThroughputFit& fit, std::span<const Point> points);

}  // namespace trainsim::fit
