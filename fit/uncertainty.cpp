#include "fit/uncertainty.hpp"

#include <array>
#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

#include "fit/throughput_model.hpp"

namespace trainsim::fit {
namespace {

double compute_quantile(double confidence, int dof) {
  const boost::math::students_t dist(static_cast<double>(dof));
  return boost::math::quantile(dist, 0.5 + confidence / 2.0);
}

}  // namespace

double student_t_quantile(double confidence, int dof) {
  if (dof < 1) return kNaN;
  // Boost's inverse incomplete beta takes ~1 us, most of a small fit's time; the usual 95% level
  // with modest dof comes from a table built once (immutable afterwards, thread-safe init).
  constexpr int kTableDof = 128;
  if (confidence == 0.95 && dof <= kTableDof) {
    static const std::array<double, kTableDof + 1> table = [] {
      std::array<double, kTableDof + 1> t{};
      t[0] = kNaN;
      for (int d = 1; d <= kTableDof; ++d)
        t[static_cast<std::size_t>(d)] = compute_quantile(0.95, d);
      return t;
    }();
    return table[static_cast<std::size_t>(dof)];
  }
  return compute_quantile(confidence, dof);
}

void apply_uncertainty(ThroughputFit& fit, const Eigen::Matrix2d& unscaled_covariance, double cost,
                       double confidence) {
  fit.residual_variance = fit.dof > 0 ? 2.0 * cost / fit.dof : kNaN;
  fit.covariance = unscaled_covariance * fit.residual_variance;
  fit.t_quantile = student_t_quantile(confidence, fit.dof);
  fit.v0_stderr = std::sqrt(fit.covariance(0, 0));
  fit.t_stderr = std::sqrt(fit.covariance(1, 1));
  fit.corr = fit.covariance(0, 1) / (fit.v0_stderr * fit.t_stderr);
  const double v0_half = fit.t_quantile * fit.v0_stderr;
  const double t_half = fit.t_quantile * fit.t_stderr;
  fit.v0_ci = {fit.v0_samples_per_s - v0_half, fit.v0_samples_per_s + v0_half};
  fit.t_ci = {fit.t_s - t_half, fit.t_s + t_half};
  // b50 = v0*t: gradient (t, v0).
  const Eigen::Vector2d g(fit.t_s, fit.v0_samples_per_s);
  const double b50_half = fit.t_quantile * std::sqrt(g.dot(fit.covariance * g));
  fit.b50_ci = {fit.b50 - b50_half, fit.b50 + b50_half};
}

Prediction predict(const ThroughputFit& fit, double batch) {
  Prediction p;
  p.batch = batch;
  const double f = model_throughput(batch, fit.v0_samples_per_s, fit.t_s);
  p.throughput_samples_per_s = f;
  const auto grad = model_gradient(batch, fit.v0_samples_per_s, fit.t_s);
  const Eigen::Vector2d g(grad[0], grad[1]);
  const double curve_var = g.dot(fit.covariance * g);
  // A new point's residual has variance s^2; in throughput units that is s^2, or s^2 f^2 when the
  // residuals are relative errors.
  const double obs_var = fit.residual_variance * (fit.relative ? f * f : 1.0);
  const double ci_half = fit.t_quantile * std::sqrt(curve_var);
  const double pi_half = fit.t_quantile * std::sqrt(curve_var + obs_var);
  p.ci = {f - ci_half, f + ci_half};
  p.pi = {f - pi_half, f + pi_half};
  return p;
}

}  // namespace trainsim::fit
