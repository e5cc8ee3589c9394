#pragma once
// The nonlinear least-squares solve of one series with Ceres: bounds v0 > 0, t >= 0, optional
// robust loss, and the unscaled parameter covariance (J'J)^-1 at the solution.

#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "fit/fit_types.hpp"
#include "fit/linear_init.hpp"

namespace trainsim::fit {

struct SolveResult {
  double v0_samples_per_s = 0.0;
  double t_s = 0.0;
  double cost = 0.0;  // Ceres' cost: 1/2 sum rho(r_i^2)
  bool converged = false;
  std::string termination;
  int iterations = 0;
  std::vector<std::string> at_bound;
  // (J'J)^-1 for (v0, t) with the loss applied, as Ceres' Covariance computes it (unit residual
  // variance); NaN when the Jacobian is rank-deficient.
  Eigen::Matrix2d unscaled_covariance;
};

// sqrt(weight) * (v - f), divided by v for relative errors: the factor the residual carries.
double residual_scale(const Point& p, bool relative);

// Lower bound for v0: Ceres bounds are inclusive, so v0 > 0 becomes v0 >= a tiny positive value.
double v0_lower_bound(std::span<const Point> points);

SolveResult solve_series(std::span<const Point> points, const FitOptions& options,
                         const LinearStart& start);

}  // namespace trainsim::fit
