// Failed-run rows (fit::exclude_failed_runs): a throughput row under half of both its neighbours'
// per-GPU throughput leaves both halves and is listed apart; a steady loss with scale does not.
// Rows beyond the peak (fit::exclude_beyond_peak): a row whose measured value needs more than the
// GPUs' peak for its matmul FLOPs leaves both halves, with the rows reported on its line; one at or
// under the peak stays.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fit/validation.hpp"
#include "support/run_cli.hpp"

namespace fit = trainsim::fit;

namespace {

// One series of total throughputs on 1, 2, 4 and 8 GPUs from per-GPU values; predictions at the
// measured values times 1.1 (every kept row is 10% off).
std::vector<fit::ValidationPoint> series(const std::vector<double>& per_gpu) {
  std::vector<fit::ValidationPoint> out;
  int gpus = 1;
  for (const double v : per_gpu) {
    fit::ValidationPoint p;
    p.series = "s";
    p.gpus = gpus;
    p.x = gpus;
    p.label = std::to_string(gpus) + " GPUs";
    p.measured = v * gpus;
    p.predicted = 1.1 * v * gpus;
    out.push_back(p);
    gpus *= 2;
  }
  fit::split_halves(out);
  return out;
}

// The rows `trainsim validate --table TABLE --format json` lists as left out of both halves.
nlohmann::json excluded_rows(const std::string& table) {
  const auto r = trainsim::test::run_cli({"validate", "--table", table, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out)["excluded"];
}

}  // namespace

TEST_CASE("a row under half of both neighbours' per-GPU throughput leaves both halves") {
  auto points = series({100, 95, 20, 80});
  const auto halves_before = std::vector<fit::Half>{points[0].half, points[1].half, points[3].half};
  fit::exclude_failed_runs(points);
  CHECK(points[2].half == fit::Half::excluded);
  CHECK(std::string(fit::half_name(points[2].half)) == "excluded");
  CHECK(points[2].excluded_because.find("per-GPU throughput 20 ") != std::string::npos);
  CHECK(points[2].excluded_because.find("95 on 2 GPUs, 80 on 8") != std::string::npos);
  // The other rows keep their halves, so excluding one row moves no other.
  CHECK(std::vector<fit::Half>{points[0].half, points[1].half, points[3].half} == halves_before);
  // The excluded row is scored in neither half: only the kept rows, each 10% off.
  const auto cal = fit::summarize("t", "src", fit::Half::calibration, points);
  const auto val = fit::summarize("t", "src", fit::Half::validation, points);
  CHECK(cal.points + val.points == 3);
  CHECK(cal.mape_abs_pct == Approx(10.0));
  CHECK(val.mape_abs_pct == Approx(10.0));
}

TEST_CASE("a steady loss of per-GPU throughput with scale, and the end rows, are kept") {
  // 4 GPUs at 40 per GPU is under half of 2 GPUs' 90 but not of 8 GPUs' 30: scale, not failure.
  auto steady = series({100, 90, 40, 30});
  fit::exclude_failed_runs(steady);
  for (const auto& p : steady)
    CHECK(p.half != fit::Half::excluded);
  // The first and last rows have one neighbour only: never judged.
  auto ends = series({10, 95, 90, 5});
  fit::exclude_failed_runs(ends);
  for (const auto& p : ends)
    CHECK(p.half != fit::Half::excluded);
}

TEST_CASE("a row whose measured throughput needs more than the peak leaves both halves") {
  auto points = series({100, 95, 90, 80});
  points[1].measured_mfu = 1.2;   // beyond the peak: left out
  points[2].measured_mfu = 1.0;   // at the peak: possible, kept
  points[3].measured_mfu = 0.45;  // a typical run
  const auto halves_before = std::vector<fit::Half>{points[0].half, points[2].half, points[3].half};
  fit::exclude_beyond_peak(points);
  CHECK(points[1].half == fit::Half::excluded);
  // Predicted is 1.1 x measured, so the simulated MFU is 1.1 x 120%.
  CHECK(points[1].excluded_because.find("needs 120% of the GPUs' peak") != std::string::npos);
  CHECK(points[1].excluded_because.find("simulated MFU 132%") != std::string::npos);
  CHECK(std::vector<fit::Half>{points[0].half, points[2].half, points[3].half} == halves_before);
  // Unknown (0) and NaN MFUs are never judged.
  auto unknown = series({100, 95});
  unknown[1].measured_mfu = std::numeric_limits<double>::quiet_NaN();
  fit::exclude_beyond_peak(unknown);
  for (const auto& p : unknown)
    CHECK(p.half != fit::Half::excluded);
}

TEST_CASE("the rows reported on one line with a row beyond the peak leave with it") {
  auto points = series({100, 95, 90, 80});
  points[0].source_line = "README.md:855";  // FP32, beyond the peak
  points[0].measured_mfu = 1.22;
  points[1].source_line = "README.md:855";  // the same line's mixed-precision figure
  points[1].measured_mfu = 0.6;
  points[2].source_line = "README.md:856";  // another line: kept
  points[2].measured_mfu = 0.6;
  points[3].measured_mfu = 0.6;  // no line given: kept
  fit::exclude_beyond_peak(points);
  CHECK(points[0].half == fit::Half::excluded);
  CHECK(points[1].half == fit::Half::excluded);
  CHECK(points[1].excluded_because.find("reported on one line with " + points[0].label) !=
        std::string::npos);
  CHECK(points[2].half != fit::Half::excluded);
  CHECK(points[3].half != fit::Half::excluded);
}

TEST_CASE("validate leaves out DeepLearningExamples' PyTorch BERT phase-2 lines, both precisions") {
  const auto excluded = excluded_rows("dle_training_throughput");
  // PyTorch/LanguageModeling/BERT/README.md lines 855 and 856 (sequence 512 on V100-32GB): FP32 19
  // and 149.6 sequences/s, beyond the V100's FP32 peak, and AMP 75 and 586, 3.94x them by the
  // line's own speedup column (twice TensorFlow's 31-41 on the same GPU).
  REQUIRE(excluded.size() == 4);
  int amp = 0;
  for (const auto& row : excluded) {
    const auto label = row["label"].get<std::string>();
    CHECK((label.starts_with("PyTorch/LanguageModeling/BERT/README.md:855 ") ||
           label.starts_with("PyTorch/LanguageModeling/BERT/README.md:856 ")));
    if (label.find(" AMP ") != std::string::npos) {
      ++amp;
      CHECK(row["reason"].get<std::string>().find("reported on one line with") !=
            std::string::npos);
    }
  }
  CHECK(amp == 2);
}

TEST_CASE("validate leaves out exactly the reference tables' failed runs and lists them") {
  const auto excluded = excluded_rows("lambda_dp_scaling_fp32");
  // Lambda's RTX 6000 Ada Tacotron 2 on 4 GPUs: 2,892 per GPU against 33,542 on 2 and 17,852 on
  // 8 (pytorch-train-throughput-fp32.csv): the one row of the table the rule takes out.
  REQUIRE(excluded.size() == 1);
  const auto& row = excluded[0];
  CHECK(row["table"] == "lambda_dp_scaling_fp32");
  CHECK(row["label"] == "4x RTX 6000 Ada tacotron2 batch 544");
  CHECK(row["reason"].get<std::string>().find("a failed run") != std::string::npos);
  const auto text = trainsim::test::run_cli({"validate", "--table", "lambda_dp_scaling_fp32"});
  CHECK(text.out.find("rows left out of both halves") != std::string::npos);
}
