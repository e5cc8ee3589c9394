// Fits per second of trainsim's Ceres fit on a typical series (6 batch sizes, ResNet-50 on a K80),
// next to scipy.optimize.curve_fit on the same points in the same run. Prints one line per figure
// and their ratio. A benchmark, never a timed test.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fit/ceres_fit.hpp"
#include "fit/fit_series.hpp"
#include "fit/linear_init.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Each figure is the best of several rounds, for trainsim and scipy alike: on a shared machine a
// single round measures the neighbours' load as much as the fit.
constexpr int kRounds = 7;

template <typename F>
double best_of_rounds(F rate) {
  double best = 0.0;
  for (int r = 0; r < kRounds; ++r)
    best = std::max(best, rate());
  return best;
}

const std::vector<double> kBatch{1, 2, 4, 8, 16, 32};
const std::vector<double> kImagesPerS{15.61, 23.88, 32.26, 39.42, 46.69, 49.48};

double trainsim_fits_per_s(int reps, double* sink) {
  trainsim::fit::Series series;
  series.name = "K80/ResNet-50";
  for (std::size_t i = 0; i < kBatch.size(); ++i)
    series.points.push_back({kBatch[i], kImagesPerS[i], 1.0, 0});
  const auto start = Clock::now();
  for (int r = 0; r < reps; ++r) {
    // Perturb one point so no work can be hoisted out of the loop.
    series.points[0].throughput_samples_per_s = kImagesPerS[0] * (1.0 + 1e-9 * (r % 7));
    const auto fit = trainsim::fit::fit_series(series);
    *sink += fit.v0_samples_per_s + fit.t_stderr;
  }
  return reps / std::chrono::duration<double>(Clock::now() - start).count();
}

// The general path alone (ceres::Problem + Solve with bounds + ceres::Covariance), which robust
// losses and fits on a bound take: shows what the small-problem path saves.
double bounded_ceres_fits_per_s(int reps, double* sink) {
  std::vector<trainsim::fit::Point> points;
  for (std::size_t i = 0; i < kBatch.size(); ++i)
    points.push_back({kBatch[i], kImagesPerS[i], 1.0, 0});
  const auto start = Clock::now();
  for (int r = 0; r < reps; ++r) {
    points[0].throughput_samples_per_s = kImagesPerS[0] * (1.0 + 1e-9 * (r % 7));
    const auto init = trainsim::fit::linear_start(points, false);
    const auto solved = trainsim::fit::solve_series(points, {}, init);
    *sink += solved.v0_samples_per_s + solved.unscaled_covariance(1, 1);
  }
  return reps / std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs curve_fit `reps` times (with its covariance, like ours) and returns fits/s, or a negative
// number when python3 or scipy is missing.
double scipy_fits_per_s(int reps) {
  std::string b;
  std::string v;
  for (std::size_t i = 0; i < kBatch.size(); ++i) {
    b += std::to_string(kBatch[i]) + ",";
    v += std::to_string(kImagesPerS[i]) + ",";
  }
  const std::string script =
      "import time,numpy as np\n"
      "from scipy.optimize import curve_fit\n"
      "b=np.array([" +
      b + "]);v=np.array([" + v +
      "])\n"
      "f=lambda b,v0,t: b*v0/(b+v0*t)\n"
      "A=np.vstack([b,np.ones_like(b)]).T;s,t=np.linalg.lstsq(A,b/v,rcond=None)[0]\n"
      "curve_fit(f,b,v,p0=[1/s,t])\n"
      "n=" +
      std::to_string(reps) +
      "\n"
      "best=0\n"
      "for r in range(" +
      std::to_string(kRounds) +
      "):\n"
      " t0=time.perf_counter()\n"
      " for i in range(n): curve_fit(f,b,v,p0=[1/s,t])\n"
      " best=max(best,n/(time.perf_counter()-t0))\n"
      "print(best)\n";
  const std::string cmd = "/usr/bin/python3 -c '" + script + "' 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return -1.0;
  double rate = -1.0;
  if (std::fscanf(pipe, "%lf", &rate) != 1) rate = -1.0;
  if (::pclose(pipe) != 0) rate = -1.0;
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20000;
  double sink = 0.0;
  trainsim_fits_per_s(reps / 10, &sink);  // warm-up
  const double ours = best_of_rounds([&] { return trainsim_fits_per_s(reps, &sink); });
  const double bounded =
      best_of_rounds([&] { return bounded_ceres_fits_per_s(std::max(100, reps / 20), &sink); });
  const double scipy = scipy_fits_per_s(std::max(200, reps / 20));
  std::printf("(each figure: best of %d rounds)\n", kRounds);
  std::printf("trainsim_fits_per_s=%.0f  (Ceres fit + covariance + intervals, 6 points)\n", ours);
  std::printf(
      "trainsim_bounded_ceres_fits_per_s=%.0f  (general path: ceres::Problem + Covariance)\n",
      bounded);
  if (scipy > 0.0) {
    std::printf("scipy_curve_fit_fits_per_s=%.0f  (same points, same process tree)\n", scipy);
    std::printf("ratio=%.1f\n", ours / scipy);
  } else {
    std::printf(
        "scipy_curve_fit_fits_per_s=unavailable (no /usr/bin/python3 with scipy)\nratio=n/a\n");
  }
  return sink == 0.0 ? 1 : 0;
}
