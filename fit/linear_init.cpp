#include "fit/linear_init.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::fit {

LinearStart linear_start(std::span<const Point> points, bool relative) {
  // Step time y = b/v is linear in b. An error dv in v moves y by -b/v^2 dv, so weighting the
  // line's residuals by (v^2/b)^2 makes it approximate the least-squares fit in v (or, for
  // relative errors, (v/b)^2), which puts the start close to the nonlinear optimum.
  // Weighted least squares for y = a*b + t by the 2x2 normal equations: the columns (b, 1) are
  // well conditioned for batch sizes, and this avoids a QR's allocations on the hot path.
  double s_ww = 0.0, s_wb = 0.0, s_wbb = 0.0, s_wy = 0.0, s_wby = 0.0;
  for (const Point& p : points) {
    const double v = p.throughput_samples_per_s;
    const double sqrt_w = std::sqrt(p.weight) * (relative ? v / p.batch : v * v / p.batch);
    const double w = sqrt_w * sqrt_w;
    const double y = p.batch / v;
    s_ww += w;
    s_wb += w * p.batch;
    s_wbb += w * p.batch * p.batch;
    s_wy += w * y;
    s_wby += w * p.batch * y;
  }
  const double det = s_wbb * s_ww - s_wb * s_wb;
  double inv_v0 = (s_ww * s_wby - s_wb * s_wy) / det;
  double t_s = (s_wbb * s_wy - s_wb * s_wby) / det;
  if (!(t_s >= 0.0)) {
    // A negative intercept is infeasible: refit the slope through the origin (t = 0).
    t_s = 0.0;
    inv_v0 = s_wby / s_wbb;
  }
  double max_v = 0.0;
  for (const Point& p : points)
    max_v = std::max(max_v, p.throughput_samples_per_s);
  // A non-positive slope means the points never bend over within the data; start v0 just above
  // the largest measurement rather than at infinity.
  const double v0 = (inv_v0 > 0.0 && std::isfinite(1.0 / inv_v0)) ? 1.0 / inv_v0 : 2.0 * max_v;
  return {v0, t_s};
}

}  // namespace trainsim::fit
