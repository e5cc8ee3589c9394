#pragma once
// A joint fit of several series that share one parameter (v0 or t) while the other stays per
// series, e.g. one model on 1 GPU and on 2 GPUs of one machine sharing the per-sample cost.
// One Ceres problem, one pooled residual variance, the full joint covariance.

#include <span>
#include <vector>

#include "fit/fit_types.hpp"

namespace trainsim::fit {

struct JointSummary {
  Shared shared = Shared::v0;
  int n = 0;           // points over all series
  int parameters = 0;  // 1 shared + 1 per series
  int dof = 0;
  double cost = 0.0;  // Ceres' final cost
  double residual_variance = 0.0;
  // Extra-sum-of-squares F test of "the shared parameter is equal across series" against the
  // separate fits (l2 loss only; NaN where it does not apply): small p = the data disagree.
  double f_statistic = 0.0;
  int f_dof1 = 0;
  int f_dof2 = 0;
  double p_value = 0.0;
};

struct JointFit {
  std::vector<ThroughputFit> fits;  // one per series, in input order; the shared value repeats
  JointSummary summary;
};

// Needs at least two series, each with a point, and at least one series with two distinct batch
// sizes (InputError otherwise). Convergence and bounds are reported per fit, never thrown.
JointFit fit_joint(std::span<const Series> series, Shared shared, const FitOptions& options = {},
                   std::span<const double> predict_batches = {});

}  // namespace trainsim::fit
