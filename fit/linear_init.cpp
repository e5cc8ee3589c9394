#include "fit/linear_init.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

namespace trainsim::fit {

LinearStart linear_start(std::span<const Point> points, bool relative) {
  // Step time y = b/v is linear in b. An error dv in v moves y by -b/v^2 dv, so weighting the
  // line's residuals by (v^2/b)^2 makes it approximate the least-squares fit in v (or, for
  // relative errors, (v/b)^2), which puts the start close to the nonlinear optimum.
  const auto n = static_cast<Eigen::Index>(points.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Point& p = points[static_cast<std::size_t>(i)];
    const double v = p.throughput_samples_per_s;
    const double sqrt_w = std::sqrt(p.weight) * (relative ? v / p.batch : v * v / p.batch);
    a(i, 0) = sqrt_w * p.batch;
    a(i, 1) = sqrt_w;
    y(i) = sqrt_w * p.batch / v;
  }
  const Eigen::Vector2d x = a.colPivHouseholderQr().solve(y);
  double inv_v0 = x(0);
  double t_s = x(1);
  if (!(t_s >= 0.0)) {
    // A negative intercept is infeasible: refit the slope through the origin (t = 0).
    t_s = 0.0;
    inv_v0 = a.col(0).dot(y) / a.col(0).squaredNorm();
  }
  double max_v = 0.0;
  for (const Point& p : points) max_v = std::max(max_v, p.throughput_samples_per_s);
  // A non-positive slope means the points never bend over within the data; start v0 just above
  // the largest measurement rather than at infinity.
  const double v0 = (inv_v0 > 0.0 && std::isfinite(1.0 / inv_v0)) ? 1.0 / inv_v0 : 2.0 * max_v;
  return {v0, t_s};
}

}  // namespace trainsim::fit
