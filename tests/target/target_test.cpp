// Time and cost to a target quality (issue 17): the convergence model's closed forms
// (McCandlish et al. 2018; the echo model of models/convergence.hpp), the steps-to-target fit and
// the coverage of its 95% intervals on synthetic data with known truth, `simulate`'s to_target and
// --uncertainty, and plan preferring a smaller global batch once a target prices the steps.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fit/steps_fit.hpp"
#include "models/convergence.hpp"
#include "support/run_cli.hpp"
#include "support/run_cli_json.hpp"

using trainsim::test::run_cli;
using trainsim::test::write_temp_file;
namespace models = trainsim::models;
namespace fit = trainsim::fit;

TEST_CASE("S(B) and E(B) follow the large-batch model and meet at B = B_noise") {
  const models::ConvergenceParams p{2000, 4096, std::nullopt};
  CHECK(models::steps_to_target(p, 4096) == Approx(4000));  // twice S_min at B_noise
  CHECK(models::examples_to_target(p, 4096) == Approx(2 * 2000 * 4096.0));  // twice E_min
  CHECK(models::steps_to_target(p, 1e12) == Approx(2000).epsilon(1e-6));
  // (S/S_min - 1)(E/E_min - 1) = 1 at any batch.
  for (const double b : {64.0, 1000.0, 65536.0}) {
    const double s = models::steps_to_target(p, b) / 2000 - 1;
    const double e = models::examples_to_target(p, b) / (2000 * 4096.0) - 1;
    CHECK(s * e == Approx(1));
  }
}

TEST_CASE(
    "echo: repeats worth nothing cost the noise of B/e, repeats as good as new cost nothing") {
  CHECK(models::effective_batch(1024, 4, 0.0) == Approx(256));
  CHECK(models::effective_batch(1024, 4, 1.0) == Approx(1024));
  CHECK(models::effective_batch(1024, 1, 0.3) == Approx(1024));
  const models::ConvergenceParams p{1000, 512, std::nullopt};
  const models::ToTarget t = models::to_target(p, 1024, 2, 0.0, 0.1);
  CHECK(t.effective_batch == Approx(512));
  CHECK(t.steps == Approx(2000));
  CHECK(t.fresh_samples == Approx(2000 * 512.0));
  CHECK(t.time_s == Approx(200));
  // Far above B_noise echoing is nearly free in steps: S(B) is already near S_min.
  const double big = models::to_target(p, 1 << 20, 4, 0.0, 1).steps;
  CHECK(big / models::steps_to_target(p, 1 << 20) < 1.01);
}

TEST_CASE("the steps-to-target fit recovers exact synthetic data") {
  std::vector<fit::StepsPoint> pts;
  const models::ConvergenceParams truth{3000, 2000, std::nullopt};
  for (double b = 32; b <= 65536; b *= 2)
    pts.push_back({b, models::steps_to_target(truth, b), 0, true});
  const fit::StepsFit f = fit::fit_steps_to_target(pts, "exact");
  CHECK(f.steps_min == Approx(3000).epsilon(1e-6));
  CHECK(f.batch_noise == Approx(2000).epsilon(1e-6));
  CHECK(f.calibration_mape < 1e-6);
}

TEST_CASE("95% intervals of S_min and B_noise cover the truth in ~95% of noisy fits") {
  // Deterministic: a fixed 64-bit LCG (Knuth MMIX constants) and Box-Muller, no library RNG.
  std::uint64_t state = 17;
  const auto uniform = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(state >> 11) + 0.5) / 9007199254740992.0;
  };
  const auto normal = [&uniform] {
    return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform());
  };
  const models::ConvergenceParams truth{5000, 1000, std::nullopt};
  const int trials = 400;
  int cover_s = 0;
  int cover_b = 0;
  for (int k = 0; k < trials; ++k) {
    std::vector<fit::StepsPoint> pts;
    for (double b = 16; b <= 32768; b *= 2) {
      // 5% noise on 1/S, the fitted quantity: the fit's own error model.
      const double inv = (1 + 0.05 * normal()) / models::steps_to_target(truth, b);
      pts.push_back({b, 1 / inv, 0, true});
    }
    const fit::StepsFit f = fit::fit_steps_to_target(pts, "trial");
    cover_s += f.steps_min_ci[0] <= 5000 && 5000 <= f.steps_min_ci[1];
    cover_b += f.batch_noise_ci[0] <= 1000 && 1000 <= f.batch_noise_ci[1];
  }
  // 400 trials: the binomial standard error at 95% is 1.1 points; 4 points either side is 3.6
  // sigma. The delta method's intervals are approximate, which the band allows for.
  CHECK(cover_s / double(trials) == Approx(0.95).margin(0.04));
  CHECK(cover_b / double(trials) == Approx(0.95).margin(0.04));
}

TEST_CASE("trainsim fit --model steps-to-target reports both halves") {
  std::string csv = "batch,steps\n";
  const models::ConvergenceParams truth{2000, 4096, std::nullopt};
  int k = 0;
  for (double b = 64; b <= 32768; b *= 2, ++k)
    csv += std::to_string(static_cast<int>(b)) + "," +
           std::to_string(models::steps_to_target(truth, b) * (k % 2 ? 1.03 : 0.97)) + "\n";
  const auto j =
      trainsim::test::run_cli_json({"fit", write_temp_file(csv, ".csv"), "--model",
                                    "steps-to-target", "--split", "halves", "--format", "json"});
  const auto& f = j["fits"][0];
  CHECK(f["n"] == 5);
  CHECK(f["validation_n"] == 5);
  // Every calibration row is 3% low and every validation row 3% high: the fit follows the
  // calibration half within ~3%, so the validation half is off by ~6%.
  CHECK(f["calibration_mape_pct"].get<double>() < 0.5);
  CHECK(f["validation_mape_pct"].get<double>() == Approx(6.2).margin(0.5));
  CHECK(f["steps_min"].get<double>() == Approx(0.97 * 2000).epsilon(0.01));
  CHECK(f["residuals"].size() == 10);
}

namespace {

nlohmann::json simulate_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "simulate", std::string(TRAINSIM_SOURCE_DIR) + "/examples/data_echoing_resnet50.json",
      "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return trainsim::test::run_cli_json(args);
}

}  // namespace

TEST_CASE("simulate reports steps, time and echo speedup to the target") {
  const auto j =
      simulate_json({"--set",
                     R"(target={"steps_min":2000,"batch_noise":4096,"steps_min_stderr":100,)"
                     R"("batch_noise_stderr":300,"correlation":-0.5})",
                     "--uncertainty"});
  const double b = j["global_batch"].get<double>();
  const int e = j["echo_factor"].get<int>();
  REQUIRE(e == 2);
  const double b_eff = b / e;  // after augmentation: repeats are worth nothing (w = 0)
  const double steps = 2000 * (1 + 4096 / b_eff);
  const auto& t = j["to_target"];
  CHECK(t["steps"].get<double>() == Approx(steps));
  CHECK(t["time_s"].get<double>() == Approx(steps * j["step_time_s"].get<double>()));
  CHECK(t["fresh_samples"].get<double>() == Approx(steps * b / e));
  // Time to target at e = 1: S(B) steps of the step time without echoing.
  const double step_e1 = j["step_time_s"].get<double>() * j["echo_speedup"].get<double>();
  CHECK(t["echo_speedup"].get<double>() ==
        Approx(2000 * (1 + 4096 / b) * step_e1 / t["time_s"].get<double>()));
  const auto& iv = j["intervals"]["to_target.time_s"];
  CHECK(iv[0].get<double>() < t["time_s"].get<double>());
  CHECK(iv[1].get<double>() > t["time_s"].get<double>());
  // Bit-identical on a second run.
  CHECK(simulate_json({"--set",
                       R"(target={"steps_min":2000,"batch_noise":4096,"steps_min_stderr":100,)"
                       R"("batch_noise_stderr":300,"correlation":-0.5})",
                       "--uncertainty"})["intervals"] == j["intervals"]);
}

TEST_CASE("simulate --uncertainty carries the calibrated values' stderr into the step time") {
  // gtopk_1gbe_cluster runs on Pascal GPUs whose kernels profile holds values calibrated on
  // DeepBench (hw_profiles/kernels/nvidia-pascal.json, each with its stderr).
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/examples/gtopk_1gbe_cluster.json";
  const auto run = [&file] {
    return trainsim::test::run_cli_json({"simulate", file, "--uncertainty", "--format", "json"});
  };
  const auto j = run();
  const auto& iv = j["intervals"];
  CHECK(iv["varied"].size() >= 2);
  CHECK(iv["method"] == "delta");
  const double st = j["step_time_s"].get<double>();
  CHECK(iv["step_time_s"][0].get<double>() < st);
  CHECK(iv["step_time_s"][1].get<double>() > st);
  // Symmetric about the point value (delta method), throughput's ends are B / step time's.
  CHECK(iv["step_time_s"][0].get<double>() + iv["step_time_s"][1].get<double>() == Approx(2 * st));
  CHECK(iv["throughput_samples_per_s"][1].get<double>() ==
        Approx(j["throughput_samples_per_s"].get<double>() * st /
               iv["step_time_s"][0].get<double>()));
  CHECK(run()["intervals"] == iv);  // bit-identical
}

TEST_CASE("plan: with a target a large global batch stops being free") {
  const std::string catalog = write_temp_file(
      R"({"kind": "plan_catalog", "currency": "USD", "options": [{"name": "rent-a100",
      "cluster": "dgx-a100-x4", "price_per_node_hour": 30, "node_counts": [1]}]})",
      ".json");
  const auto pick = [&catalog](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"plan",
                                     "--catalog",
                                     catalog,
                                     "--target",
                                     "24 h",
                                     "--epochs",
                                     "1",
                                     "--dataset-samples",
                                     "1000000",
                                     "--max-pipeline",
                                     "1",
                                     "--global-batches",
                                     "256,4096",
                                     "--set",
                                     "batch_per_replica=32",
                                     "--format",
                                     "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto j = trainsim::test::run_cli_json(args);
    REQUIRE(j["cheapest_meeting_target"].is_number());
    return j["candidates"][j["cheapest_meeting_target"].get<std::size_t>()];
  };
  // A fixed amount of work: the larger batch has the higher throughput, so it wins.
  CHECK(pick({})["global_batch"] == 4096);
  // To a target with B_noise = 256: 4096 needs 5312.5 steps of a ~16x longer step than 256's
  // 10000 steps, so the smaller batch is both faster and cheaper.
  const auto c = pick({"--set", R"(target={"steps_min":5000,"batch_noise":256})"});
  CHECK(c["global_batch"] == 256);
  CHECK(c["to_target_steps"].get<double>() == Approx(10000));
}

TEST_CASE("simulate --price-per-gpu-hour prices every device for the time to target") {
  const auto j = trainsim::test::run_cli_json({"simulate", "--set",
                                               R"(target={"steps_min":2000,"batch_noise":4096})",
                                               "--price-per-gpu-hour", "4.1", "--format", "json"});
  CHECK(j["to_target"]["cost_usd"].get<double>() ==
        Approx(4.1 * j["devices"].get<double>() * j["to_target"]["time_s"].get<double>() / 3600));
}

TEST_CASE("sweep rows carry to_target, the same as simulate's") {
  const std::string target = R"(target={"steps_min":1000,"batch_noise":512})";
  const auto doc = trainsim::test::run_cli_json({"sweep", "--vary", "batch_per_replica=32,64",
                                                 "--set", target, "--set", "steps=3", "--set",
                                                 "warmup_steps=1", "--format", "json"});
  int rows = 0;
  for (const auto& j : doc["rows"]) {
    ++rows;
    const double b = j["global_batch"].get<double>();
    CHECK(j["to_target"]["steps"].get<double>() == Approx(1000 * (1 + 512 / b)));
    CHECK(j["to_target"]["time_s"].get<double>() ==
          Approx(1000 * (1 + 512 / b) * j["step_time_s"].get<double>()));
  }
  CHECK(rows == 2);
  const auto csv = run_cli({"sweep", "--vary", "batch_per_replica=32", "--set", target, "--set",
                            "steps=3", "--set", "warmup_steps=1"});
  REQUIRE(csv.exit_code == 0);
  CHECK_THAT(csv.out, Catch::Contains("to_target.steps") && Catch::Contains("to_target.time_s"));
}

TEST_CASE("trainsim fit --model echo recovers the repeat weight of synthetic data") {
  // fresh examples to the target: S(B_eff) B / e with B_eff = B (1 + (e-1) w) / e, w = 0.3.
  const models::ConvergenceParams truth{4000, 1000, std::nullopt};
  std::string csv = "batch,echo,fresh_examples\n";
  for (const double b : {256.0, 1024.0, 4096.0}) {
    for (const int e : {1, 2, 4}) {
      const double fresh = models::to_target(truth, b, e, 0.3, 1.0).fresh_samples;
      csv += std::to_string(static_cast<int>(b)) + "," + std::to_string(e) + "," +
             std::to_string(fresh) + "\n";
    }
  }
  const auto j =
      trainsim::test::run_cli_json({"fit", write_temp_file(csv, ".csv"), "--model", "echo",
                                    "--batch-noise", "1000", "--format", "json"});
  CHECK(j["repeat_weight"].get<double>() == Approx(0.3).margin(1e-6));
  CHECK(j["n"] == 6);
  CHECK(j["mape_pct"].get<double>() < 1e-4);
  // Echoing after augmentation (identical copies) is the w = 0 bound.
  std::string zero = "batch,echo,fresh_examples\n";
  for (const int e : {1, 2, 3}) {
    zero += "512," + std::to_string(e) + "," +
            std::to_string(models::to_target(truth, 512, e, 0.0, 1.0).fresh_samples) + "\n";
  }
  const auto z = run_cli({"fit", write_temp_file(zero, ".csv"), "--model", "echo", "--batch-noise",
                          "1000", "--format", "json"});
  REQUIRE(z.exit_code == 0);
  const auto jz = nlohmann::json::parse(z.out);
  CHECK(jz["repeat_weight"].get<double>() == Approx(0).margin(1e-6));
  CHECK(jz["at_bound"] == true);
}

namespace {

nlohmann::json fit_reference(const std::string& table) {
  return trainsim::test::run_cli_json(
      {"fit", std::string(TRAINSIM_REFERENCE_DATA_DIR) + "/" + table, "--model", "steps-to-target",
       "--split", "halves", "--format", "json"})["fits"][0];
}

}  // namespace

TEST_CASE("shipped workloads are the calibration-half fits of their MLPerf tables") {
  struct Case {
    const char* table;
    const char* workload;
    double calibration_mape_pct;  // pins: today's errors, within 2 points
    double validation_mape_pct;
  };
  for (const Case& c :
       {Case{"mlperf_rcp_resnet50_steps_to_target.csv", "resnet50_imagenet", 3.26, 3.80},
        Case{"mlperf_rcp_bert_steps_to_target.csv", "bert_large_wikipedia", 5.17, 6.57}}) {
    INFO(c.table);
    const auto f = fit_reference(c.table);
    const models::ConvergenceWorkload* w = models::find_convergence_workload(c.workload);
    REQUIRE(w != nullptr);
    REQUIRE(w->params.has_value());
    CHECK(f["steps_min"].get<double>() == Approx(w->params->steps_min).epsilon(1e-9));
    CHECK(f["batch_noise"].get<double>() == Approx(w->params->batch_noise).epsilon(1e-9));
    CHECK(f["covariance"][0][1].get<double>() ==
          Approx(w->params->covariance->cross).epsilon(1e-6));
    CHECK(f["calibration_mape_pct"].get<double>() == Approx(c.calibration_mape_pct).margin(2));
    CHECK(f["validation_mape_pct"].get<double>() == Approx(c.validation_mape_pct).margin(2));
  }
}

TEST_CASE("a shipped workload drives simulate's to_target and its interval") {
  const auto j = trainsim::test::run_cli_json({"simulate", "--set",
                                               R"(target={"workload":"resnet50_imagenet"})",
                                               "--uncertainty", "--format", "json"});
  const auto& p = *models::find_convergence_workload("resnet50_imagenet")->params;
  const double b = j["global_batch"].get<double>();
  CHECK(j["to_target"]["steps"].get<double>() == Approx(p.steps_min * (1 + p.batch_noise / b)));
  const auto& iv = j["intervals"]["to_target.time_s"];
  CHECK(iv[0].get<double>() < j["to_target"]["time_s"].get<double>());
  CHECK(iv[1].get<double>() > j["to_target"]["time_s"].get<double>());
}

TEST_CASE("sweep --uncertainty gives each row simulate's intervals, whatever --jobs") {
  // gtopk_1gbe_cluster's Pascal kernels hold calibrated values with their stderr, so the step time
  // has an interval; the target adds the convergence covariance to the time to target.
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/examples/gtopk_1gbe_cluster.json";
  const std::string target =
      R"(target={"steps_min":2000,"batch_noise":4096,)"
      R"("steps_min_stderr":100,"batch_noise_stderr":300,"correlation":-0.5})";
  const auto sweep = [&](const std::string& jobs, const std::string& format) {
    const auto r = run_cli({"sweep", file, "--vary", "batch_per_replica=64,128", "--set", target,
                            "--set", "steps=3", "--set", "warmup_steps=1", "--uncertainty",
                            "--jobs", jobs, "--format", format});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  const std::string one = sweep("1", "json");
  CHECK(sweep("2", "json") == one);  // bit-identical across thread counts
  const auto doc = nlohmann::json::parse(one);
  REQUIRE(doc["rows"].size() == 2);
  for (const auto& row : doc["rows"]) {
    const std::string bpr = row["vary"]["batch_per_replica"].dump();
    INFO("batch_per_replica " << bpr);
    const auto r =
        run_cli({"simulate", file, "--set", target, "--set", "steps=3", "--set", "warmup_steps=1",
                 "--set", "batch_per_replica=" + bpr, "--uncertainty", "--format", "json"});
    REQUIRE(r.exit_code == 0);
    const auto s = nlohmann::json::parse(r.out);
    CHECK(row["intervals"] == s["intervals"]);  // one implementation, the same numbers
    const auto& iv = row["intervals"];
    CHECK(iv["varied"].size() >= 4);  // calibrated kernel values and S_min, B_noise
    CHECK(iv["step_time_s"][0].get<double>() < row["step_time_s"].get<double>());
    CHECK(iv["to_target.time_s"][1].get<double>() > row["to_target"]["time_s"].get<double>());
  }
  // CSV: fixed interval columns, low and high, holding the JSON rows' numbers.
  const std::string csv = sweep("2", "csv");
  const auto header_end = csv.find('\n');
  const std::string header = csv.substr(0, header_end);
  CHECK_THAT(header, Catch::Contains("intervals.step_time_s.0,intervals.step_time_s.1") &&
                         Catch::Contains("intervals.to_target.time_s.0") &&
                         Catch::Contains("intervals.varied"));
  const std::string low = doc["rows"][0]["intervals"]["to_target.time_s"][0].dump();
  CHECK_THAT(csv.substr(header_end), Catch::Contains(low));
}
