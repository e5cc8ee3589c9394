#pragma once
// Fits the worth w of an echoed sample (models/convergence.hpp: a step of B samples echoed e times
// has B_eff = B (1 + (e - 1) w) / e fresh-sample equivalents) to measured fresh examples to a
// target with and without echoing, as Choi et al. 2019 (arXiv:1907.05550) report them. Each row
// with e > 1 is compared with the e = 1 row at the same batch: the measured ratio of fresh
// examples, f_e / f_1, against the model's S(B_eff) / (e S(B)) (S_min cancels; B_noise is given).
// One bounded parameter: the least-squares w on [0, 1] by golden-section search on the relative
// residuals, its standard error from the Gauss-Newton curvature s^2 / (J'J) with s^2 = SSR/(n-1)
// and a Student-t interval (fit/uncertainty.hpp), like the two-parameter fits.

#include <array>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace trainsim::fit {

struct EchoPoint {
  double batch = 0;
  int echo = 1;
  double fresh_ratio = 0;  // fresh examples to the target at this echo / at echo 1, same batch
  int line = 0;
};

struct EchoResidual {
  EchoPoint point;
  double predicted_ratio = 0;
  double rel_err = 0;  // (measured - predicted) / measured
};

struct EchoFit {
  double repeat_weight = 0;
  double stderr_value = 0;  // NaN when n = 1
  std::array<double, 2> ci{};
  double t_quantile = 0;
  int n = 0;
  int dof = 0;
  double mape = 0;        // percent
  bool at_bound = false;  // w ended on 0 or 1: the interval is not meaningful
  std::vector<EchoResidual> residuals;
};

// The model's ratio f_e / f_1 at (batch, echo) for a repeat weight w.
using EchoRatioModel = std::function<double(double batch, int echo, double w)>;

// Needs at least one point.
EchoFit fit_repeat_weight(std::span<const EchoPoint> points, const EchoRatioModel& model,
                          double confidence = 0.95);

}  // namespace trainsim::fit
