#pragma once
// From Ceres' unit-variance covariance to intervals: scale by the residual variance
// s^2 = 2*cost/(n-p), Student-t quantiles with n-p degrees of freedom, delta method for
// derived quantities (b50, predictions).

#include <Eigen/Core>

#include "fit/fit_types.hpp"

namespace trainsim::fit {

// Two-sided quantile: P(|T| <= q) = confidence for Student's t with `dof` degrees of freedom.
// NaN when dof < 1 (no residual variance can be estimated).
double student_t_quantile(double confidence, int dof);

// Fills covariance, standard errors, intervals, correlation and the b50 interval of `fit`, whose
// v0, t and dof are already set. `cost` is Ceres' final cost (half the sum of squared residuals).
void apply_uncertainty(ThroughputFit& fit, const Eigen::Matrix2d& unscaled_covariance, double cost,
                       double confidence);

// The fitted curve at `batch` with a confidence interval (for the curve) and a prediction interval
// (for one new measurement of unit weight).
Prediction predict(const ThroughputFit& fit, double batch);

}  // namespace trainsim::fit
