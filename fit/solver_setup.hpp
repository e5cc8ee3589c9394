#pragma once
// Ceres settings shared by the single-series and joint fits: quiet, tight, single-threaded.

#include <ceres/ceres.h>

#include "fit/fit_types.hpp"

namespace trainsim::fit {

ceres::Problem::Options problem_options();
ceres::Solver::Options solver_options(const FitOptions& options);
ceres::Covariance::Options covariance_options();
// nullptr for l2 (Ceres' plain squared loss); the caller's problem takes ownership otherwise.
ceres::LossFunction* make_loss(const FitOptions& options);

}  // namespace trainsim::fit
