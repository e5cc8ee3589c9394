#include "fit/solver_setup.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::fit {

ceres::Problem::Options problem_options() {
  ceres::Problem::Options o;
  // Nothing is removed from these small problems, so Ceres need not index blocks for removal.
  o.enable_fast_removal = false;
  return o;
}

ceres::Solver::Options quiet_lm_options(int max_iterations) {
  ceres::Solver::Options o;
  o.minimizer_type = ceres::TRUST_REGION;
  o.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  o.linear_solver_type = ceres::DENSE_QR;
  o.max_num_iterations = max_iterations;
  o.num_threads = 1;
  o.logging_type = ceres::SILENT;
  o.minimizer_progress_to_stdout = false;
  return o;
}

ceres::Solver::Options solver_options(const FitOptions& options) {
  ceres::Solver::Options o = quiet_lm_options(options.max_iterations);
  // Tight enough that the optimum agrees with scipy's to ~1e-10 relative; these problems have
  // two parameters, so the extra iterations cost microseconds.
  o.function_tolerance = 1e-15;
  o.gradient_tolerance = 1e-16;
  o.parameter_tolerance = 1e-14;
  return o;
}

ceres::Covariance::Options covariance_options() {
  ceres::Covariance::Options o;
  // Dense SVD: the matrices are tiny, and it reports rank deficiency instead of guessing.
  o.algorithm_type = ceres::DENSE_SVD;
  o.num_threads = 1;
  return o;
}

BoundedSolve solve_with_active_bounds(const ceres::Solver::Options& options,
                                      ceres::Problem& problem,
                                      const std::vector<BoundedBlock>& blocks) {
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  BoundedSolve out;
  out.iterations = static_cast<int>(summary.iterations.size());
  std::vector<double*> held;
  for (const BoundedBlock& b : blocks) {
    if (*b.value <= b.lower && problem.HasParameterBlock(b.value) &&
        !problem.IsParameterBlockConstant(b.value)) {
      problem.SetParameterBlockConstant(b.value);
      held.push_back(b.value);
    }
  }
  // With every block held there is nothing left to solve (Ceres would refuse).
  if (!held.empty() && static_cast<int>(held.size()) < problem.NumParameterBlocks()) {
    ceres::Solve(options, &problem, &summary);
    out.iterations += static_cast<int>(summary.iterations.size());
  }
  for (double* value : held)
    problem.SetParameterBlockVariable(value);
  out.converged = summary.termination_type == ceres::CONVERGENCE;
  out.termination = summary.message;
  out.final_cost = summary.final_cost;
  return out;
}

bool finite_jacobian(ceres::Problem& problem) {
  double cost = 0.0;
  std::vector<double> residuals;
  ceres::CRSMatrix jacobian;
  if (!problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost, &residuals, nullptr, &jacobian))
    return false;
  if (!std::isfinite(cost)) return false;
  return std::all_of(jacobian.values.begin(), jacobian.values.end(),
                     [](double v) { return std::isfinite(v); });
}

ceres::LossFunction* make_loss(const FitOptions& options) {
  switch (options.loss) {
    case Loss::huber:
      return new ceres::HuberLoss(options.loss_scale);
    case Loss::cauchy:
      return new ceres::CauchyLoss(options.loss_scale);
    case Loss::l2:
      break;
  }
  return nullptr;
}

}  // namespace trainsim::fit
