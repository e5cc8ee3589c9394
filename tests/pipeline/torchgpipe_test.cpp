// torchgpipe's memory benchmarks (8 x Tesla P40, kakaobrain/torchgpipe docs/benchmarks.rst). Its
// speed benchmarks are the `torchgpipe_speed` table of `trainsim validate` (pinned in
// tests/validate).
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
