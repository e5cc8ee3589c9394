#pragma once
// The small-problem path: Ceres' TinySolver (Levenberg-Marquardt on a 2-parameter, n-residual
// problem with autodiff, no Problem/Program setup) for the common case of an l2 fit whose optimum
// is inside the bounds. Roughly 20x cheaper than a ceres::Problem solve plus ceres::Covariance.

#include <optional>
#include <span>

#include "fit/ceres_fit.hpp"
#include "fit/fit_types.hpp"
#include "fit/linear_init.hpp"

namespace trainsim::fit {

// The solve and its unscaled covariance, or nullopt when this path does not apply: a robust loss,
// an iterate leaving the feasible region (a bound may be active), or no convergence. The caller
// then runs solve_series, which handles all of those.
std::optional<SolveResult> solve_series_small(std::span<const Point> points,
                                              const FitOptions& options, const LinearStart& start);

// (J'J)^-1 from the n x 2 Jacobian by SVD, refusing a rank-deficient J with the same rule as
// ceres::Covariance's DENSE_SVD (min/max singular value < sqrt(1e-14)); NaN then.
Eigen::Matrix2d unscaled_covariance_from_jacobian(
    const Eigen::Matrix<double, Eigen::Dynamic, 2>& jacobian);

}  // namespace trainsim::fit
