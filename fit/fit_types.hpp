#pragma once
// Plain data shared by the fitting pieces: measured points, options, and per-series results.
// Everything here is in the units of the input: batch in samples, throughput in samples/s,
// fixed per-step cost t in seconds.

#include <array>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace trainsim::fit {

// The magnitudes of batch sizes, throughputs, weights and prediction batches a fit accepts:
// far beyond any measurement (a 65,536-GPU job runs at ~1e8 samples/s), and small enough that
// b/v0, squared residuals and their sums stay finite in double precision (1e12^2 x 1e6 points
// is 1e30; a squared 1e155, as in a hostile input, would overflow to inf).
inline constexpr double kMinFitValue = 1e-6;
inline constexpr double kMaxFitValue = 1e12;
// What a fit reports for a quantity it could not determine.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Point {
  double batch = 0.0;
  double throughput_samples_per_s = 0.0;
  double weight = 1.0;  // multiplies the squared residual (1/sigma^2 up to a common factor)
  int line = 0;  // 1-based line in the source file; 0 when the point did not come from a file
};

// A measured series: one group of points (e.g. one GPU count, one model).
struct Series {
  std::string name;                       // "K80/AlexNet"; "all" when there is no group column
  std::vector<std::string> group_values;  // one per group column, in column order
  std::vector<Point> points;
  std::string source;  // file the points came from, for error messages
};

enum class Loss { l2, huber, cauchy };

struct FitOptions {
  Loss loss = Loss::l2;
  // Residual magnitude where a robust loss starts to down-weight (same units as the residual:
  // samples/s, or a fraction with `relative`). Same meaning as scipy's least_squares f_scale.
  double loss_scale = 1.0;
  // Residuals (v - f)/v instead of v - f: every point counts by its relative error.
  bool relative = false;
  double confidence = 0.95;
  int max_iterations = 200;
};

// Which parameter a joint fit shares across series.
enum class Shared { none, v0, t };

struct Prediction {
  double batch = 0.0;
  double throughput_samples_per_s = 0.0;
  std::array<double, 2> ci{};  // confidence interval of the fitted curve at `batch`
  std::array<double, 2> pi{};  // interval for one new measurement (residual variance added)
};

struct PointResidual {
  Point point;
  double predicted_samples_per_s = 0.0;
  double residual_samples_per_s = 0.0;  // measured - predicted
  double rel_err = 0.0;                 // (measured - predicted) / measured
};

struct ThroughputFit {
  std::string group;
  std::vector<std::string> group_values;
  Loss loss = Loss::l2;
  double loss_scale = 1.0;
  bool relative = false;
  Shared shared = Shared::none;
  double v0_samples_per_s = 0.0;
  double t_s = 0.0;
  // Parameter covariance (v0, t), already scaled by the residual variance. NaN when n == p.
  Eigen::Matrix2d covariance = Eigen::Matrix2d::Constant(std::numeric_limits<double>::quiet_NaN());
  double v0_stderr = 0.0;
  double t_stderr = 0.0;
  std::array<double, 2> v0_ci{};
  std::array<double, 2> t_ci{};
  double corr = 0.0;
  double t_quantile = 0.0;         // Student-t quantile used for the intervals
  double residual_variance = 0.0;  // s^2 = 2 * cost / dof (in residual units)
  int n = 0;
  int dof = 0;  // n - parameters (pooled across series in a joint fit)
  double r2 = 0.0;
  double rmse_samples_per_s = 0.0;
  double max_rel_err = 0.0;
  double b50 = 0.0;  // v0 * t: batch at half of v0
  double b90 = 0.0;  // 9 * v0 * t
  std::array<double, 2> b50_ci{};
  bool converged = false;
  std::string termination;  // the solver's own words
  int iterations = 0;
  std::vector<std::string> at_bound;  // parameters that ended on a bound ("v0", "t")
  std::vector<PointResidual> residuals;
  std::vector<Prediction> predictions;
};

}  // namespace trainsim::fit
