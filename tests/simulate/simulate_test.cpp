// simulate end to end: closed-form checks of the event-driven training step, and bad input.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

using trainsim::test::run_cli;
using trainsim::test::write_temp_file;

namespace {

nlohmann::json simulate_json(std::vector<std::string> extra) {
  std::vector<std::string> args{"simulate", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("the built-in default scenario runs and reports every documented key") {
  const auto j = simulate_json({});
  for (const char* k : {"step_time_s", "throughput_samples_per_s", "global_batch", "devices", "fresh_sample_fraction"}) {
    CHECK(j.contains(k));
  }
  for (const char* k : {"compute", "recompute", "exposed_comm", "input_stall", "bubble", "optimizer"}) {
    CHECK(j["breakdown_s"].contains(k));
  }
  CHECK(j["memory"]["fits"].get<bool>());
  CHECK(j["global_batch"] == 2048);
  CHECK(j["sim"]["events"].get<int>() > 100);
  // Throughput is global batch over step time.
  CHECK(j["throughput_samples_per_s"].get<double>() ==
        Approx(2048 / j["step_time_s"].get<double>()).epsilon(1e-12));
}

TEST_CASE("the same inputs give bit-identical results") {
  auto a = simulate_json({"--set", "input.echo.factor=2"});
  auto b = simulate_json({"--set", "input.echo.factor=2"});
  a.erase("sim");
  b.erase("sim");
  CHECK(a.dump() == b.dump());
}

TEST_CASE("without overlap, a step is compute + communication + optimizer exactly") {
  const auto j = simulate_json({"--set", "communication.overlap=false", "--set", "input.workers=100000"});
  const auto& b = j["breakdown_s"];
  CHECK(b["input_stall"].get<double>() == 0);
  // Each operation's duration is rounded to a picosecond: 1e-7 relative covers that.
  CHECK(b["exposed_comm"].get<double>() == Approx(j["comm_time_s"].get<double>()).epsilon(1e-7));
  const double sum = b["compute"].get<double>() + b["exposed_comm"].get<double>() + b["optimizer"].get<double>();
  CHECK(j["step_time_s"].get<double>() == Approx(sum).epsilon(1e-9));
}

TEST_CASE("step time is linear in batch size, so v = b/(b/v0 + t) holds") {
  std::vector<double> b{64, 128, 256};
  std::vector<double> t;
  for (double batch : b) {
    const auto j = simulate_json({"--set", "batch_per_replica=" + std::to_string(static_cast<int>(batch)), "--set",
                                  "communication.overlap=false", "--set", "input.workers=100000"});
    t.push_back(j["step_time_s"].get<double>());
  }
  const double slope1 = (t[1] - t[0]) / (b[1] - b[0]);
  const double slope2 = (t[2] - t[1]) / (b[2] - b[1]);
  CHECK(slope1 == Approx(slope2).epsilon(0.02));  // launch overheads are per kernel, not per sample
  CHECK(t[0] - slope1 * b[0] > 0);                // a fixed per-step cost t > 0
}

TEST_CASE("an input-bound step equals the upstream time divided by the echo factor") {
  // Few workers: the host is the bottleneck.
  for (int echo : {1, 2, 4}) {
    const auto j = simulate_json({"--set", "input.workers=8", "--set", "input.echo.factor=" + std::to_string(echo)});
    const double upstream = j["upstream_batch_s"].get<double>();
    const double expected = std::max(upstream / echo, j["breakdown_s"]["compute"].get<double>());
    INFO("echo " << echo << " upstream " << upstream);
    CHECK(j["step_time_s"].get<double>() == Approx(expected).epsilon(0.01));
    CHECK(j["fresh_sample_fraction"].get<double>() == Approx(1.0 / echo));
  }
}

TEST_CASE("fp32 inputs quadruple the host-to-device bytes") {
  const auto u8 = simulate_json({"--set", "input.input_dtype=uint8"});
  const auto f32 = simulate_json({"--set", "input.input_dtype=fp32"});
  CHECK(u8["step_time_s"].get<double>() <= f32["step_time_s"].get<double>());
}

TEST_CASE("memory: a batch that does not fit is reported with the largest that does") {
  const auto j = simulate_json({"--set", "batch_per_replica=4096"});
  CHECK_FALSE(j["memory"]["fits"].get<bool>());
  const auto max_b = j["memory"]["max_batch_that_fits"].get<int>();
  CHECK(max_b > 256);
  CHECK(max_b < 4096);
  const auto at_max = simulate_json({"--set", "batch_per_replica=" + std::to_string(max_b)});
  CHECK(at_max["memory"]["fits"].get<bool>());
  const auto above = simulate_json({"--set", "batch_per_replica=" + std::to_string(max_b + 1)});
  CHECK_FALSE(above["memory"]["fits"].get<bool>());
}

TEST_CASE("bad scenarios and overrides exit 2 naming the key and value") {
  auto r = run_cli({"simulate", "--set", "parallelism.dta=4"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set parallelism.dta=4") != std::string::npos);
  CHECK(r.err.find("did you mean 'data'") != std::string::npos);

  r = run_cli({"simulate", "--set", "precision=fp17"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("fp17") != std::string::npos);

  r = run_cli({"simulate", "--set", "batch_per_replica=-3"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("batch_per_replica") != std::string::npos);

  r = run_cli({"simulate", "--set", "cluster.nodes=0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("nodes") != std::string::npos);

  r = run_cli({"simulate", "--set", "cluster.node.accelerator=a100-sxm4-40g"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean 'a100-sxm4-40gb'") != std::string::npos);

  r = run_cli({"simulate", "--set", "model.name=resnet5O"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("resnet5O") != std::string::npos);

  r = run_cli({"simulate", "/nonexistent/scenario.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/nonexistent/scenario.json") != std::string::npos);

  const auto bad = write_temp_file("{\"cluster\": \"dgx-a100\", \"model\": \"resnet50\", \"batch_per_replica\": 8,\n \"stepz\": 3}");
  r = run_cli({"simulate", bad});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(bad) != std::string::npos);
  CHECK(r.err.find("stepz") != std::string::npos);
  CHECK(r.err.find("did you mean 'steps'") != std::string::npos);

  r = run_cli({"simulate", "--format", "xml"});
  CHECK(r.exit_code == 2);
}

TEST_CASE("an inline scenario file with csv output") {
  const auto f = write_temp_file(R"({
    // a small scenario
    "cluster": "dgx-a100", "model": "resnet20", "batch_per_replica": 128,
    "parallelism": {"data": 2}, "precision": "fp32", "optimizer": "sgd"
  })");
  const auto r = run_cli({"simulate", f, "--format", "csv"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto nl = r.out.find('\n');
  CHECK(r.out.substr(0, nl).find("step_time_s") != std::string::npos);
  CHECK(r.out.find("resnet20") != std::string::npos);
}
