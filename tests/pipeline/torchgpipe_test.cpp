// Simulated torchgpipe benchmarks (8 x Tesla P40, kakaobrain/torchgpipe docs/benchmarks.rst)
// against the measured throughput in tests/reference_data/torchgpipe_speed_benchmarks.csv.
// The profiles are sourced, not fitted (p40 datasheet; efficiencies are the profile's stated
// estimates), so the bounds below are what this model achieves, recorded in doc_drafts/pipe.md:
// every row's speedup over its model's first row within 20%; absolute throughput of ResNet-101
// and U-Net within 35%. AmoebaNet-D's absolute level is 2-3x optimistic (its many small
// separable convolutions run far below the roofline in PyTorch), so only its speedups are held.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace {

// One CSV line with "quoted, fields".
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto header = split_csv(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto cells = split_csv(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i)
      row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

nlohmann::json model_of(const std::string& name) {
  if (name == "AmoebaNet-D (18, 256)") return {{"name", "amoebanet_d"}, {"N", 18}, {"F", 256}};
  if (name == "ResNet-101") return {{"name", "resnet101"}};
  if (name == "U-Net (5, 64)") return {{"name", "unet"}, {"B", 5}, {"C", 64}};
  return nullptr;
}

}  // namespace

TEST_CASE(
    "torchgpipe speed benchmarks on 8 x P40: speedups within 20%, ResNet/U-Net level within 35%") {
  const auto rows =
      read_csv(std::string(TRAINSIM_REFERENCE_DATA_DIR) + "/torchgpipe_speed_benchmarks.csv");
  REQUIRE(rows.size() == 19);
  std::map<std::string, std::pair<double, double>> first;  // model -> (measured, simulated)
  for (const auto& row : rows) {
    const std::string model = row.at("model");
    const int k = std::stoi(row.at("n_partitions"));
    const int m = row.at("chunks_M").empty() ? 1 : std::stoi(row.at("chunks_M"));
    nlohmann::json sc = {{"name", model + " " + row.at("experiment")},
                         {"cluster", "p40-x8"},
                         {"model", model_of(model)},
                         {"batch_per_replica", std::stoi(row.at("batch_size"))},
                         {"precision", "fp32"},
                         {"optimizer", "sgd"},
                         {"parallelism", {{"data", 1}, {"pipeline", k}, {"microbatches", m}}},
                         // torchgpipe checkpoints every micro-batch ("always") or all but the
                         // last ("except_last", its default); both are modelled as all.
                         {"recompute", !row.at("checkpoint").empty()},
                         {"steps", 3},
                         {"warmup_steps", 1}};
    if (row.at("balance").front() == '[')
      sc["parallelism"]["balance"] = nlohmann::json::parse(row.at("balance"));
    const std::string file = trainsim::test::write_temp_file(sc.dump());
    const auto r = trainsim::test::run_cli({"simulate", file, "--format", "json"});
    INFO(model << " " << row.at("experiment") << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const double measured = std::stod(row.at("throughput_samples_per_s"));
    const double simulated = j["throughput_samples_per_s"];
    CHECK(j["memory"]["fits"] == true);
    if (first.count(model) == 0) first[model] = {measured, simulated};
    const double speedup_error =
        (simulated / first[model].second) / (measured / first[model].first) - 1;
    INFO("measured " << measured << ", simulated " << simulated << ", speedup error "
                     << speedup_error);
    CHECK(std::abs(speedup_error) < 0.20);
    if (model != "AmoebaNet-D (18, 256)") CHECK(std::abs(simulated / measured - 1) < 0.35);
  }
}

TEST_CASE("torchgpipe AmoebaNet-D memory benchmark: model memory exact, baseline out of memory") {
  // Parameters x (fp32 weight + gradient + RMSprop's square average) = torchgpipe's
  // "model memory" column, summed over the stages.
  const std::vector<std::tuple<int, int, std::string, double>> rows{
      {18, 416, "[24]", 3.57},
      {18, 544, "[16, 8]", 6.07},
      {36, 544, "[16, 12, 7, 7]", 11.80},
      {72, 512, "[23, 16, 11, 6, 6, 5, 5, 6]", 20.62}};
  for (const auto& [n, f, balance, gib] : rows) {
    const auto bal = nlohmann::json::parse(balance);
    const nlohmann::json sc = {
        {"cluster", "p40-x8"},
        {"model", {{"name", "amoebanet_d"}, {"N", n}, {"F", f}}},
        {"batch_per_replica", 128},
        {"optimizer", "momentum"},
        {"recompute", true},
        {"parallelism",
         {{"data", 1}, {"pipeline", bal.size()}, {"microbatches", 128}, {"balance", bal}}},
        {"steps", 2},
        {"warmup_steps", 1}};
    const auto r = trainsim::test::run_cli(
        {"simulate", trainsim::test::write_temp_file(sc.dump()), "--format", "json"});
    INFO(balance << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    double model_bytes = 0;
    for (const auto& st : j["stages"]) {
      model_bytes += st["memory"]["weights_bytes"].get<double>() +
                     st["memory"]["gradients_bytes"].get<double>() +
                     st["memory"]["optimizer_state_bytes"].get<double>();
    }
    CHECK(model_bytes / (1u << 30) == Approx(gib).epsilon(0.01));
  }
  // Baseline AmoebaNet-D (18, 208) at batch 128 on one P40: torchgpipe reports out of memory.
  const nlohmann::json base = {{"cluster", "p40-x8"},
                               {"model", {{"name", "amoebanet_d"}, {"N", 18}, {"F", 208}}},
                               {"batch_per_replica", 128},
                               {"optimizer", "momentum"},
                               {"parallelism", {{"data", 1}}},
                               {"steps", 2},
                               {"warmup_steps", 1}};
  const auto r = trainsim::test::run_cli(
      {"simulate", trainsim::test::write_temp_file(base.dump()), "--format", "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["memory"]["fits"] == false);
}
