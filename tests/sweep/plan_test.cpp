// trainsim plan: costs follow from simulate's throughput and the catalog prices, the Pareto front
// and the cheapest configuration agree with a brute-force reference, and bad catalogs or targets
// are input errors naming the key.

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/plan_search.hpp"
#include "cli_support.hpp"

using trainsim::test::run_cli;
using trainsim::test::write_temp_file;

namespace {

const char* kCatalog = R"({
  "kind": "plan_catalog", "currency": "USD",
  "options": [
    {"name": "rent-a100", "cluster": "dgx-a100-x4", "price_per_node_hour": 30, "max_nodes": 4},
    {"name": "rent-h100", "cluster": "dgx-h100-x4", "price_per_node_hour": 100, "node_counts": [1, 3]},
    {"name": "buy-a100", "cluster": "dgx-a100-x4", "purchase_price_per_node": 262800,
     "amortization": "26280 h", "node_counts": [2]}
  ]})";

nlohmann::json plan_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "plan", "--catalog", write_temp_file(kCatalog), "--format", "json", "--max-pipeline", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("plan costs are price x nodes x work / simulated throughput") {
  const auto j =
      plan_json({"--target", "50000 samples/s", "--epochs", "2", "--dataset-samples", "1000000"});
  // rent-a100: 1, 2, 4 nodes; rent-h100: 1, 3; buy-a100: 2 -> 6 candidates, all data parallel.
  REQUIRE(j["candidates"].size() == 6);
  CHECK(j["target"]["work_samples"] == 2e6);
  for (const auto& c : j["candidates"]) {
    INFO(c.dump());
    REQUIRE(c["simulated"] == true);
    const std::string cluster = c["cluster"];
    const int nodes = c["nodes"];
    const auto sim = run_cli({"simulate", "--set", "cluster=" + cluster, "--set",
                              "cluster.nodes=" + std::to_string(nodes), "--set",
                              "parallelism.data=" + std::to_string(8 * nodes), "--format", "json"});
    REQUIRE(sim.exit_code == 0);
    const double v = nlohmann::json::parse(sim.out)["throughput_samples_per_s"];
    CHECK(c["samples_per_s"].get<double>() == v);
    const double per_node_hour = c["option"] == "rent-a100"   ? 30
                                 : c["option"] == "rent-h100" ? 100
                                                              : 10;
    CHECK(c["price_per_hour"].get<double>() == Approx(per_node_hour * nodes).epsilon(1e-12));
    CHECK(c["time_s"].get<double>() == Approx(2e6 / v).epsilon(1e-12));
    CHECK(c["cost"].get<double>() == Approx(per_node_hour * nodes * 2e6 / v / 3600).epsilon(1e-12));
    CHECK(c["meets_target"] == (v >= 50000));
  }
}

TEST_CASE("plan's Pareto front and cheapest choice match a brute-force reference") {
  for (const char* target : {"50000 samples/s", "20 min", "1 min"}) {
    INFO(target);
    const auto j =
        plan_json({"--target", target, "--epochs", "90", "--dataset-samples", "1281167"});
    const auto& c = j["candidates"];
    std::vector<std::size_t> expected_front;
    for (std::size_t i = 0; i < c.size(); ++i) {
      bool dominated = false;
      for (std::size_t k = 0; k < c.size(); ++k) {
        const double ci = c[i]["cost"], ck = c[k]["cost"], ti = c[i]["time_s"], tk = c[k]["time_s"];
        if (k != i && ck <= ci && tk <= ti && (ck < ci || tk < ti)) dominated = true;
      }
      if (!dominated) expected_front.push_back(i);
      CHECK(c[i]["pareto"] == !dominated);
    }
    std::vector<std::size_t> front = j["pareto_front"];
    std::sort(front.begin(), front.end());
    CHECK(front == expected_front);
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (c[i]["meets_target"] && (!best || c[i]["cost"] < c[*best]["cost"])) best = i;
    }
    if (best) {
      CHECK(j["cheapest_meeting_target"] == *best);
    } else {
      CHECK(j["cheapest_meeting_target"].is_null());
    }
  }
}

TEST_CASE("plan text names the cheapest configuration meeting the target") {
  const auto r = run_cli({"plan", "--catalog", write_temp_file(kCatalog), "--target",
                          "50000 samples/s", "--max-pipeline", "1"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("Pareto front"));
  CHECK_THAT(r.out, Catch::Contains("cheapest meeting the target: "));
  const auto none = run_cli({"plan", "--catalog", write_temp_file(kCatalog), "--target",
                             "1e9 samples/s", "--max-pipeline", "1"});
  REQUIRE(none.exit_code == 0);
  CHECK_THAT(none.out, Catch::Contains("no configuration meets the target"));
}

TEST_CASE("the example catalog loads and its plan runs") {
  const auto r = run_cli(
      {"plan", "--catalog", std::string(TRAINSIM_SOURCE_DIR) + "/examples/plan_catalog.json",
       "--target", "24 h", "--epochs", "90", "--dataset-samples", "1281167", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["currency"] == "USD");
  CHECK(!j["pareto_front"].empty());
}

TEST_CASE("bad catalogs and targets are input errors naming the key") {
  const auto run_catalog = [](const std::string& options) {
    return run_cli({"plan", "--catalog",
                    write_temp_file(R"({"kind": "plan_catalog", "currency": "USD", "options": [)" +
                                    options + "]}"),
                    "--target", "1000 samples/s"});
  };
  struct Case {
    const char* option;
    const char* message;
  };
  for (
      const Case& c : {
          Case{
              R"({"name": "a", "cluster": "dgx-a100-x4", "price_per_node_hour": 1, "max_nodes": 2, "colour": 1})",
              "colour"},
          Case{
              R"({"name": "a", "cluster": "dgx-a100-x5", "price_per_node_hour": 1, "max_nodes": 2})",
              "dgx-a100-x5"},
          Case{
              R"({"name": "a", "cluster": "dgx-a100-x4", "price_per_node_hour": -3, "max_nodes": 2})",
              "price_per_node_hour"},
          Case{R"({"name": "a", "cluster": "dgx-a100-x4", "price_per_node_hour": 1,
                    "purchase_price_per_node": 5, "amortization": "1 h", "max_nodes": 2})",
               "exactly one of price_per_node_hour"},
          Case{
              R"({"name": "a", "cluster": "dgx-a100-x4", "purchase_price_per_node": 5, "max_nodes": 2})",
              "amortization"},
          Case{R"({"name": "a", "cluster": "dgx-a100-x4", "price_per_node_hour": 1})", "max_nodes"},
          Case{R"({"name": "a", "cluster": "dgx-a100", "price_per_node_hour": 1, "max_nodes": 2})",
               "inter-node"},
          Case{
              R"({"name": "a", "cluster": "dgx-a100-x4", "price_per_node_hour": 1, "node_counts": [0]})",
              "node_counts"},
      }) {
    const auto r = run_catalog(c.option);
    INFO(c.option);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.message));
  }
  CHECK(run_catalog("").exit_code == 2);
  const auto dup = run_catalog(
      R"({"name": "a", "cluster": "dgx-a100-x4", "price_per_node_hour": 1, "max_nodes": 1},
                                  {"name": "a", "cluster": "dgx-a100-x4", "price_per_node_hour": 2, "max_nodes": 1})");
  CHECK(dup.exit_code == 2);
  CHECK_THAT(dup.err, Catch::Contains("used twice"));
  const std::string cat = write_temp_file(kCatalog);
  for (const std::vector<std::string>& bad : {
           std::vector<std::string>{"--target", "fast"},
           std::vector<std::string>{"--target", "-5 samples/s"},
           std::vector<std::string>{"--target", "24 h"},  // a time needs the work
           std::vector<std::string>{"--target", "24 h", "--epochs", "3"},
           std::vector<std::string>{"--target", "1 samples/s", "--max-pipeline", "0"},
       }) {
    std::vector<std::string> args = {"plan", "--catalog", cat};
    args.insert(args.end(), bad.begin(), bad.end());
    CHECK(run_cli(args).exit_code == 2);
  }
}

TEST_CASE("the Pareto front keeps only configurations no other beats on both cost and time") {
  using trainsim::cli::Candidate;
  std::vector<Candidate> c(5);
  const double cost[] = {10, 12, 12, 20, 9};
  const double time[] = {100, 50, 60, 50, 200};
  for (int i = 0; i < 5; ++i) {
    c[i].cost = cost[i];
    c[i].time_s = time[i];
    c[i].meets_target = time[i] <= 60;
  }
  c[4].failure = "does not fit in memory";  // not simulated: never on the front
  const auto front = trainsim::cli::mark_pareto_front(c);
  CHECK(front == std::vector<std::size_t>{0, 1});
  CHECK(trainsim::cli::cheapest_meeting_target(c) == std::optional<std::size_t>(1));
}
