#pragma once
// Ceres settings shared by the single-series and joint fits: quiet, tight, single-threaded.

#include <string>
#include <vector>

#include <ceres/ceres.h>

#include "fit/fit_types.hpp"

namespace trainsim::fit {

ceres::Problem::Options problem_options();
// Levenberg-Marquardt with dense QR, single-threaded and silent; the caller sets tolerances.
ceres::Solver::Options quiet_lm_options(int max_iterations);
ceres::Solver::Options solver_options(const FitOptions& options);
ceres::Covariance::Options covariance_options();
struct BoundedBlock {
  double* value;  // a one-parameter block with a lower bound
  double lower;
};

struct BoundedSolve {
  bool converged = false;
  std::string termination;
  int iterations = 0;
  double final_cost = 0.0;
};

// ceres::Solve, then, when some blocks end on their lower bound, a second solve with those held
// there: Ceres' projected LM steps stall next to an active bound (the step points out of the
// region and is cut to nothing), which leaves the free parameters short of their optimum.
// The blocks are variable again on return, so a covariance sees the unconstrained curvature.
BoundedSolve solve_with_active_bounds(const ceres::Solver::Options& options,
                                      ceres::Problem& problem,
                                      const std::vector<BoundedBlock>& blocks);

// True when the problem's cost and Jacobian at the current parameters are finite. Check it before
// ceres::Covariance: its SVD of a non-finite Jacobian crashes inside Eigen.
bool finite_jacobian(ceres::Problem& problem);

// nullptr for l2 (Ceres' plain squared loss); the caller's problem takes ownership otherwise.
ceres::LossFunction* make_loss(const FitOptions& options);

}  // namespace trainsim::fit
