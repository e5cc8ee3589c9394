#include "fit/echo_fit.hpp"

#include <cmath>
#include <limits>

#include "fit/uncertainty.hpp"

namespace trainsim::fit {
namespace {

double cost(std::span<const EchoPoint> points, const EchoRatioModel& model, double w) {
  double c = 0;
  for (const EchoPoint& p : points) {
    const double r = (p.fresh_ratio - model(p.batch, p.echo, w)) / p.fresh_ratio;
    c += r * r;
  }
  return c;
}

}  // namespace

EchoFit fit_repeat_weight(std::span<const EchoPoint> points, const EchoRatioModel& model,
                          double confidence) {
  // Golden-section search on [0, 1]: the cost is smooth in w; 100 iterations shrink the bracket
  // by 0.618^100 ~ 1e-21, far below double precision.
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = 0;
  double b = 1;
  double x1 = b - g * (b - a);
  double x2 = a + g * (b - a);
  double f1 = cost(points, model, x1);
  double f2 = cost(points, model, x2);
  for (int i = 0; i < 100; ++i) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      f1 = cost(points, model, x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      f2 = cost(points, model, x2);
    }
  }
  double w = (a + b) / 2;
  // The ends themselves: golden-section never evaluates them.
  for (const double end : {0.0, 1.0}) {
    if (cost(points, model, end) < cost(points, model, w)) w = end;
  }
  EchoFit out;
  out.repeat_weight = w;
  out.n = static_cast<int>(points.size());
  out.dof = out.n - 1;
  out.at_bound = w <= 1e-9 || w >= 1 - 1e-9;
  // Jacobian of the relative residuals by central differences (one-sided at a bound).
  const double h = 1e-6;
  const double lo = std::max(0.0, w - h);
  const double hi = std::min(1.0, w + h);
  double jtj = 0;
  double ssr = 0;
  double abs_sum = 0;
  for (const EchoPoint& p : points) {
    const double pred = model(p.batch, p.echo, w);
    const double d = (model(p.batch, p.echo, hi) - model(p.batch, p.echo, lo)) / (hi - lo);
    const double j = -d / p.fresh_ratio;
    jtj += j * j;
    const double r = (p.fresh_ratio - pred) / p.fresh_ratio;
    ssr += r * r;
    abs_sum += std::abs(r);
    out.residuals.push_back({p, pred, r});
  }
  out.mape = out.n > 0 ? 100 * abs_sum / out.n : 0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double s2 = out.dof > 0 ? ssr / out.dof : nan;
  out.stderr_value = jtj > 0 ? std::sqrt(s2 / jtj) : nan;
  out.t_quantile = student_t_quantile(confidence, out.dof);
  const double half = out.t_quantile * out.stderr_value;
  out.ci = {w - half, w + half};
  return out;
}

}  // namespace trainsim::fit
