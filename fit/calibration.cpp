#include "fit/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <sstream>

#include <ceres/ceres.h>
#include <Eigen/SVD>

#include "fit/solver_setup.hpp"
#include "fit/uncertainty.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::fit {
namespace {

constexpr double kMinSensitivity = 1e-6;

// The problem in scaled unknowns x_j = value_j / scale_j, with the model's call counting and
// first failure kept (Ceres calls Evaluate from one thread: num_threads = 1).
class ScaledModel {
 public:
  ScaledModel(std::span<const CalibrationParameter> parameters, std::span<const double> measured,
              const BlackBoxModel& model, CalibrationObjective objective,
              std::span<const std::size_t> series)
      : parameters_(parameters),
        measured_(measured),
        model_(model),
        objective_(objective),
        series_(series) {
    for (const CalibrationParameter& p : parameters) {
      scale_.push_back(std::abs(p.initial));
      lower_.push_back(p.lower / std::abs(p.initial));
      upper_.push_back(p.upper / std::abs(p.initial));
    }
    if (objective_ == CalibrationObjective::relative_l1_with_shape) {
      // Each point's measured value over its series' mean.
      const std::vector<double> means = series_means(measured_);
      for (std::size_t i = 0; i < measured_.size(); ++i)
        measured_shape_.push_back(measured_[i] / means[i]);
    }
  }

  std::size_t size() const { return parameters_.size(); }
  std::size_t points() const { return measured_.size(); }
  // The residuals the solver sees: one per point, and with the shape objective one more per
  // point after the first n.
  std::size_t residual_count() const {
    return objective_ == CalibrationObjective::relative_l1_with_shape ? 2 * points() : points();
  }
  double scale(std::size_t j) const { return scale_[j]; }
  double lower(std::size_t j) const { return lower_[j]; }
  double upper(std::size_t j) const { return upper_[j]; }

  // Model values at scaled `x`; false when a call threw or gave a non-finite value.
  bool predict(std::span<const double> x, std::span<double> out) const {
    std::vector<double> values(x.size());
    for (std::size_t j = 0; j < x.size(); ++j)
      values[j] = x[j] * scale_[j];
    for (std::size_t i = 0; i < measured_.size(); ++i) {
      ++evaluations_;
      try {
        out[i] = model_(values, i);
      } catch (const std::exception& e) {
        if (failure_.empty()) failure_ = e.what();
        return false;
      }
      if (!std::isfinite(out[i])) {
        if (failure_.empty())
          failure_ = "the model gave a non-finite value at point " + std::to_string(i);
        return false;
      }
    }
    return true;
  }

  // The residuals the solver squares: the relative errors (measured - predicted) / measured, or,
  // for the L1 objectives, sign(r) sqrt(soft-L1(r)), whose squares sum to the soft-L1 loss; with
  // the shape objective then the same of each point's error with its series' measured and
  // predicted values divided by their means (residual_count() in all).
  bool residuals(std::span<const double> x, std::span<double> r) const {
    const std::size_t n = points();
    const std::span<double> predicted = r.first(n);
    if (!predict(x, predicted)) return false;
    if (objective_ == CalibrationObjective::relative_l1_with_shape) {
      const std::vector<double> means = series_means(predicted);
      for (std::size_t i = 0; i < n; ++i) {
        const double shape = predicted[i] / means[i];
        r[n + i] = soft_l1_root((measured_shape_[i] - shape) / measured_shape_[i]);
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      r[i] = (measured_[i] - r[i]) / measured_[i];
      if (objective_ != CalibrationObjective::relative_l2) r[i] = soft_l1_root(r[i]);
    }
    return true;
  }

  // Column j of the Jacobian of the residuals at x (r0 = residuals at x). Central differences
  // where both sides are feasible, else the second-order one-sided formula
  // f'(x) ~ (-3 f(x) + 4 f(x + h) - f(x + 2h)) / 2h, else first order.
  bool jacobian_column(std::vector<double> x, std::size_t j, std::span<const double> r0,
                       double step, std::span<double> column) const {
    const double x0 = x[j];
    const double h = step * std::max(1.0, std::abs(x0));
    const std::size_t m = residual_count();
    std::vector<double> a(m);
    std::vector<double> b(m);
    auto at = [&](double value, std::vector<double>& out) {
      x[j] = value;
      return residuals(x, out);
    };
    if (x0 - h >= lower_[j] && x0 + h <= upper_[j]) {
      if (!at(x0 + h, a) || !at(x0 - h, b)) return false;
      for (std::size_t i = 0; i < m; ++i)
        column[i] = (a[i] - b[i]) / (2 * h);
    } else {
      const double dir = x0 + h <= upper_[j] ? 1.0 : -1.0;
      const bool second_order = dir > 0 ? x0 + 2 * h <= upper_[j] : x0 - 2 * h >= lower_[j];
      if (!at(x0 + dir * h, a)) return false;
      if (second_order) {
        if (!at(x0 + 2 * dir * h, b)) return false;
        for (std::size_t i = 0; i < m; ++i)
          column[i] = dir * (-3 * r0[i] + 4 * a[i] - b[i]) / (2 * h);
      } else {
        for (std::size_t i = 0; i < m; ++i)
          column[i] = dir * (a[i] - r0[i]) / h;
      }
    }
    return true;
  }

  std::int64_t evaluations() const { return evaluations_; }
  const std::string& failure() const { return failure_; }

 private:
  // sign(r) sqrt(soft-L1(r)): its square is the soft-L1 loss of the relative error r.
  static double soft_l1_root(double r) {
    constexpr double a2 = kSoftL1Scale * kSoftL1Scale;
    return std::copysign(std::sqrt(2 * a2 * (std::sqrt(1 + r * r / a2) - 1)), r);
  }

  // For each point, the mean of `values` over the points of its series.
  std::vector<double> series_means(std::span<const double> values) const {
    std::map<std::size_t, std::pair<double, int>> sums;
    for (std::size_t i = 0; i < values.size(); ++i) {
      auto& s = sums[series_[i]];
      s.first += values[i];
      ++s.second;
    }
    std::vector<double> means(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto& s = sums[series_[i]];
      means[i] = s.first / s.second;
    }
    return means;
  }

  std::span<const CalibrationParameter> parameters_;
  std::span<const double> measured_;
  const BlackBoxModel& model_;
  CalibrationObjective objective_;
  std::span<const std::size_t> series_;
  std::vector<double> measured_shape_;
  std::vector<double> scale_;
  std::vector<double> lower_;
  std::vector<double> upper_;
  mutable std::int64_t evaluations_ = 0;
  mutable std::string failure_;
};

// All residuals in one cost function; one parameter block of size 1 per parameter, so a
// parameter that ends on a bound can be held there alone.
class BlackBoxCost final : public ceres::CostFunction {
 public:
  BlackBoxCost(const ScaledModel& model, double step) : model_(model), step_(step) {
    set_num_residuals(static_cast<int>(model.residual_count()));
    for (std::size_t j = 0; j < model.size(); ++j)
      mutable_parameter_block_sizes()->push_back(1);
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    std::vector<double> x(model_.size());
    for (std::size_t j = 0; j < x.size(); ++j)
      x[j] = parameters[j][0];
    const std::span<double> r(residuals, model_.residual_count());
    if (!model_.residuals(x, r)) return false;
    if (jacobians == nullptr) return true;
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (jacobians[j] == nullptr) continue;
      if (!model_.jacobian_column(x, j, r, step_,
                                  std::span<double>(jacobians[j], model_.residual_count())))
        return false;
    }
    return true;
  }

 private:
  const ScaledModel& model_;
  double step_;
};

Eigen::MatrixXd full_jacobian(const ScaledModel& model, const std::vector<double>& x,
                              std::span<const double> r0, double step, bool& ok) {
  Eigen::MatrixXd jac(model.residual_count(), model.size());
  std::vector<double> column(model.residual_count());
  ok = true;
  for (std::size_t j = 0; j < model.size() && ok; ++j) {
    ok = model.jacobian_column(x, j, r0, step, column);
    for (std::size_t i = 0; i < model.residual_count(); ++i)
      jac(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = column[i];
  }
  return jac;
}

struct ErrorSummary {
  double rms = 0.0;
  double max = 0.0;
};

ErrorSummary relative_errors(std::span<const double> measured, std::span<const double> predicted) {
  ErrorSummary s;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const double e = (measured[i] - predicted[i]) / measured[i];
    s.rms += e * e;
    s.max = std::max(s.max, std::abs(e));
  }
  s.rms = std::sqrt(s.rms / static_cast<double>(measured.size()));
  return s;
}

void check_inputs(std::span<const CalibrationParameter> parameters,
                  std::span<const double> measured, const CalibrationOptions& options) {
  if (options.objective == CalibrationObjective::relative_l1_with_shape &&
      options.series.size() != measured.size()) {
    throw InputError("calibration",
                     "the mape+shape objective needs one series label per "
                     "measured point (" +
                         std::to_string(options.series.size()) + " for " +
                         std::to_string(measured.size()) + " points)");
  }
  if (parameters.empty()) throw InputError("calibration", "no free parameters");
  if (measured.size() < parameters.size()) {
    throw InputError("calibration",
                     std::to_string(measured.size()) + " measured point(s) cannot determine " +
                         std::to_string(parameters.size()) +
                         " free parameters: give at least as many points as parameters");
  }
  for (std::size_t i = 0; i < measured.size(); ++i) {
    if (!std::isfinite(measured[i]) || measured[i] <= 0.0) {
      throw InputError("calibration",
                       "measured value " + std::to_string(i) + " must be positive and finite");
    }
  }
  for (const CalibrationParameter& p : parameters) {
    std::ostringstream v;
    v << p.initial << " (bounds [" << p.lower << ", " << p.upper << "])";
    if (!std::isfinite(p.initial) || p.initial == 0.0) {
      throw InputError(p.name, "start value " + v.str() +
                                   " must be finite and non-zero: it sets the parameter's scale");
    }
    if (p.initial < p.lower || p.initial > p.upper)
      throw InputError(p.name, "start value " + v.str() + " is outside its bounds");
  }
}

}  // namespace

const char* objective_name(CalibrationObjective objective) {
  switch (objective) {
    case CalibrationObjective::relative_l1:
      return "mape";
    case CalibrationObjective::relative_l1_with_shape:
      return "mape+shape";
    case CalibrationObjective::relative_l2:
      break;
  }
  return "rms";
}

std::optional<CalibrationObjective> objective_named(std::string_view name) {
  for (const auto o : {CalibrationObjective::relative_l1, CalibrationObjective::relative_l2,
                       CalibrationObjective::relative_l1_with_shape}) {
    if (name == objective_name(o)) return o;
  }
  return std::nullopt;
}

CalibrationResult calibrate(std::span<const CalibrationParameter> parameters,
                            std::span<const double> measured, const BlackBoxModel& model,
                            const CalibrationOptions& options) {
  check_inputs(parameters, measured, options);
  const ScaledModel scaled(parameters, measured, model, options.objective, options.series);
  const std::size_t p = parameters.size();
  const std::size_t n = measured.size();

  CalibrationResult result;
  result.n = static_cast<int>(n);
  result.dof = static_cast<int>(n - p);
  result.measured.assign(measured.begin(), measured.end());
  result.before.resize(n);
  std::vector<double> x(p);
  for (std::size_t j = 0; j < p; ++j)
    x[j] = parameters[j].initial / scaled.scale(j);
  if (!scaled.predict(x, result.before)) {
    throw InputError("calibration", "the model fails at the start values: " + scaled.failure());
  }
  // A parameter that moves no point cannot be calibrated from them: say so instead of letting the
  // solver wander along a flat direction.
  {
    std::vector<double> r0(scaled.residual_count());
    scaled.residuals(x, r0);
    bool ok = false;
    const Eigen::MatrixXd jac = full_jacobian(scaled, x, r0, options.relative_step, ok);
    if (!ok)
      throw InputError("calibration",
                       "the model fails next to the start values: " + scaled.failure());
    for (std::size_t j = 0; j < p; ++j) {
      // Sensitivities are relative changes of the points per relative change of the parameter;
      // below 1e-6 the parameter is not what moves the points (a piecewise model off its branch).
      if (jac.col(static_cast<Eigen::Index>(j)).cwiseAbs().maxCoeff() < kMinSensitivity) {
        std::ostringstream step;
        step << options.relative_step * 100 << "%";
        throw InputError(parameters[j].name,
                         "changing it by " + step.str() +
                             " moves no point by even 1e-9 relative: it cannot be "
                             "calibrated from these points (is it used, or is what it "
                             "costs ever the bottleneck, in these runs?)");
      }
    }
  }

  ceres::Problem::Options problem_options;
  problem_options.enable_fast_removal = false;
  ceres::Problem problem(problem_options);
  std::vector<double*> blocks;
  for (double& v : x)
    blocks.push_back(&v);
  problem.AddResidualBlock(new BlackBoxCost(scaled, options.relative_step), nullptr, blocks);
  for (std::size_t j = 0; j < p; ++j) {
    problem.SetParameterLowerBound(blocks[j], 0, scaled.lower(j));
    if (std::isfinite(scaled.upper(j)))
      problem.SetParameterUpperBound(blocks[j], 0, scaled.upper(j));
  }
  ceres::Solver::Options solver = quiet_lm_options(options.max_iterations);
  // Derivatives are finite differences of a piecewise-smooth model: ask for no more than they can
  // give.
  solver.function_tolerance = 1e-12;
  solver.gradient_tolerance = 1e-14;
  solver.parameter_tolerance = 1e-10;
  // With bounds, Ceres runs a projected Armijo line search along every trust-region step
  // (internal/ceres/trust_region_minimizer.cc, DoLineSearch; its own TODO calls it "not terribly
  // effective", ceres-solver issue 187). Its default cubic interpolation wants the gradient at
  // each trial point, 2p more runs of the model each here: 20 trials of a step made one
  // iteration cost up to 100 runs. Without it the trust region alone shrinks a rejected step,
  // and ParameterBlock::Plus still projects every step onto the bounds. `calibrate --table
  // mxnet_k80_m60_batch` (2 parameters): 11,322 evaluations -> 1,350, the values the same to 3
  // digits (they moved by under 1% of their standard errors).
  solver.max_num_line_search_step_size_iterations = 0;

  ceres::Solver::Summary summary;
  ceres::Solve(solver, &problem, &summary);
  result.iterations = static_cast<int>(summary.iterations.size());
  // Projected LM steps stall next to an active bound; hold such parameters there and solve again
  // for the others (as the throughput fit does).
  auto on_bound = [&](std::size_t j) -> std::string {
    const double tol = 1e-9 * std::max(1.0, std::abs(x[j]));
    if (x[j] <= scaled.lower(j) + tol) return "lower";
    if (std::isfinite(scaled.upper(j)) && x[j] >= scaled.upper(j) - tol) return "upper";
    return "";
  };
  std::vector<double*> held;
  for (std::size_t j = 0; j < p; ++j) {
    if (!on_bound(j).empty()) {
      problem.SetParameterBlockConstant(blocks[j]);
      held.push_back(blocks[j]);
    }
  }
  if (!held.empty() && held.size() < p) {
    ceres::Solve(solver, &problem, &summary);
    result.iterations += static_cast<int>(summary.iterations.size());
  }
  result.converged = summary.termination_type == ceres::CONVERGENCE;
  result.termination = summary.message;

  result.after.resize(n);
  if (!scaled.predict(x, result.after)) {
    throw InputError("calibration",
                     "the model fails at the calibrated values: " + scaled.failure());
  }
  const ErrorSummary before = relative_errors(measured, result.before);
  const ErrorSummary after = relative_errors(measured, result.after);
  result.rms_rel_err_before = before.rms;
  result.max_rel_err_before = before.max;
  result.rms_rel_err_after = after.rms;
  result.max_rel_err_after = after.max;

  // Covariance of the scaled unknowns s^2 (J'J)^-1 from the full (unconstrained) Jacobian, by SVD
  // with the rank rule of ceres::Covariance's DENSE_SVD; then back to natural units.
  std::vector<double> r(scaled.residual_count());
  scaled.residuals(x, r);
  double ss = 0.0;
  for (double v : r)
    ss += v * v;
  const auto residual_dof = static_cast<double>(r.size()) - static_cast<double>(p);
  result.residual_variance = result.dof > 0 ? ss / residual_dof : kNaN;
  bool ok = false;
  const Eigen::MatrixXd jac = full_jacobian(scaled, x, r, options.relative_step, ok);
  const auto pe = static_cast<Eigen::Index>(p);
  Eigen::MatrixXd cov = Eigen::MatrixXd::Constant(pe, pe, kNaN);
  if (ok && result.dof > 0) {
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(jac, Eigen::ComputeThinV);
    const Eigen::VectorXd s = svd.singularValues();
    if (s(s.size() - 1) > std::sqrt(1e-14) * s(0)) {
      const Eigen::MatrixXd v = svd.matrixV();
      cov =
          v * s.cwiseInverse().cwiseAbs2().asDiagonal() * v.transpose() * result.residual_variance;
    }
  }
  const double q = student_t_quantile(options.confidence, result.dof);
  result.correlation = Eigen::MatrixXd::Constant(pe, pe, kNaN);
  for (std::size_t j = 0; j < p; ++j) {
    CalibratedParameter c;
    c.name = parameters[j].name;
    c.initial = parameters[j].initial;
    c.value = x[j] * scaled.scale(j);
    c.lower = parameters[j].lower;
    c.upper = parameters[j].upper;
    const auto je = static_cast<Eigen::Index>(j);
    c.std_error = std::sqrt(cov(je, je)) * scaled.scale(j);
    c.ci = {c.value - q * c.std_error, c.value + q * c.std_error};
    c.at_bound = on_bound(j);
    result.parameters.push_back(c);
    for (std::size_t k = 0; k < p; ++k) {
      const auto ke = static_cast<Eigen::Index>(k);
      result.correlation(je, ke) = cov(je, ke) / std::sqrt(cov(je, je) * cov(ke, ke));
    }
  }
  result.evaluations = scaled.evaluations();
  result.failed_evaluation = scaled.failure();
  return result;
}

}  // namespace trainsim::fit
