#include "fit/steps_fit.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "fit/fit_series.hpp"
#include "fit/throughput_model.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::fit {

void split_steps_halves(std::vector<StepsPoint>& points) {
  std::vector<std::size_t> idx(points.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return points[a].batch < points[b].batch; });
  for (std::size_t k = 0; k < idx.size(); ++k)
    points[idx[k]].calibration = k % 2 == 0;
}

StepsFit fit_steps_to_target(std::span<const StepsPoint> points, const std::string& group,
                             const std::string& source, double confidence) {
  {
    std::set<double> batches;
    std::string lines;
    for (const StepsPoint& p : points) {
      if (!p.calibration) continue;
      batches.insert(p.batch);
      if (p.line > 0) lines += (lines.empty() ? "" : ",") + std::to_string(p.line);
    }
    if (batches.size() < 2) {
      throw InputError(source.empty() ? "steps-to-target fit" : source,
                       "group '" + group + "' has " + std::to_string(batches.size()) +
                           " distinct batch size(s) to fit (line(s) " + lines +
                           "): S_min and B_noise need at least two");
    }
  }
  // y = S_ref / S keeps the fitted values near 1: with raw 1/S (~1e-5) the Jacobian's columns
  // differ by ~1e10 and the covariance's rank test refuses it. S_ref is the geometric mean of the
  // fitted rows' steps; relative residuals do not change with it.
  double log_sum = 0;
  int rows = 0;
  for (const StepsPoint& p : points) {
    if (!p.calibration) continue;
    log_sum += std::log(p.steps);
    ++rows;
  }
  const double s_ref = rows > 0 ? std::exp(log_sum / rows) : 1.0;
  Series series;
  series.name = group;
  for (const StepsPoint& p : points) {
    if (!p.calibration) continue;
    Point q;
    q.batch = p.batch;
    q.throughput_samples_per_s = s_ref / p.steps;
    q.line = p.line;
    series.points.push_back(q);
  }
  require_identifiable(series);
  FitOptions options;
  options.relative = true;
  options.confidence = confidence;
  const ThroughputFit f = fit_series(series, options);

  StepsFit out;
  out.group = group;
  out.converged = f.converged;
  out.termination = f.termination;
  out.n = f.n;
  out.dof = f.dof;
  out.t_quantile = f.t_quantile;
  const double v0 = f.v0_samples_per_s;
  const double t = f.t_s;
  // y = S_ref/S = B/(B/v0 + t): S_min = S_ref/v0, E_min = S_ref t, B_noise = E_min/S_min = v0 t.
  out.steps_min = s_ref / v0;
  out.batch_noise = v0 * t;
  // Delta method: d(S_min, B_noise)/d(v0, t).
  Eigen::Matrix2d jac;
  jac << -s_ref / (v0 * v0), 0.0, t, v0;
  out.covariance = jac * f.covariance * jac.transpose();
  out.steps_min_stderr = std::sqrt(out.covariance(0, 0));
  out.batch_noise_stderr = std::sqrt(out.covariance(1, 1));
  out.corr = out.covariance(0, 1) / (out.steps_min_stderr * out.batch_noise_stderr);
  const double hs = out.t_quantile * out.steps_min_stderr;
  const double hb = out.t_quantile * out.batch_noise_stderr;
  out.steps_min_ci = {out.steps_min - hs, out.steps_min + hs};
  out.batch_noise_ci = {out.batch_noise - hb, out.batch_noise + hb};

  double cal = 0;
  double val = 0;
  int cal_n = 0;
  for (const StepsPoint& p : points) {
    StepsResidual r;
    r.point = p;
    r.predicted_steps = s_ref / model_throughput(p.batch, v0, t);
    r.rel_err = (p.steps - r.predicted_steps) / p.steps;
    if (p.calibration) {
      cal += std::abs(r.rel_err);
      ++cal_n;
    } else {
      val += std::abs(r.rel_err);
      ++out.validation_n;
    }
    out.residuals.push_back(r);
  }
  out.calibration_mape = cal_n > 0 ? 100.0 * cal / cal_n : 0.0;
  out.validation_mape = out.validation_n > 0 ? 100.0 * val / out.validation_n : 0.0;
  return out;
}

}  // namespace trainsim::fit
