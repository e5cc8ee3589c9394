#include "fit/joint_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include <ceres/ceres.h>
#include <boost/math/distributions/fisher_f.hpp>

#include "fit/ceres_fit.hpp"
#include "fit/fit_series.hpp"
#include "fit/linear_init.hpp"
#include "fit/solver_setup.hpp"
#include "fit/throughput_model.hpp"
#include "fit/uncertainty.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::fit {
namespace {

void check_joint_input(std::span<const Series> series) {
  if (series.size() < 2) {
    throw InputError("--shared", "a joint fit needs at least two groups (found " +
                                     std::to_string(series.size()) +
                                     "); name the group column(s) with --group-col");
  }
  bool any_identifiable = false;
  for (const Series& s : series) {
    std::set<double> batches;
    for (const Point& p : s.points)
      batches.insert(p.batch);
    if (batches.empty()) throw InputError(s.source, "group '" + s.name + "' has no points");
    any_identifiable = any_identifiable || batches.size() >= 2;
  }
  if (!any_identifiable) {
    throw InputError(series.front().source,
                     "no group has two distinct batch sizes: the shared parameter and the "
                     "per-group ones are not identifiable");
  }
}

// Sum of squared (l2) residuals of separate fits, or NaN when some series cannot be fitted alone.
double separate_fits_cost(std::span<const Series> series, const FitOptions& options) {
  double cost = 0.0;
  for (const Series& s : series) {
    std::set<double> batches;
    for (const Point& p : s.points)
      batches.insert(p.batch);
    if (batches.size() < 2) return kNaN;
    const LinearStart start = linear_start(s.points, options.relative);
    cost += solve_series(s.points, options, start).cost;
  }
  return cost;
}

}  // namespace

JointFit fit_joint(std::span<const Series> series, Shared shared, const FitOptions& options,
                   std::span<const double> predict_batches) {
  check_joint_input(series);
  const std::size_t groups = series.size();

  // Per-series starts from the linear solution (a series with one batch size starts from its
  // point with the other series' mean for the shared parameter).
  std::vector<double> v0(groups);
  std::vector<double> t_s(groups);
  std::vector<double> v0_min(groups);
  double shared_sum = 0.0;
  int shared_count = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    const auto& pts = series[g].points;
    v0_min[g] = v0_lower_bound(pts);
    std::set<double> batches;
    for (const Point& p : pts)
      batches.insert(p.batch);
    if (batches.size() >= 2) {
      const LinearStart s = linear_start(pts, options.relative);
      v0[g] = std::max(s.v0_samples_per_s, 2.0 * v0_min[g]);
      t_s[g] = s.t_s;
      // v0 spans orders of magnitude across series: average it on a log scale.
      shared_sum += shared == Shared::v0 ? std::log(v0[g]) : t_s[g];
      ++shared_count;
    }
  }
  const double shared_mean = shared_sum / shared_count;
  double shared_value = shared == Shared::v0 ? std::exp(shared_mean) : shared_mean;
  for (std::size_t g = 0; g < groups; ++g) {
    if (v0[g] > 0.0) continue;  // had its own start
    const Point& p = series[g].points.front();
    // Solve v = b v0/(b + v0 t) for the free parameter given the shared one.
    if (shared == Shared::v0) {
      t_s[g] = std::max(0.0, p.batch / p.throughput_samples_per_s - p.batch / shared_value);
      v0[g] = shared_value;
    } else {
      const double per_sample_s = p.batch / p.throughput_samples_per_s - shared_value;
      v0[g] = per_sample_s > 0.0 ? p.batch / per_sample_s : 2.0 * p.throughput_samples_per_s;
      t_s[g] = shared_value;
    }
  }

  ceres::Problem problem(problem_options());
  ceres::LossFunction* loss = make_loss(options);
  auto v0_block = [&](std::size_t g) { return shared == Shared::v0 ? &shared_value : &v0[g]; };
  auto t_block = [&](std::size_t g) { return shared == Shared::t ? &shared_value : &t_s[g]; };
  int n = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    for (const Point& p : series[g].points) {
      auto* cost =
          new ceres::AutoDiffCostFunction<ThroughputResidual, 1, 1, 1>(new ThroughputResidual{
              p.batch, p.throughput_samples_per_s, residual_scale(p, options.relative)});
      problem.AddResidualBlock(cost, loss, v0_block(g), t_block(g));
      ++n;
    }
  }
  double shared_v0_min = 0.0;
  for (std::size_t g = 0; g < groups; ++g)
    shared_v0_min = std::max(shared_v0_min, v0_min[g]);
  if (shared == Shared::v0) {
    problem.SetParameterLowerBound(&shared_value, 0, shared_v0_min);
  } else {
    problem.SetParameterLowerBound(&shared_value, 0, 0.0);
  }
  for (std::size_t g = 0; g < groups; ++g) {
    if (shared != Shared::v0) problem.SetParameterLowerBound(&v0[g], 0, v0_min[g]);
    if (shared != Shared::t) problem.SetParameterLowerBound(&t_s[g], 0, 0.0);
  }

  std::vector<BoundedBlock> bounded{{&shared_value, shared == Shared::v0 ? shared_v0_min : 0.0}};
  for (std::size_t g = 0; g < groups; ++g) {
    if (shared != Shared::v0) bounded.push_back({&v0[g], v0_min[g]});
    if (shared != Shared::t) bounded.push_back({&t_s[g], 0.0});
  }
  const BoundedSolve summary = solve_with_active_bounds(solver_options(options), problem, bounded);

  // Covariance blocks (v0_g, v0_g), (t_g, t_g), (v0_g, t_g); the shared block appears once.
  std::vector<std::pair<const double*, const double*>> blocks;
  std::set<std::pair<const double*, const double*>> seen;
  for (std::size_t g = 0; g < groups; ++g) {
    for (auto pair : {std::make_pair<const double*, const double*>(v0_block(g), v0_block(g)),
                      std::make_pair<const double*, const double*>(t_block(g), t_block(g)),
                      std::make_pair<const double*, const double*>(v0_block(g), t_block(g))}) {
      if (seen.insert(pair).second) blocks.push_back(pair);
    }
  }
  ceres::Covariance covariance(covariance_options());
  const bool have_covariance = finite_jacobian(problem) && covariance.Compute(blocks, &problem);

  JointFit out;
  out.summary.shared = shared;
  out.summary.n = n;
  out.summary.parameters = static_cast<int>(groups) + 1;
  out.summary.dof = n - out.summary.parameters;
  out.summary.cost = summary.final_cost;
  out.summary.residual_variance =
      out.summary.dof > 0 ? 2.0 * summary.final_cost / out.summary.dof : kNaN;

  for (std::size_t g = 0; g < groups; ++g) {
    ThroughputFit fit;
    fit.group = series[g].name;
    fit.group_values = series[g].group_values;
    fit.loss = options.loss;
    fit.loss_scale = options.loss_scale;
    fit.relative = options.relative;
    fit.shared = shared;
    fit.v0_samples_per_s = *v0_block(g);
    fit.t_s = *t_block(g);
    fit.converged = summary.converged;
    fit.termination = summary.termination;
    fit.iterations = summary.iterations;
    if (fit.v0_samples_per_s <= (shared == Shared::v0 ? shared_v0_min : v0_min[g]))
      fit.at_bound.emplace_back("v0");
    if (fit.t_s <= 0.0) fit.at_bound.emplace_back("t");
    fill_goodness(fit, series[g].points);
    // Intervals use the pooled residual variance and the joint degrees of freedom.
    fit.dof = out.summary.dof;
    Eigen::Matrix2d unscaled = Eigen::Matrix2d::Constant(kNaN);
    if (have_covariance) {
      covariance.GetCovarianceBlock(v0_block(g), v0_block(g), &unscaled(0, 0));
      covariance.GetCovarianceBlock(t_block(g), t_block(g), &unscaled(1, 1));
      covariance.GetCovarianceBlock(v0_block(g), t_block(g), &unscaled(0, 1));
      unscaled(1, 0) = unscaled(0, 1);
    }
    apply_uncertainty(fit, unscaled, summary.final_cost, options.confidence);
    for (const double b : predict_batches)
      fit.predictions.push_back(predict(fit, b));
    require_finite(fit, series[g]);
    out.fits.push_back(std::move(fit));
  }

  out.summary.f_dof1 = static_cast<int>(groups) - 1;
  out.summary.f_dof2 = n - 2 * static_cast<int>(groups);
  out.summary.f_statistic = kNaN;
  out.summary.p_value = kNaN;
  if (options.loss == Loss::l2 && out.summary.f_dof2 > 0) {
    const double separate = separate_fits_cost(series, options);
    if (std::isfinite(separate) && separate > 0.0) {
      const double f =
          ((summary.final_cost - separate) / out.summary.f_dof1) / (separate / out.summary.f_dof2);
      out.summary.f_statistic = std::max(0.0, f);
      const boost::math::fisher_f dist(out.summary.f_dof1, out.summary.f_dof2);
      out.summary.p_value =
          boost::math::cdf(boost::math::complement(dist, out.summary.f_statistic));
    }
  }
  return out;
}

}  // namespace trainsim::fit
