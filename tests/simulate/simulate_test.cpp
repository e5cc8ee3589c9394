// simulate end to end: closed-form checks of the event-driven training step, and bad input.
#include <catch2/catch.hpp>

#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"
#include "support/run_cli_json.hpp"

using trainsim::test::run_cli;
using trainsim::test::write_temp_file;

namespace {

nlohmann::json simulate_json(std::vector<std::string> extra) {
  std::vector<std::string> args{"simulate", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return trainsim::test::run_cli_json(args);
}

// `base` with one more override.
nlohmann::json simulate_json(std::vector<std::string> base, const std::string& set) {
  base.insert(base.end(), {"--set", set});
  return simulate_json(std::move(base));
}

}  // namespace

TEST_CASE("the built-in default scenario runs and reports every documented key") {
  const auto j = simulate_json({});
  for (const char* k : {"step_time_s", "throughput_samples_per_s", "global_batch", "devices",
                        "fresh_sample_fraction"}) {
    CHECK(j.contains(k));
  }
  for (const char* k :
       {"compute", "recompute", "exposed_comm", "input_stall", "bubble", "optimizer"}) {
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
  const auto j =
      simulate_json({"--set", "communication.overlap=false", "--set", "input.enabled=false"});
  const auto& b = j["breakdown_s"];
  CHECK(b["input_stall"].get<double>() == 0);
  // Each operation's duration is rounded to a picosecond: 1e-7 relative covers that.
  CHECK(b["exposed_comm"].get<double>() == Approx(j["comm_time_s"].get<double>()).epsilon(1e-7));
  const double sum = b["compute"].get<double>() + b["host"].get<double>() +
                     b["exposed_comm"].get<double>() + b["optimizer"].get<double>();
  CHECK(j["step_time_s"].get<double>() == Approx(sum).epsilon(1e-9));
}

TEST_CASE("step time is linear in batch size, so v = b/(b/v0 + t) holds") {
  std::vector<double> b{64, 128, 256};
  std::vector<double> t;
  for (double batch : b) {
    const auto j =
        simulate_json({"--set", "batch_per_replica=" + std::to_string(static_cast<int>(batch)),
                       "--set", "communication.overlap=false", "--set", "input.enabled=false"});
    t.push_back(j["step_time_s"].get<double>());
  }
  const double slope1 = (t[1] - t[0]) / (b[1] - b[0]);
  const double slope2 = (t[2] - t[1]) / (b[2] - b[1]);
  CHECK(slope1 == Approx(slope2).epsilon(0.02));  // launch overheads are per kernel, not per sample
  CHECK(t[0] - slope1 * b[0] > 0);                // a fixed per-step cost t > 0
}

TEST_CASE("TF1 graph mode launches every pointwise op that XLA fuses into its producer") {
  const auto xla = simulate_json({"--set", "framework=tensorflow_xla"});
  const auto graph = simulate_json({"--set", "framework=tensorflow_graph"});
  // The same convolutions; batch norm's ReLU and the residual adds become kernels of their own.
  CHECK(graph["kernels_per_step"].get<double>() > xla["kernels_per_step"].get<double>());
  CHECK(graph["breakdown_s"]["compute"].get<double>() >
        xla["breakdown_s"]["compute"].get<double>());
  CHECK(graph["step_time_s"].get<double>() > xla["step_time_s"].get<double>());
}

TEST_CASE(
    "the framework's rnn picks the LSTM kernels: TensorFlow's BlockLSTM costs more launches") {
  const std::vector<std::string> gnmt{
      "--set", "model=gnmt",          "--set", "batch_per_replica=64",
      "--set", "input.enabled=false", "--set", "framework=tensorflow_graph"};
  auto with = [&](const char* rnn) {
    return simulate_json(gnmt, std::string("framework.rnn=") + rnn);
  };
  const auto block = with("tf_block_lstm");
  const auto cudnn = with("cudnn");
  // Per step: xh copies, the GEMM over [x, h] and, in backward, a weight-gradient GEMM that reads
  // and writes all of the gradient every step.
  CHECK(block["kernels_per_step"].get<double>() > cudnn["kernels_per_step"].get<double>());
  CHECK(block["step_time_s"].get<double>() > cudnn["step_time_s"].get<double>());
  const auto bad =
      run_cli({"simulate", "--set", "framework=pytorch_eager", "--set", "framework.rnn=scan"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("framework.rnn") != std::string::npos);
}

TEST_CASE("a host's single-thread speed divides the framework's host time") {
  // The same step on the DGX A100 host (EPYC 7742, the reference core: 1) and the DGX H100 host
  // (Xeon 8480C: 1.41): the same kernels, launched 1.41 times faster.
  const std::vector<std::string> small{"--set", "batch_per_replica=1",
                                       "--set", "input.enabled=false",
                                       "--set", "parallelism.data=1"};
  auto on = [&](const char* cluster) {
    return simulate_json(small, std::string("cluster=") + cluster);
  };
  const auto a100 = on("dgx-a100");
  const auto h100 = on("dgx-h100");
  CHECK(a100["kernels_per_step"].get<double>() == h100["kernels_per_step"].get<double>());
  CHECK(a100["host_busy_s"].get<double>() / h100["host_busy_s"].get<double>() ==
        Approx(1.41).epsilon(1e-6));  // JSON prints 7 digits
}

TEST_CASE("an input-bound step equals max(accelerator step, upstream time / echo factor)") {
  // Few workers: the host is the bottleneck. The accelerator step is the same scenario with
  // synthetic (always ready) inputs.
  const double accel = simulate_json({"--set", "input.enabled=false"})["step_time_s"].get<double>();
  for (int echo : {1, 2, 4, 8}) {
    const auto j = simulate_json(
        {"--set", "input.workers=8", "--set", "input.echo.factor=" + std::to_string(echo)});
    const double upstream = j["upstream_batch_s"].get<double>();
    const double expected = std::max(upstream / echo, accel);
    INFO("echo " << echo << " upstream " << upstream << " accelerator " << accel);
    CHECK(upstream > 2 * accel);  // the case is input-bound without echoing
    CHECK(j["step_time_s"].get<double>() == Approx(expected).epsilon(0.01));
    CHECK(j["fresh_sample_fraction"].get<double>() == Approx(1.0 / echo));
    CHECK(j["echo_speedup"].get<double>() == Approx(upstream / expected).epsilon(0.01));
  }
}

TEST_CASE("fp32 inputs quadruple the host-to-device bytes") {
  const auto u8 = simulate_json({"--set", "input.input_dtype=uint8"});
  const auto f32 = simulate_json({"--set", "input.input_dtype=fp32"});
  // (to the last bits of the averaged step: the fp32 run starts later, and its step times are
  // differences of larger doubles)
  CHECK(u8["step_time_s"].get<double>() <= f32["step_time_s"].get<double>() * (1 + 1e-12));
  // h2d = latency + bytes / bandwidth (PCIe 4.0 x16 on the DGX A100: 1 us, 31.5 GB/s per the
  // profile).
  const double bytes_u8 = 256.0 * 3 * 224 * 224;
  const double latency_s = u8["h2d_batch_s"].get<double>() - bytes_u8 / 31.5e9;
  CHECK(latency_s == Approx(1e-6).margin(1e-7));
  CHECK(f32["h2d_batch_s"].get<double>() - latency_s ==
        Approx(4 * bytes_u8 / 31.5e9).epsilon(1e-9));
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

  const auto bad = write_temp_file(
      "{\"cluster\": \"dgx-a100\", \"model\": \"resnet50\", \"batch_per_replica\": 8,\n \"stepz\": "
      "3}");
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

TEST_CASE("new scenario keys reject bad values naming the key and value") {
  auto r = run_cli({"simulate", "--set", "input.workers=1000"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("workers") != std::string::npos);
  CHECK(r.err.find("1000") != std::string::npos);

  r = run_cli({"simulate", "--set", "input.echo.insert=before_augment"});  // default mode: batch
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("insert") != std::string::npos);
  CHECK(r.err.find("mode example") != std::string::npos);

  r = run_cli({"simulate", "--set", "input.input_dtype=fp8"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("fp8") != std::string::npos);

  r = run_cli({"simulate", "--set", "input.enabled=maybe"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("enabled") != std::string::npos);

  r = run_cli({"simulate", "--set", "input.echo.factor=0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("factor") != std::string::npos);

  r = run_cli({"simulate", "--trace", "/nonexistent-dir/trace.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/nonexistent-dir/trace.json") != std::string::npos);
}

TEST_CASE(
    "the trace option writes Chrome trace JSON with device, host and link tracks, stalls and step "
    "markers") {
  const std::string path = write_temp_file("", ".json");
  // Input-bound (one worker per GPU) so the accelerator visibly waits on the input queue.
  const auto r = run_cli({"simulate", "--set", "input.workers=8", "--set", "steps=4", "--set",
                          "warmup_steps=1", "--trace", path, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  const auto trace = nlohmann::json::parse(trainsim::test::slurp(path));
  std::set<std::string> processes, threads, categories;
  int step_markers = 0;
  double stall_us = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "process_name")
      processes.insert(e["args"]["name"].get<std::string>());
    if (ph == "M" && e["name"] == "thread_name")
      threads.insert(e["args"]["name"].get<std::string>());
    if (ph == "X") {
      categories.insert(e["cat"].get<std::string>());
      CHECK(e["dur"].get<double>() >= 0);
      if (e["cat"] == "stall") stall_us += e["dur"].get<double>();
    }
    if (ph == "i" && e["name"].get<std::string>().rfind("step ", 0) == 0) ++step_markers;
  }
  CHECK(processes.count("replica 0 / gpu0") == 1);
  CHECK(processes.count("replica 0 / host0") == 1);
  CHECK(processes.count("links") == 1);
  for (const char* t : {"compute", "comm (gradient collectives)", "h2d copy", "input workers",
                        "nvlink3 (collectives)"})
    CHECK(threads.count(t) == 1);
  for (const char* c : {"compute", "comm", "h2d", "input", "stall", "link", "optimizer"})
    CHECK(categories.count(c) == 1);
  CHECK(step_markers == 4);
  // The stalls in the trace cover at least the measured steps' stalls (warm-up adds more).
  CHECK(stall_us * 1e-6 >= 3 * report["breakdown_s"]["input_stall"].get<double>() * 0.999);
  std::remove(path.c_str());
}

TEST_CASE("the example scenarios run and show what they are for") {
  const std::string dir = std::string(TRAINSIM_SOURCE_DIR) + "/examples/";
  // MNIST MLP: host-bound, so a much faster GPU leaves the step time unchanged.
  const auto mlp = simulate_json({dir + "mnist_mlp_cpu_bound.json"});
  const auto mlp_fast = simulate_json(
      {dir + "mnist_mlp_cpu_bound.json", "--set", "cluster.node.accelerator=h100-pcie"});
  // The GPU is busy a small part of the step: it waits for the host (the input pipeline and the
  // framework's launches), and the step is the input pipeline's time per batch.
  CHECK(mlp["breakdown_s"]["compute"].get<double>() < 0.2 * mlp["step_time_s"].get<double>());
  CHECK(mlp["step_time_s"].get<double>() ==
        Approx(mlp["upstream_batch_s"].get<double>()).epsilon(0.01));
  CHECK(mlp_fast["step_time_s"].get<double>() ==
        Approx(mlp["step_time_s"].get<double>()).epsilon(0.01));
  // Data echoing: the upstream is 2-4x slower than the accelerator; echo 2 speeds up ~2x.
  const auto echo = simulate_json({dir + "data_echoing_resnet50.json"});
  const auto no_input =
      simulate_json({dir + "data_echoing_resnet50.json", "--set", "input.enabled=false"});
  const double ratio =
      echo["upstream_batch_s"].get<double>() / no_input["step_time_s"].get<double>();
  CHECK(ratio > 2);
  CHECK(ratio < 4);
  CHECK(echo["echo_speedup"].get<double>() == Approx(2).epsilon(0.02));
  CHECK(echo["fresh_sample_fraction"].get<double>() == 0.5);
  // gTop-k at 0.1% on 1 GbE beats dense allreduce.
  const auto g = simulate_json({dir + "gtopk_1gbe_cluster.json"});
  const auto dense =
      simulate_json({dir + "gtopk_1gbe_cluster.json", "--set", "communication.compression=none"});
  CHECK(g["step_time_s"].get<double>() < dense["step_time_s"].get<double>() / 2);
  CHECK(g["devices"] == 32);
  // No P2P: gradients cross the host, so the exchange costs more than with P2P.
  const auto nop2p = simulate_json({dir + "two_gpu_no_p2p.json"});
  const auto p2p = simulate_json({dir + "two_gpu_no_p2p.json", "--set", "cluster.node.p2p=true"});
  CHECK(nop2p["comm_time_s"].get<double>() > 1.5 * p2p["comm_time_s"].get<double>());
}
