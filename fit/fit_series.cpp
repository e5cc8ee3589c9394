#include "fit/fit_series.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "fit/ceres_fit.hpp"
#include "fit/linear_init.hpp"
#include "fit/throughput_model.hpp"
#include "fit/tiny_fit.hpp"
#include "fit/uncertainty.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::fit {

void require_identifiable(const Series& series) {
  std::set<double> batches;
  std::string lines;
  for (const Point& p : series.points) {
    batches.insert(p.batch);
    if (p.line > 0) {
      if (!lines.empty()) lines += ',';
      lines += std::to_string(p.line);
    }
  }
  if (batches.size() >= 2) return;
  std::string where = series.source;
  if (!series.points.empty() && series.points.front().line > 0) {
    where += where.empty() ? "line " : ":";
    where += std::to_string(series.points.front().line);
  }
  std::string message = "group '" + series.name + "' has ";
  if (batches.empty()) {
    message += "no points";
  } else {
    std::ostringstream batch;
    batch << *batches.begin();
    message += "only one distinct batch size (batch ";
    message += batch.str();
    message += " on line(s) ";
    message += lines;
    message += "): v0 and t are not identifiable; measure at least two batch sizes";
  }
  throw InputError(where, message);
}

void fill_goodness(ThroughputFit& fit, std::span<const Point> points) {
  fit.residuals.clear();
  double sum_v = 0.0;
  for (const Point& p : points)
    sum_v += p.throughput_samples_per_s;
  const double mean_v = sum_v / static_cast<double>(points.size());
  double ss_res = 0.0;
  double ss_tot = 0.0;
  fit.max_rel_err = 0.0;
  for (const Point& p : points) {
    PointResidual r;
    r.point = p;
    r.predicted_samples_per_s = model_throughput(p.batch, fit.v0_samples_per_s, fit.t_s);
    r.residual_samples_per_s = p.throughput_samples_per_s - r.predicted_samples_per_s;
    r.rel_err = r.residual_samples_per_s / p.throughput_samples_per_s;
    ss_res += r.residual_samples_per_s * r.residual_samples_per_s;
    ss_tot += (p.throughput_samples_per_s - mean_v) * (p.throughput_samples_per_s - mean_v);
    fit.max_rel_err = std::max(fit.max_rel_err, std::abs(r.rel_err));
    fit.residuals.push_back(r);
  }
  fit.n = static_cast<int>(points.size());
  fit.r2 = ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : (ss_res == 0.0 ? 1.0 : 0.0);
  fit.rmse_samples_per_s = std::sqrt(ss_res / static_cast<double>(points.size()));
  fit.b50 = batch_at_fraction(0.5, fit.v0_samples_per_s, fit.t_s);
  fit.b90 = batch_at_fraction(0.9, fit.v0_samples_per_s, fit.t_s);
}

ThroughputFit fit_series(const Series& series, const FitOptions& options,
                         std::span<const double> predict_batches) {
  require_identifiable(series);
  const std::span<const Point> points(series.points);
  const LinearStart start = linear_start(points, options.relative);
  std::optional<SolveResult> small = solve_series_small(points, options, start);
  const SolveResult solved = small ? std::move(*small) : solve_series(points, options, start);

  ThroughputFit fit;
  fit.group = series.name;
  fit.group_values = series.group_values;
  fit.loss = options.loss;
  fit.loss_scale = options.loss_scale;
  fit.relative = options.relative;
  fit.v0_samples_per_s = solved.v0_samples_per_s;
  fit.t_s = solved.t_s;
  fit.converged = solved.converged;
  fit.termination = solved.termination;
  fit.iterations = solved.iterations;
  fit.at_bound = solved.at_bound;
  fill_goodness(fit, points);
  fit.dof = fit.n - 2;
  apply_uncertainty(fit, solved.unscaled_covariance, solved.cost, options.confidence);
  for (const double b : predict_batches)
    fit.predictions.push_back(predict(fit, b));
  require_finite(fit, series);
  return fit;
}

namespace {

std::string number_text(double v) {
  return std::isfinite(v) ? sim::format_significant(v, 6) : "(not finite)";
}

}  // namespace

void require_finite(const ThroughputFit& fit, const Series& series) {
  std::vector<std::pair<std::string, double>> values{
      {"v0", fit.v0_samples_per_s},     {"t", fit.t_s},   {"R^2", fit.r2},
      {"RMSE", fit.rmse_samples_per_s}, {"b50", fit.b50}, {"b90", fit.b90}};
  for (const PointResidual& r : fit.residuals)
    values.emplace_back("prediction at batch " + number_text(r.point.batch),
                        r.predicted_samples_per_s);
  for (const Prediction& p : fit.predictions)
    values.emplace_back("prediction at batch " + number_text(p.batch), p.throughput_samples_per_s);
  for (const auto& [name, v] : values) {
    if (std::isfinite(v)) continue;
    std::string where = series.source;
    if (!series.points.empty() && series.points.front().line > 0)
      where += ":" + std::to_string(series.points.front().line);
    throw InputError(where, "the fit of group '" + series.name + "' gives a non-finite " + name +
                                " (v0 = " + number_text(fit.v0_samples_per_s) +
                                " samples/s, t = " + number_text(fit.t_s) + " s) from its " +
                                std::to_string(series.points.size()) +
                                " points: the data do not determine the model");
  }
}

ThroughputFit fit_points(std::span<const Point> points, const FitOptions& options,
                         std::span<const double> predict_batches) {
  Series series{"points", {}, std::vector<Point>(points.begin(), points.end()), ""};
  return fit_series(series, options, predict_batches);
}

}  // namespace trainsim::fit
