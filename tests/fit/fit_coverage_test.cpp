// Coverage of the 95% intervals on synthetic data with known parameters: the interval must contain
// the truth in about 95% of repeated experiments.

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "fit/fit_series.hpp"
#include "fit/throughput_model.hpp"

using namespace trainsim::fit;

namespace {

struct Coverage {
  double v0 = 0.0;
  double t = 0.0;
  double curve_at_32 = 0.0;
  double b50 = 0.0;
  int failed_fits = 0;
};

// Repeats an experiment: measure at `batches` with Gaussian noise of `sigma` samples/s around the
// true curve (the homoscedastic model the l2 fit assumes), fit, and count how often each interval
// holds the truth. A fixed seed makes the figure reproducible.
Coverage coverage(const std::vector<double>& batches, double sigma, int trials, unsigned seed) {
  constexpr double kV0 = 258.1;  // the measured 1-GPU example of examples/two_gpu_no_p2p.json
  constexpr double kT = 0.054;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  const double truth_32 = model_throughput(32.0, kV0, kT);
  const std::vector<double> predict_at{32.0};
  int v0_in = 0, t_in = 0, curve_in = 0, b50_in = 0;
  Coverage c;
  for (int trial = 0; trial < trials; ++trial) {
    Series s;
    s.name = "synthetic";
    for (const double b : batches)
      s.points.push_back({b, model_throughput(b, kV0, kT) + noise(rng), 1.0, 0});
    const ThroughputFit f = fit_series(s, {}, predict_at);
    if (!f.converged || !f.at_bound.empty()) {
      ++c.failed_fits;
      continue;
    }
    v0_in += f.v0_ci[0] <= kV0 && kV0 <= f.v0_ci[1];
    t_in += f.t_ci[0] <= kT && kT <= f.t_ci[1];
    curve_in += f.predictions[0].ci[0] <= truth_32 && truth_32 <= f.predictions[0].ci[1];
    b50_in += f.b50_ci[0] <= kV0 * kT && kV0 * kT <= f.b50_ci[1];
  }
  const double done = trials - c.failed_fits;
  c.v0 = v0_in / done;
  c.t = t_in / done;
  c.curve_at_32 = curve_in / done;
  c.b50 = b50_in / done;
  return c;
}

}  // namespace

// Tolerance: with N = 4000 independent trials an exact 95% method gives a coverage estimate with
// binomial standard deviation sqrt(0.95 * 0.05 / 4000) = 0.0034. The band 0.95 +- 0.015 is 4.3
// standard deviations (a correct method fails it with probability < 2e-5) and leaves ~0.005 for
// the delta method's linearisation, which at 1% noise bends the curve by far less than that.
// A method with the normal quantile instead of Student-t would be caught at dof = 2 (below).
TEST_CASE("coverage of the 95% intervals is 95% with 8 batch sizes and 6 dof") {
  const Coverage c = coverage({1, 2, 4, 8, 16, 32, 64, 128}, 2.0, 4000, 20240607);
  INFO("coverage v0 " << c.v0 << ", t " << c.t << ", curve at b=32 " << c.curve_at_32 << ", b50 "
                      << c.b50);
  CHECK(c.failed_fits == 0);
  CHECK(std::abs(c.v0 - 0.95) < 0.015);
  CHECK(std::abs(c.t - 0.95) < 0.015);
  CHECK(std::abs(c.curve_at_32 - 0.95) < 0.015);
  CHECK(std::abs(c.b50 - 0.95) < 0.015);
}

TEST_CASE("coverage holds with 2 dof thanks to Student-t (4 batch sizes)") {
  // With 2 dof the normal quantile 1.96 instead of t = 4.30 would cover only ~81%.
  const Coverage c = coverage({2, 8, 32, 128}, 2.0, 4000, 777);
  INFO("coverage v0 " << c.v0 << ", t " << c.t << ", curve at b=32 " << c.curve_at_32 << ", b50 "
                      << c.b50);
  CHECK(c.failed_fits == 0);
  CHECK(std::abs(c.v0 - 0.95) < 0.015);
  CHECK(std::abs(c.t - 0.95) < 0.015);
  CHECK(std::abs(c.curve_at_32 - 0.95) < 0.015);
}
