#include "fit/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
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
              const BlackBoxModel& model, CalibrationObjective objective)
      : parameters_(parameters), measured_(measured), model_(model), objective_(objective) {
    for (const CalibrationParameter& p : parameters) {
      scale_.push_back(std::abs(p.initial));
      lower_.push_back(p.lower / std::abs(p.initial));
      upper_.push_back(p.upper / std::abs(p.initial));
    }
  }

  std::size_t size() const { return parameters_.size(); }
  std::size_t points() const { return measured_.size(); }
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
  // for the L1 objective, sign(r) sqrt(soft-L1(r)), whose squares sum to the soft-L1 loss.
  bool residuals(std::span<const double> x, std::span<double> r) const {
    if (!predict(x, r)) return false;
    for (std::size_t i = 0; i < r.size(); ++i) {
      r[i] = (measured_[i] - r[i]) / measured_[i];
      if (objective_ == CalibrationObjective::relative_l1) {
        constexpr double a2 = kSoftL1Scale * kSoftL1Scale;
        r[i] = std::copysign(std::sqrt(2 * a2 * (std::sqrt(1 + r[i] * r[i] / a2) - 1)), r[i]);
      }
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
    std::vector<double> a(points());
    std::vector<double> b(points());
    auto at = [&](double value, std::vector<double>& out) {
      x[j] = value;
      return residuals(x, out);
    };
    if (x0 - h >= lower_[j] && x0 + h <= upper_[j]) {
      if (!at(x0 + h, a) || !at(x0 - h, b)) return false;
      for (std::size_t i = 0; i < points(); ++i)
        column[i] = (a[i] - b[i]) / (2 * h);
    } else {
      const double dir = x0 + h <= upper_[j] ? 1.0 : -1.0;
      const bool second_order = dir > 0 ? x0 + 2 * h <= upper_[j] : x0 - 2 * h >= lower_[j];
      if (!at(x0 + dir * h, a)) return false;
      if (second_order) {
        if (!at(x0 + 2 * dir * h, b)) return false;
        for (std::size_t i = 0; i < points(); ++i)
          column[i] = dir * (-3 * r0[i] + 4 * a[i] - b[i]) / (2 * h);
      } else {
        for (std::size_t i = 0; i < points(); ++i)
          column[i] = dir * (a[i] - r0[i]) / h;
      }
    }
    return true;
  }

  std::int64_t evaluations() const { return evaluations_; }
  const std::string& failure() const { return failure_; }

 private:
  std::span<const CalibrationParameter> parameters_;
  std::span<const double> measured_;
  const BlackBoxModel& model_;
  CalibrationObjective objective_;
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
    set_num_residuals(static_cast<int>(model.points()));
    for (std::size_t j = 0; j < model.size(); ++j)
      mutable_parameter_block_sizes()->push_back(1);
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    std::vector<double> x(model_.size());
    for (std::size_t j = 0; j < x.size(); ++j)
      x[j] = parameters[j][0];
    const std::span<double> r(residuals, model_.points());
    if (!model_.residuals(x, r)) return false;
    if (jacobians == nullptr) return true;
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (jacobians[j] == nullptr) continue;
      if (!model_.jacobian_column(x, j, r, step_, std::span<double>(jacobians[j], model_.points())))
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
  Eigen::MatrixXd jac(model.points(), model.size());
  std::vector<double> column(model.points());
  ok = true;
  for (std::size_t j = 0; j < model.size() && ok; ++j) {
    ok = model.jacobian_column(x, j, r0, step, column);
    for (std::size_t i = 0; i < model.points(); ++i)
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
                  std::span<const double> measured) {
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
  return objective == CalibrationObjective::relative_l1 ? "mape" : "rms";
}

std::optional<CalibrationObjective> objective_named(std::string_view name) {
  for (const auto o : {CalibrationObjective::relative_l1, CalibrationObjective::relative_l2}) {
    if (name == objective_name(o)) return o;
  }
  return std::nullopt;
}

CalibrationResult calibrate(std::span<const CalibrationParameter> parameters,
                            std::span<const double> measured, const BlackBoxModel& model,
                            const CalibrationOptions& options) {
  check_inputs(parameters, measured);
  const ScaledModel scaled(parameters, measured, model, options.objective);
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
    std::vector<double> r0(n);
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
  std::vector<double> r(n);
  scaled.residuals(x, r);
  double ss = 0.0;
  for (double v : r)
    ss += v * v;
  result.residual_variance = result.dof > 0 ? ss / result.dof : kNaN;
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
