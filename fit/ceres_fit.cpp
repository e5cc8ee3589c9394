#include "fit/ceres_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include <ceres/ceres.h>

#include "fit/solver_setup.hpp"
#include "fit/throughput_model.hpp"

namespace trainsim::fit {

double residual_scale(const Point& p, bool relative) {
  const double s = std::sqrt(p.weight);
  return relative ? s / p.throughput_samples_per_s : s;
}

double v0_lower_bound(std::span<const Point> points) {
  double max_v = 0.0;
  for (const Point& p : points)
    max_v = std::max(max_v, p.throughput_samples_per_s);
  return 1e-12 * max_v;
}

SolveResult solve_series(std::span<const Point> points, const FitOptions& options,
                         const LinearStart& start) {
  double v0 = start.v0_samples_per_s;
  double t_s = start.t_s;
  const double v0_min = v0_lower_bound(points);
  v0 = std::max(v0, 2.0 * v0_min);

  ceres::Problem problem(problem_options());
  // One loss object for all residual blocks; the problem deletes it once.
  ceres::LossFunction* loss = make_loss(options);
  for (const Point& p : points) {
    auto* cost =
        new ceres::AutoDiffCostFunction<ThroughputResidual, 1, 1, 1>(new ThroughputResidual{
            p.batch, p.throughput_samples_per_s, residual_scale(p, options.relative)});
    problem.AddResidualBlock(cost, loss, &v0, &t_s);
  }
  problem.SetParameterLowerBound(&v0, 0, v0_min);
  problem.SetParameterLowerBound(&t_s, 0, 0.0);

  const BoundedSolve solved =
      solve_with_active_bounds(solver_options(options), problem, {{&v0, v0_min}, {&t_s, 0.0}});

  SolveResult r;
  r.v0_samples_per_s = v0;
  r.t_s = t_s;
  r.cost = solved.final_cost;
  r.converged = solved.converged;
  r.termination = solved.termination;
  r.iterations = solved.iterations;
  if (v0 <= v0_min) r.at_bound.emplace_back("v0");
  if (t_s <= 0.0) r.at_bound.emplace_back("t");

  r.unscaled_covariance = Eigen::Matrix2d::Constant(std::numeric_limits<double>::quiet_NaN());
  // ceres::Covariance runs an SVD of the Jacobian without checking it: a non-finite entry (the
  // solve failed, or the data overflow double) crashes Eigen's SVD. No covariance then.
  if (!finite_jacobian(problem)) return r;
  ceres::Covariance covariance(covariance_options());
  const std::vector<std::pair<const double*, const double*>> blocks{
      {&v0, &v0}, {&t_s, &t_s}, {&v0, &t_s}};
  if (covariance.Compute(blocks, &problem)) {
    double c = 0.0;
    covariance.GetCovarianceBlock(&v0, &v0, &c);
    r.unscaled_covariance(0, 0) = c;
    covariance.GetCovarianceBlock(&t_s, &t_s, &c);
    r.unscaled_covariance(1, 1) = c;
    covariance.GetCovarianceBlock(&v0, &t_s, &c);
    r.unscaled_covariance(0, 1) = c;
    r.unscaled_covariance(1, 0) = c;
  }
  return r;
}

}  // namespace trainsim::fit
