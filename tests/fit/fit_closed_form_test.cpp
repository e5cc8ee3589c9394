// The fit against closed forms: exact data, two points, the delta method, weights as repeats,
// Student-t quantiles, bounds, non-convergence, the small-problem path against ceres::Covariance.

#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "fit/ceres_fit.hpp"
#include "fit/fit_series.hpp"
#include "fit/joint_fit.hpp"
#include "fit/linear_init.hpp"
#include "fit/throughput_model.hpp"
#include "fit/tiny_fit.hpp"
#include "fit/uncertainty.hpp"

using namespace trainsim::fit;

namespace {

// The measured 1-GPU example examples/two_gpu_no_p2p.json follows (v0 = 258.1 img/s, t = 0.054 s).
constexpr double kV0 = 258.1;
constexpr double kT = 0.054;

Series exact_series(double v0, double t_s, const std::vector<double>& batches,
                    const std::string& name = "exact") {
  Series s;
  s.name = name;
  int line = 2;
  for (const double b : batches)
    s.points.push_back({b, model_throughput(b, v0, t_s), 1.0, line++});
  return s;
}

Series noisy_series(double v0, double t_s, double sigma, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  Series s;
  s.name = "noisy";
  for (const double b : {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0}) {
    s.points.push_back({b, model_throughput(b, v0, t_s) + noise(rng), 1.0, 0});
  }
  return s;
}

}  // namespace

TEST_CASE("exact data recovers v0 and t with b50 = v0 t and b90 = 9 v0 t") {
  const Series s = exact_series(kV0, kT, {1, 2, 4, 8, 16, 32, 64, 128, 256});
  const std::vector<double> predict_at{512.0};
  const ThroughputFit f = fit_series(s, {}, predict_at);
  CHECK(f.converged);
  CHECK(f.at_bound.empty());
  CHECK(f.v0_samples_per_s == Approx(kV0).epsilon(1e-9));
  CHECK(f.t_s == Approx(kT).epsilon(1e-9));
  CHECK(f.b50 == Approx(kV0 * kT).epsilon(1e-9));
  CHECK(f.b90 == Approx(9.0 * kV0 * kT).epsilon(1e-9));
  CHECK(model_throughput(f.b50, kV0, kT) == Approx(0.5 * kV0));
  CHECK(model_throughput(f.b90, kV0, kT) == Approx(0.9 * kV0));
  CHECK(f.r2 == Approx(1.0).epsilon(1e-12));
  CHECK(f.rmse_samples_per_s < 1e-8);
  CHECK(f.max_rel_err < 1e-10);
  CHECK(f.n == 9);
  CHECK(f.dof == 7);
  REQUIRE(f.predictions.size() == 1);
  CHECK(f.predictions[0].throughput_samples_per_s ==
        Approx(512.0 / (512.0 / kV0 + kT)).epsilon(1e-9));
}

TEST_CASE("two points give the exact line solution and no intervals") {
  // b/v = b/v0 + t through two points: 1/v0 = (y2 - y1)/(b2 - b1), t = y1 - b1/v0.
  const double b1 = 8, v1 = 120, b2 = 64, v2 = 200;
  const double inv_v0 = (b2 / v2 - b1 / v1) / (b2 - b1);
  const Series s{"two", {}, {{b1, v1, 1, 2}, {b2, v2, 1, 3}}, ""};
  const ThroughputFit f = fit_series(s);
  CHECK(f.v0_samples_per_s == Approx(1.0 / inv_v0).epsilon(1e-9));
  CHECK(f.t_s == Approx(b1 / v1 - b1 * inv_v0).epsilon(1e-9));
  CHECK(f.dof == 0);
  CHECK(std::isnan(f.v0_stderr));
  CHECK(std::isnan(f.t_ci[0]));
}

TEST_CASE("the linear start solves noise-free data exactly") {
  const Series s = exact_series(kV0, kT, {2, 8, 32});
  const LinearStart start = linear_start(s.points, false);
  CHECK(start.v0_samples_per_s == Approx(kV0).epsilon(1e-12));
  CHECK(start.t_s == Approx(kT).epsilon(1e-12));
}

TEST_CASE("Student-t quantiles match tables") {
  CHECK(student_t_quantile(0.95, 1) == Approx(12.7062047362).epsilon(1e-9));
  CHECK(student_t_quantile(0.95, 4) == Approx(2.7764451052).epsilon(1e-9));
  CHECK(student_t_quantile(0.95, 30) == Approx(2.0422724563).epsilon(1e-9));
  CHECK(student_t_quantile(0.95, 1000) == Approx(1.9623390808).epsilon(1e-9));  // beyond the table
  CHECK(student_t_quantile(0.90, 10) == Approx(1.8124611228).epsilon(1e-9));
  CHECK(std::isnan(student_t_quantile(0.95, 0)));
}

TEST_CASE("the small-problem path matches the bounded Ceres solve and ceres::Covariance") {
  const Series s = noisy_series(kV0, kT, 3.0, 7);
  const LinearStart start = linear_start(s.points, false);
  const auto small = solve_series_small(s.points, {}, start);
  REQUIRE(small.has_value());
  const SolveResult full = solve_series(s.points, {}, start);
  CHECK(full.converged);
  CHECK(small->v0_samples_per_s == Approx(full.v0_samples_per_s).epsilon(1e-9));
  CHECK(small->t_s == Approx(full.t_s).epsilon(1e-8));
  CHECK(small->cost == Approx(full.cost).epsilon(1e-9));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      CHECK(small->unscaled_covariance(i, j) ==
            Approx(full.unscaled_covariance(i, j)).epsilon(1e-6));
    }
  }
}

TEST_CASE("intervals follow from the covariance and predictions from the delta method") {
  const Series s = noisy_series(kV0, kT, 3.0, 11);
  const std::vector<double> predict_at{16.0, 1e12};
  const ThroughputFit f = fit_series(s, {}, predict_at);
  const double q = student_t_quantile(0.95, 6);
  CHECK(f.t_quantile == Approx(q));
  CHECK(f.v0_stderr == Approx(std::sqrt(f.covariance(0, 0))));
  CHECK(f.v0_ci[1] - f.v0_ci[0] == Approx(2 * q * f.v0_stderr));
  CHECK(f.t_ci[0] == Approx(f.t_s - q * f.t_stderr));
  CHECK(f.corr == Approx(f.covariance(0, 1) / (f.v0_stderr * f.t_stderr)));
  CHECK(f.residual_variance == Approx(f.rmse_samples_per_s * f.rmse_samples_per_s * 8.0 / 6.0));
  // Delta method at b = 16 against a numerical gradient.
  const double h_v0 = 1e-6 * f.v0_samples_per_s, h_t = 1e-6 * f.t_s;
  const double g0 = (model_throughput(16.0, f.v0_samples_per_s + h_v0, f.t_s) -
                     model_throughput(16.0, f.v0_samples_per_s - h_v0, f.t_s)) /
                    (2 * h_v0);
  const double g1 = (model_throughput(16.0, f.v0_samples_per_s, f.t_s + h_t) -
                     model_throughput(16.0, f.v0_samples_per_s, f.t_s - h_t)) /
                    (2 * h_t);
  const double var = g0 * g0 * f.covariance(0, 0) + 2 * g0 * g1 * f.covariance(0, 1) +
                     g1 * g1 * f.covariance(1, 1);
  const Prediction& p16 = f.predictions[0];
  CHECK(p16.ci[1] - p16.throughput_samples_per_s == Approx(q * std::sqrt(var)).epsilon(1e-6));
  CHECK(p16.pi[1] - p16.throughput_samples_per_s ==
        Approx(q * std::sqrt(var + f.residual_variance)).epsilon(1e-6));
  // As b grows the curve tends to v0 and its interval to v0's.
  const Prediction& far = f.predictions[1];
  CHECK(far.throughput_samples_per_s == Approx(f.v0_samples_per_s).epsilon(1e-9));
  CHECK(far.ci[0] == Approx(f.v0_ci[0]).epsilon(1e-9));
  CHECK(far.ci[1] == Approx(f.v0_ci[1]).epsilon(1e-9));
  // b50 = v0 t: gradient (t, v0).
  const double b50_var = f.t_s * f.t_s * f.covariance(0, 0) +
                         2 * f.t_s * f.v0_samples_per_s * f.covariance(0, 1) +
                         f.v0_samples_per_s * f.v0_samples_per_s * f.covariance(1, 1);
  CHECK(f.b50_ci[1] - f.b50 == Approx(q * std::sqrt(b50_var)));
}

TEST_CASE("an integer weight is the same as repeating the point") {
  Series weighted = noisy_series(kV0, kT, 3.0, 5);
  Series repeated = weighted;
  weighted.points[2].weight = 3.0;
  repeated.points.push_back(repeated.points[2]);
  repeated.points.push_back(repeated.points[2]);
  const ThroughputFit a = fit_series(weighted);
  const ThroughputFit b = fit_series(repeated);
  CHECK(a.v0_samples_per_s == Approx(b.v0_samples_per_s).epsilon(1e-9));
  CHECK(a.t_s == Approx(b.t_s).epsilon(1e-8));
}

TEST_CASE("a robust loss with a huge scale is l2 and with a small one resists an outlier") {
  Series s = exact_series(kV0, kT, {1, 2, 4, 8, 16, 32, 64, 128});
  s.points[7].throughput_samples_per_s *= 0.6;  // a throttled run
  const ThroughputFit l2 = fit_series(s);
  FitOptions huge;
  huge.loss = Loss::huber;
  huge.loss_scale = 1e9;
  const ThroughputFit h = fit_series(s, huge);
  CHECK(h.v0_samples_per_s == Approx(l2.v0_samples_per_s).epsilon(1e-8));
  FitOptions cauchy;
  cauchy.loss = Loss::cauchy;
  cauchy.loss_scale = 1.0;
  const ThroughputFit c = fit_series(s, cauchy);
  CHECK(c.converged);
  CHECK(std::abs(c.v0_samples_per_s / kV0 - 1) < 0.01);
  CHECK(std::abs(l2.v0_samples_per_s / kV0 - 1) > 0.1);
}

TEST_CASE("an optimum on the bound t = 0 is reported and never silent") {
  // Throughput falling with batch size: the best t would be negative.
  const Series s{
      "falling", {}, {{8, 100, 1, 2}, {16, 99, 1, 3}, {32, 97, 1, 4}, {64, 96, 1, 5}}, ""};
  const ThroughputFit f = fit_series(s);
  REQUIRE(f.at_bound.size() == 1);
  CHECK(f.at_bound[0] == "t");
  CHECK(f.t_s == 0.0);
  // With t = 0 the model is flat: v0 is the mean throughput.
  CHECK(f.v0_samples_per_s == Approx(98.0).epsilon(1e-9));

  const std::string path =
      trainsim::test::write_temp_file("batch,throughput\n8,100\n16,99\n32,97\n64,96\n", ".csv");
  const auto r = trainsim::test::run_cli({"fit", path, "--format", "json"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("group all: t ended on its bound") != std::string::npos);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["fits"][0]["at_bound"] == nlohmann::json::array({"t"}));
  const auto text = trainsim::test::run_cli({"fit", path});
  CHECK(text.out.find("WARNING: t on its bound") != std::string::npos);
}

TEST_CASE("a fit stopped by the iteration limit is reported as not converged") {
  Series s = noisy_series(kV0, kT, 3.0, 3);
  FitOptions options;
  options.max_iterations = 1;
  const ThroughputFit f = fit_series(s, options);
  CHECK_FALSE(f.converged);
  CHECK_FALSE(f.termination.empty());
}

TEST_CASE("a joint fit with a shared t recovers exact parameters of both series") {
  // The measured 1-GPU and 2-GPU v0 of examples/two_gpu_no_p2p.json, here with one fixed cost so
  // the shared fit is exact.
  const std::vector<Series> series{exact_series(258.1, 0.1, {8, 16, 32, 64}, "1gpu"),
                                   exact_series(513.8, 0.1, {16, 32, 64, 128}, "2gpu")};
  const JointFit j = fit_joint(series, Shared::t);
  REQUIRE(j.fits.size() == 2);
  CHECK(j.fits[0].v0_samples_per_s == Approx(258.1).epsilon(1e-9));
  CHECK(j.fits[1].v0_samples_per_s == Approx(513.8).epsilon(1e-9));
  CHECK(j.fits[0].t_s == Approx(0.1).epsilon(1e-9));
  CHECK(j.fits[1].t_s == j.fits[0].t_s);
  CHECK(j.summary.parameters == 3);
  CHECK(j.summary.dof == 5);
  CHECK(j.fits[0].dof == 5);
  CHECK(j.fits[0].converged);
}

TEST_CASE(
    "the F test rejects a shared t when the fixed costs differ (1 GPU 0.054 s vs 2 GPUs 0.15 s)") {
  // The measured pair of examples/two_gpu_no_p2p.json: the 2-GPU fixed cost is ~3x the 1-GPU one.
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(0.0, 0.01);  // 1% multiplicative noise
  std::vector<Series> series(2);
  series[0].name = "1gpu";
  series[1].name = "2gpu";
  for (const double b : {4.0, 8.0, 16.0, 32.0, 64.0, 128.0}) {
    series[0].points.push_back({b, model_throughput(b, 258.1, 0.054) * (1 + noise(rng)), 1, 0});
    series[1].points.push_back(
        {2 * b, model_throughput(2 * b, 513.8, 0.15) * (1 + noise(rng)), 1, 0});
  }
  FitOptions relative;
  relative.relative = true;
  const JointFit shared_t = fit_joint(series, Shared::t, relative);
  CHECK(shared_t.summary.p_value < 1e-4);
  // A series' own fit finds its parameters within its intervals.
  const ThroughputFit two = fit_series(series[1], relative);
  CHECK(two.t_ci[0] < 0.15);
  CHECK(two.t_ci[1] > 0.15);
  CHECK(two.t_ci[1] < shared_t.fits[1].t_s * 100);  // finite, sane
}

TEST_CASE("JSON and CSV and curve outputs carry the documented keys") {
  std::string csv = "gpu,batch,images_per_s\n";
  for (const double b : {1.0, 2.0, 4.0, 8.0, 16.0}) {
    csv += "A," + std::to_string(b) + "," +
           std::to_string(model_throughput(b, 100.0, 0.05) * (b == 4 ? 1.01 : 1)) + "\n";
    csv += "B," + std::to_string(b) + "," +
           std::to_string(model_throughput(b, 200.0, 0.02) * (b == 8 ? 0.99 : 1)) + "\n";
  }
  const std::string path = trainsim::test::write_temp_file(csv, ".csv");
  const std::string curve = path + ".curve.csv";
  const auto r = trainsim::test::run_cli({"fit", path, "--group-col", "gpu", "--format", "json",
                                          "--predict", "32,64", "--curve", curve});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["fits"].size() == 2);
  for (const char* key : {"group", "v0", "t_s", "v0_stderr", "t_stderr", "v0_ci95", "t_ci95", "r2",
                          "rmse", "max_rel_err", "n", "b50", "b90", "corr", "residuals",
                          "predictions", "converged", "at_bound", "loss"}) {
    CHECK(j["fits"][0].contains(key));
  }
  CHECK(j["fits"][1]["group"] == "B");
  CHECK(j["fits"][1]["group_values"]["gpu"] == "B");
  CHECK(j["fits"][0]["n"] == 5);
  CHECK(j["fits"][0]["residuals"].size() == 5);
  CHECK(j["fits"][0]["residuals"][0]["line"] == 2);
  CHECK(j["fits"][0]["predictions"][1]["batch"] == 64.0);
  CHECK(j["fits"][0]["v0"].get<double>() == Approx(100.0).epsilon(0.02));
  const std::string curve_text = trainsim::test::slurp(curve);
  CHECK(curve_text.rfind("group,batch,throughput,ci_lo,ci_hi,pi_lo,pi_hi\n", 0) == 0);
  CHECK(std::count(curve_text.begin(), curve_text.end(), '\n') == 1 + 2 * 100);
  const auto c = trainsim::test::run_cli({"fit", path, "--group-col", "gpu", "--format", "csv"});
  CHECK(c.exit_code == 0);
  CHECK(std::count(c.out.begin(), c.out.end(), '\n') == 3);
  const auto joint = trainsim::test::run_cli(
      {"fit", path, "--group-col", "gpu", "--shared", "v0", "--format", "json"});
  CHECK(joint.exit_code == 0);
  const auto jj = nlohmann::json::parse(joint.out);
  CHECK(jj["joint"]["shared"] == "v0");
  CHECK(jj["fits"][0]["v0"] == jj["fits"][1]["v0"]);
}
