// `trainsim validate` against its pinned accuracy: each reference table's MAPE (absolute and
// shape, each half) must stay within 2 points of the value recorded in pins.json. A regression
// fails; so does an improvement of more than 2 points, until the pin is moved to the new value
// (scripts/update_validation_pins.py rewrites pins.json from a run).
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace {

nlohmann::json read_pins() {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validate/pins.json");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str(), nullptr, true, true);
}

}  // namespace

TEST_CASE("every reference table's accuracy stays within 2 points of its pin") {
  const auto r = trainsim::test::run_cli({"validate", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  const auto pins = read_pins();
  std::set<std::string> seen;
  for (const auto& t : report["tables"]) {
    const std::string name = t["name"];
    const std::string half = t["half"];
    seen.insert(name);
    INFO(name << " (" << half << "): " << t.dump());
    REQUIRE(pins.contains(name));
    const auto& pin = pins[name][half];
    CHECK(t["points"] == pin["points"]);
    CHECK(t["mape_abs_pct"].get<double>() == Approx(pin["mape_abs_pct"].get<double>()).margin(2));
    CHECK(t["mape_shape_pct"].get<double>() ==
          Approx(pin["mape_shape_pct"].get<double>()).margin(2));
    // Every table names a source a reader can look up and reports both halves.
    CHECK(!t["source"].get<std::string>().empty());
  }
  for (const auto& [name, value] : pins.items()) {
    INFO(name);
    CHECK(seen.count(name) == 1);  // a pinned table that no longer runs is a regression too
  }
  // The rows left out of every table: Lambda's one failed run, the two DeepLearningExamples rows
  // whose FP32 throughput is beyond the V100's FP32 peak (PyTorch BERT-large pre-training at
  // sequence 512: 19 sequences/s x 1.0 TFLOP of matmuls each is 19 TFLOP/s against 15.7), and
  // the AMP rows reported on their lines.
  std::multiset<std::string> excluded;
  for (const auto& row : report["excluded"])
    excluded.insert(row["table"].get<std::string>() + ": " + row["label"].get<std::string>());
  CHECK(excluded == std::multiset<std::string>{
                        "dle_training_throughput: PyTorch/LanguageModeling/BERT/README.md:855 "
                        "V100-32GB x1 AMP batch 8",
                        "dle_training_throughput: PyTorch/LanguageModeling/BERT/README.md:855 "
                        "V100-32GB x1 FP32 batch 4",
                        "dle_training_throughput: PyTorch/LanguageModeling/BERT/README.md:856 "
                        "V100-32GB x8 AMP batch 8",
                        "dle_training_throughput: PyTorch/LanguageModeling/BERT/README.md:856 "
                        "V100-32GB x8 FP32 batch 4",
                        "lambda_dp_scaling_fp32: 4x RTX 6000 Ada tacotron2 batch 544"});
}

TEST_CASE("validate prints a text table, filters by --table and rejects unknown tables") {
  const auto text = trainsim::test::run_cli({"validate", "--table", "mxnet_k80_m60_batch"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("mxnet_k80_m60_batch") != std::string::npos);
  CHECK(text.out.find("calibration") != std::string::npos);
  CHECK(text.out.find("validation") != std::string::npos);
  CHECK(text.out.find("deepbench_gemm") == std::string::npos);
  const auto bad = trainsim::test::run_cli({"validate", "--table", "mxnet_k80_m60_bach"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--table mxnet_k80_m60_bach") != std::string::npos);
  CHECK(bad.err.find("did you mean 'mxnet_k80_m60_batch'") != std::string::npos);
  const auto fmt = trainsim::test::run_cli({"validate", "--format", "yaml"});
  CHECK(fmt.exit_code == 2);
}
