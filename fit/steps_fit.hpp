#pragma once
// Fits the large-batch steps-to-target model S(B) = S_min (1 + B_noise / B) (McCandlish et al.
// 2018, arXiv:1812.06162; models/convergence.hpp) to measured (batch, steps) rows with the same
// Ceres path as the throughput fit: 1/S(B) = B / (B / v0 + t) is the throughput model with
// v0 = 1/S_min and t = E_min = S_min B_noise, so B_noise = v0 t is the throughput fit's b50. The
// fit runs on relative residuals of 1/S, (1/S_meas - 1/S_fit)/(1/S_meas) = (S_fit - S_meas)/S_fit:
// to first order the relative error in steps, the right weight for steps spanning decades. The
// intervals come from the delta method on the (v0, t) covariance, with the fit's Student-t
// quantile.

#include <array>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "fit/fit_types.hpp"

namespace trainsim::fit {

struct StepsPoint {
  double batch = 0;
  double steps = 0;
  int line = 0;
  bool calibration = true;  // false: held out (validation half), not fitted
};

struct StepsResidual {
  StepsPoint point;
  double predicted_steps = 0;
  double rel_err = 0;  // (measured - predicted) / measured
};

struct StepsFit {
  std::string group;
  double steps_min = 0;
  double batch_noise = 0;
  Eigen::Matrix2d covariance;  // (S_min, B_noise)
  double steps_min_stderr = 0;
  double batch_noise_stderr = 0;
  std::array<double, 2> steps_min_ci{};
  std::array<double, 2> batch_noise_ci{};
  double corr = 0;
  double t_quantile = 0;
  int n = 0;  // calibration rows fitted
  int dof = 0;
  double calibration_mape = 0;  // percent, over the fitted rows
  double validation_mape = 0;   // percent, over the held-out rows (0 when none)
  int validation_n = 0;
  bool converged = false;
  std::string termination;
  std::vector<StepsResidual> residuals;  // every row, in input order
};

// Fits the calibration rows of `points`. `group` names the series, `source` its file for errors:
// an InputError unless the rows span at least two distinct batches (S_min and B_noise are not
// identifiable from one).
StepsFit fit_steps_to_target(std::span<const StepsPoint> points, const std::string& group,
                             const std::string& source = "", double confidence = 0.95);

// Marks every other row of each batch-sorted series as validation (fit::split_halves' rule:
// the smallest batch, the third, ... calibrate).
void split_steps_halves(std::vector<StepsPoint>& points);

}  // namespace trainsim::fit
