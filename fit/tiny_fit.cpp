#include "fit/tiny_fit.hpp"

#include <cmath>
#include <limits>

#include <ceres/tiny_solver.h>
#include <ceres/tiny_solver_autodiff_function.h>
#include <Eigen/SVD>

#include "fit/throughput_model.hpp"

namespace trainsim::fit {
namespace {

// All residuals of a series in one functor over x = (v0, t), for TinySolver's single block.
struct SeriesResiduals {
  std::span<const Point> points;
  bool relative;

  int NumResiduals() const { return static_cast<int>(points.size()); }

  template <typename T>
  bool operator()(const T* x, T* residuals) const {
    for (std::size_t i = 0; i < points.size(); ++i) {
      const ThroughputResidual r{points[i].batch, points[i].throughput_samples_per_s,
                                 residual_scale(points[i], relative)};
      r(&x[0], &x[1], &residuals[i]);
    }
    return true;
  }
};

using AutoDiffSeries = ceres::TinySolverAutoDiffFunction<SeriesResiduals, Eigen::Dynamic, 2>;

}  // namespace

Eigen::Matrix2d unscaled_covariance_from_jacobian(
    const Eigen::Matrix<double, Eigen::Dynamic, 2>& jacobian) {
  const Eigen::JacobiSVD<Eigen::Matrix<double, Eigen::Dynamic, 2>> svd(jacobian,
                                                                       Eigen::ComputeFullV);
  const Eigen::Vector2d s = svd.singularValues();
  if (!(s(1) > 0.0) || s(1) / s(0) < std::sqrt(1e-14)) {
    return Eigen::Matrix2d::Constant(std::numeric_limits<double>::quiet_NaN());
  }
  const Eigen::Matrix2d v = svd.matrixV();
  return v * s.array().square().inverse().matrix().asDiagonal() * v.transpose();
}

std::optional<SolveResult> solve_series_small(std::span<const Point> points,
                                              const FitOptions& options, const LinearStart& start) {
  if (options.loss != Loss::l2) return std::nullopt;
  const double v0_min = v0_lower_bound(points);
  if (!(start.v0_samples_per_s > v0_min) || !(start.t_s > 0.0)) return std::nullopt;

  const SeriesResiduals functor{points, options.relative};
  const AutoDiffSeries function(functor);
  ceres::TinySolver<AutoDiffSeries> solver;
  // TinySolver's tolerances are absolute: scale the cost one by the size of the data so the stop
  // rule is relative, as in ceres::Solve (whose settings it mirrors, see solver_setup.cpp).
  double data_cost = 0.0;
  for (const Point& p : points) {
    const double r = residual_scale(p, options.relative) * p.throughput_samples_per_s;
    data_cost += 0.5 * r * r;
  }
  solver.options.max_num_iterations = options.max_iterations;
  solver.options.function_tolerance = 1e-15 * data_cost;
  solver.options.gradient_tolerance = 1e-16 * data_cost;
  solver.options.parameter_tolerance = 1e-14;
  solver.options.cost_threshold = 1e-30 * data_cost;
  Eigen::Vector2d x(start.v0_samples_per_s, start.t_s);
  const auto& summary = solver.Solve(function, &x);

  using Solver = ceres::TinySolver<AutoDiffSeries>;
  if (summary.status == Solver::HIT_MAX_ITERATIONS) return std::nullopt;
  // TinySolver knows no bounds: an optimum outside them (or on them) goes to the bounded solver.
  if (!(x(0) > v0_min) || !(x(1) > 0.0) || !std::isfinite(x(0)) || !std::isfinite(x(1)))
    return std::nullopt;

  SolveResult r;
  r.v0_samples_per_s = x(0);
  r.t_s = x(1);
  r.converged = true;
  r.iterations = summary.iterations;
  switch (summary.status) {
    case Solver::GRADIENT_TOO_SMALL:
      r.termination = "Gradient tolerance reached (TinySolver).";
      break;
    case Solver::RELATIVE_STEP_SIZE_TOO_SMALL:
      r.termination = "Parameter tolerance reached (TinySolver).";
      break;
    case Solver::COST_TOO_SMALL:
      r.termination = "Cost below threshold: exact fit (TinySolver).";
      break;
    default:
      r.termination = "Function tolerance reached (TinySolver).";
      break;
  }
  // The Jacobian at the optimum in closed form (the same numbers autodiff gives).
  Eigen::Matrix<double, Eigen::Dynamic, 2> jacobian(static_cast<Eigen::Index>(points.size()), 2);
  r.cost = 0.0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const double scale = residual_scale(p, options.relative);
    const double residual =
        scale * (p.throughput_samples_per_s - model_throughput(p.batch, x(0), x(1)));
    r.cost += 0.5 * residual * residual;
    const auto grad = model_gradient(p.batch, x(0), x(1));
    jacobian(static_cast<Eigen::Index>(i), 0) = -scale * grad[0];
    jacobian(static_cast<Eigen::Index>(i), 1) = -scale * grad[1];
  }
  r.unscaled_covariance = unscaled_covariance_from_jacobian(jacobian);
  return r;
}

}  // namespace trainsim::fit
