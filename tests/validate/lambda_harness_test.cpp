// Lambda's table is simulated as its harness ran it: Transformer-XL without --multi_gpu builds
// no DistributedDataParallel (DeepLearningExamples' train.py), so N GPUs are N single-GPU runs
// and a row on N GPUs is exactly N times the row on one GPU at the same per-GPU batch.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "fit/csv_table.hpp"
#include "support/run_cli.hpp"

TEST_CASE("Lambda's Transformer-XL rows are N replicas that never exchange gradients",
          "[validate]") {
  const std::string points =
      (std::filesystem::path(trainsim::test::fresh_dir("lambda_harness")) / "points.csv").string();
  const auto r = trainsim::test::run_cli(
      {"validate", "--table", "lambda_dp_scaling_fp32", "--points", points});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // (read_csv_table refuses a row whose field count differs from the header's.)
  const trainsim::fit::CsvTable table = trainsim::fit::read_csv_table(points);
  REQUIRE(table.header == std::vector<std::string>{"table", "half", "series", "x", "gpus", "label",
                                                   "measured", "simulated", "error_pct"});
  const std::size_t label_column = table.column("label", "validate --points");
  const std::size_t simulated_column = table.column("simulated", "validate --points");
  // label "2x RTX 4090 transformerxlbase batch 28": the system, the model and the global batch.
  const std::regex label(R"(^(?:(\d+)x )?(.*) (transformerxl\w+|gnmt) batch (\d+)$)");
  std::map<std::string, double> one_gpu;  // "system model per-GPU batch" -> samples/s
  struct Row {
    std::string key;
    int gpus;
    double simulated;
  };
  std::vector<Row> multi;
  for (const trainsim::fit::CsvRow& row : table.rows) {
    std::smatch m;
    const std::string& text = row.fields[label_column];
    if (!std::regex_match(text, m, label)) continue;
    const int gpus = m[1].matched ? std::stoi(m[1]) : 1;
    const std::string key =
        m[2].str() + " " + m[3].str() + " " + std::to_string(std::stoi(m[4]) / gpus);
    const double simulated = std::stod(row.fields[simulated_column]);
    if (gpus == 1) {
      one_gpu[key] = simulated;
    } else {
      multi.push_back({key, gpus, simulated});
    }
  }
  int transformer_xl = 0, gnmt = 0;
  for (const Row& row : multi) {
    const auto it = one_gpu.find(row.key);
    // 4-8 x RTX 6000 Ada ran on another server than one GPU did (another host speed).
    if (it == one_gpu.end() || (row.key.starts_with("RTX 6000 Ada") && row.gpus >= 4)) continue;
    INFO(row.key << " on " << row.gpus << " GPUs");
    if (row.key.find("transformerxl") != std::string::npos) {
      CHECK(row.simulated == Approx(row.gpus * it->second).epsilon(2e-5));  // 6 digits in the CSV
      ++transformer_xl;
    } else {
      // GNMT synchronises its gradients through DDP: an all-reduce costs it something.
      CHECK(row.simulated < row.gpus * it->second);
      ++gnmt;
    }
  }
  CHECK(transformer_xl >= 10);
  CHECK(gnmt >= 5);
}
