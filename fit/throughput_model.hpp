#pragma once
// The throughput model v(b) = b / (b/v0 + t): step time b/v0 + t has a part proportional to the
// batch and a fixed part. Written as b*v0 / (b + v0*t) so that it stays finite at t = 0.

#include <array>

namespace trainsim::fit {

template <typename T>
T model_throughput(double batch, const T& v0, const T& t_s) {
  return batch * v0 / (batch + v0 * t_s);
}

// Partial derivatives (d/dv0, d/dt) for the delta method.
inline std::array<double, 2> model_gradient(double batch, double v0, double t_s) {
  const double denom = batch + v0 * t_s;
  return {batch * batch / (denom * denom), -batch * v0 * v0 / (denom * denom)};
}

// Batch sizes at which throughput reaches 50% and 90% of v0: b/(b + v0 t) = q  <=>  b = q/(1-q) v0
// t.
inline double batch_at_fraction(double fraction, double v0, double t_s) {
  return fraction / (1.0 - fraction) * v0 * t_s;
}

// One residual of the fit: sqrt(weight) * (measured - model), or relative to the measurement.
struct ThroughputResidual {
  double batch;
  double measured;
  double scale;  // sqrt(weight), divided by the measurement for relative errors

  template <typename T>
  bool operator()(const T* const v0, const T* const t_s, T* residual) const {
    residual[0] = scale * (measured - model_throughput(batch, v0[0], t_s[0]));
    return true;
  }
};

}  // namespace trainsim::fit
