#pragma once
// Calibration: bounded nonlinear least squares over a black-box model, e.g. the simulator with
// some profile parameters left free. Residuals are relative errors (measured - predicted) /
// measured, so points of very different size count alike. Ceres' Levenberg-Marquardt with
// derivatives by finite differences (central inside the bounds, second-order one-sided next to
// them, so the model is never asked for a value outside its bounds).

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

namespace trainsim::fit {

struct CalibrationParameter {
  std::string name;
  // Start value; must be non-zero and inside the bounds. |initial| also scales the solver's
  // unknown to O(1), so parameters of any unit (seconds, bytes/s, fractions) behave alike.
  double initial = 1.0;
  double lower = 0.0;  // inclusive
  double upper = std::numeric_limits<double>::infinity();
};

// The model's value at point `point` for the parameter values `values` (natural units, one per
// parameter, in order). It may throw: the evaluation then counts as failed and the solver backs
// off; the first message is kept for the report. A non-finite result fails the same way.
using BlackBoxModel = std::function<double(std::span<const double> values, std::size_t point)>;

// What the fit minimises over the points' relative errors r = (measured - predicted) / measured.
enum class CalibrationObjective {
  // Sum of r^2: least squares, whose rms error the measured-CSV report gives.
  relative_l2,
  // Sum of |r|, the mean absolute percentage error `trainsim validate` reports, through the
  // smooth soft-L1 loss 2 a^2 (sqrt(1 + r^2 / a^2) - 1) with a = kSoftL1Scale (Ceres's
  // SoftLOneLoss; it is |r| within a^2 / |r| of 2 a |r| past a few a). Unlike least squares it
  // does not let the few rows that are 2-5x off, which relative errors leave unbounded above and
  // bounded below, pull every other row off: a MAPE fit is a weighted median, not a mean. The
  // standard errors are then those of the transformed residuals (fit/calibration.cpp): a
  // local, least-squares reading of the soft-L1 problem.
  relative_l1,
  // relative_l1's terms plus, for each point, the soft-L1 of its relative error once its series'
  // measured and predicted values are each divided by their own mean (CalibrationOptions::series):
  // the two errors `trainsim validate` reports for a table, absolute and shape, summed. A
  // parameter that scales a whole series moves only the first; one that moves rows against the
  // others of their series (a tile's loss, a bandwidth share, a per-filter cost) moves both, and
  // a MAPE fit alone may trade the series' shape for its mean level.
  relative_l1_with_shape,
};

// "mape", "rms" or "mape+shape", the names `trainsim calibrate --objective` takes.
const char* objective_name(CalibrationObjective objective);
// The objective of that name; nullopt for any other text.
std::optional<CalibrationObjective> objective_named(std::string_view name);

// The soft-L1 loss's scale: relative errors well above 2% are weighed linearly.
inline constexpr double kSoftL1Scale = 0.02;

struct CalibrationOptions {
  // Finite-difference step relative to the scaled (O(1)) parameter. A simulator's output is
  // piecewise smooth (roofline max(compute, memory), overlap of communication with compute,
  // input stalls): 1e-3 keeps the central difference's truncation error ~1e-6 relative while
  // staying far above the simulated clock's resolution (1 ps in ~1e-3..1 s steps).
  double relative_step = 1e-3;
  int max_iterations = 50;
  double confidence = 0.95;
  CalibrationObjective objective = CalibrationObjective::relative_l2;
  // Point i's series, for relative_l1_with_shape (one entry per measured point; any labels, equal
  // for the points of one curve); unused by the other objectives.
  std::vector<std::size_t> series;
};

struct CalibratedParameter {
  std::string name;
  double initial = 0.0;
  double value = 0.0;
  double std_error = 0.0;      // NaN when the Jacobian is rank-deficient or dof < 1
  std::array<double, 2> ci{};  // Student-t interval; NaN like std_error
  double lower = 0.0;
  double upper = 0.0;
  std::string at_bound;  // "", "lower" or "upper"
};

struct CalibrationResult {
  std::vector<CalibratedParameter> parameters;
  std::vector<double> measured;
  std::vector<double> before;  // model at the initial values
  std::vector<double> after;   // model at the calibrated values
  double rms_rel_err_before = 0.0;
  double rms_rel_err_after = 0.0;
  double max_rel_err_before = 0.0;
  double max_rel_err_after = 0.0;
  int n = 0;
  int dof = 0;
  // Of the relative errors: sum r^2 / dof (with relative_l1_with_shape, over both sets of terms:
  // sum r^2 / (2n - p); a point's two terms are not independent, so the standard errors of such
  // a fit are rougher still than a MAPE fit's).
  double residual_variance = 0.0;
  Eigen::MatrixXd correlation;  // of the parameters; NaN entries where undefined
  bool converged = false;
  std::string termination;
  int iterations = 0;
  std::int64_t evaluations = 0;   // calls of the model
  std::string failed_evaluation;  // first message of a model call that threw, if any
};

// Throws InputError when there are fewer points than parameters, a start value is zero, non-finite
// or outside its bounds, relative_l1_with_shape is asked without one series label per point, the
// model fails at the start values, or a parameter does not change the model at any point (it cannot
// be calibrated from these points). Never throws for a solve that does not converge or ends on a
// bound: those are reported.
CalibrationResult calibrate(std::span<const CalibrationParameter> parameters,
                            std::span<const double> measured, const BlackBoxModel& model,
                            const CalibrationOptions& options = {});

}  // namespace trainsim::fit
