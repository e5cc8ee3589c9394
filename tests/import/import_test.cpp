// `trainsim import`: synthetic Kineto traces (scripts/make_kineto_trace.py, and the committed
// examples/traces/mlp_h100_trace.json it wrote) imported and simulated: the round trip on the
// measuring device reproduces the trace's measured step, another device rescales the kernels
// through the kernel model, data, pipeline and tensor parallelism run (tensor parallelism by
// the roles the import reads from module names), and the workload runs in sweep and plan.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/import_trace.hpp"
#include "cli/profiles_source.hpp"
#include "models/kernel_plan.hpp"
#include "models/scenario.hpp"
#include "models/zoo/imported_workload.hpp"
#include "models/zoo/tensor_parallel.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/kineto_trace.hpp"
#include "sweep/cli_support.hpp"

extern char** environ;

namespace fs = std::filesystem;
using trainsim::test::run_cli;
using trainsim::test::shell_quote;
using trainsim::test::slurp;

namespace {

const std::string kExampleTrace =
    std::string(TRAINSIM_SOURCE_DIR) + "/examples/traces/mlp_h100_trace.json";

std::string temp_dir() {
  return trainsim::test::fresh_dir("import");
}

// Writes a synthetic trace with scripts/make_kineto_trace.py and these extra arguments.
std::string make_trace(const std::string& dir, const std::vector<std::string>& args) {
  const std::string out = dir + "/trace.json";
  std::string cmd =
      shell_quote(TRAINSIM_PYTHON3) + " " +
      shell_quote(std::string(TRAINSIM_SOURCE_DIR) + "/scripts/make_kineto_trace.py") + " " +
      shell_quote(out);
  for (const auto& a : args)
    cmd += " " + shell_quote(a);
  REQUIRE(std::system(cmd.c_str()) == 0);
  return out;
}

nlohmann::json import_trace(const std::string& trace, const std::string& dir,
                            const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"import", trace, "--out", dir + "/w.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(slurp(dir + "/w.json"));
}

// A scenario running the workload on one GPU of `cluster` (its measured batch and precision).
std::string scenario(const std::string& dir, const std::string& cluster, int batch,
                     const std::string& extra = "") {
  const std::string path = dir + "/s.json";
  std::ofstream(path) << R"({"name": "imported", "cluster": ")" << cluster
                      << R"(", "model": {"workload": "w.json"}, "batch_per_replica": )" << batch
                      << R"(, "parallelism": {"data": 1}, "steps": 4, "warmup_steps": 1)" << extra
                      << "}";
  return path;
}

nlohmann::json simulate(const std::string& path, const std::vector<std::string>& sets = {}) {
  std::vector<std::string> args = {"simulate", path, "--format", "json"};
  for (const auto& s : sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("the example trace's round trip is within 5% of its measured step") {
  const std::string dir = temp_dir();
  const auto w = import_trace(kExampleTrace, dir);
  CHECK(w["accelerator"] == "h100-sxm5");  // from deviceProperties "NVIDIA H100 80GB HBM3"
  CHECK(w["precision"] == "bf16");         // the GEMMs' c10::BFloat16 inputs
  CHECK(w["batch"] == 256);                // aten::linear's leading input dimension
  CHECK(w["steps"] == 2);                  // all but the first of 3
  CHECK(w["host_syncs_per_step"] == 2);    // before the optimizer and at the step's end
  // The MLP: 4 x (linear, relu) + loss forward; per layer 1 forward kernel; 4 x 3 backward
  // kernels (relu backward, two GEMMs); 4 optimizer kernels.
  CHECK(w["layers"].size() == 9);
  CHECK(w["layers"][0]["params"] == 4096 * 4096 + 4096);
  CHECK(w["optimizer"].size() == 4);
  CHECK(w["layers"][0]["forward"][0]["class"] == "gemm");
  CHECK(w["layers"][1]["forward"][0]["class"] == "elementwise");
  CHECK(w["layers"][0]["forward"][0]["flops"].get<double>() == Approx(2.0 * 256 * 4096 * 4096));
  CHECK(w["data_loader_wait_s"].get<double>() == Approx(150e-6));
  const double measured = w["measured_step_s"].get<double>();
  const auto r = simulate(scenario(dir, "dgx-h100", 256));
  const double simulated = r["step_time_s"].get<double>();
  INFO("measured " << measured << " s, simulated " << simulated << " s");
  CHECK(std::abs(simulated / measured - 1) < 0.05);
  CHECK(r["workload"]["scaled"] == false);
  fs::remove_all(dir);
}

TEST_CASE("round trips of host-bound, device-bound and unsynchronised traces") {
  struct Case {
    std::vector<std::string> args;
    int batch;
  };
  for (const Case& c : {Case{{"--batch", "64", "--host-us", "30"}, 64},
                        Case{{"--batch", "2048", "--host-us", "5"}, 2048},
                        Case{{"--no-sync", "--steps", "4", "--warmup-extra"}, 256}}) {
    const std::string dir = temp_dir();
    const auto w = import_trace(make_trace(dir, c.args), dir);
    const double measured = w["measured_step_s"].get<double>();
    const double simulated =
        simulate(scenario(dir, "dgx-h100", c.batch))["step_time_s"].get<double>();
    INFO("trace " << c.args[0] << ": measured " << measured << " s, simulated " << simulated);
    CHECK(std::abs(simulated / measured - 1) < 0.05);
    fs::remove_all(dir);
  }
}

TEST_CASE("the last N steps are imported (--steps), and a warm-up step that differs is dropped") {
  const std::string dir = temp_dir();
  const std::string trace = make_trace(dir, {"--steps", "3", "--warmup-extra"});
  CHECK(import_trace(trace, dir, {"--steps", "3"})["steps"] == 2);  // step 1 launched more
  CHECK(import_trace(trace, dir, {"--steps", "1"})["steps"] == 1);
  const auto r = run_cli({"import", trace, "--out", dir + "/w.json", "--steps", "4"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--steps: value 4"));
  fs::remove_all(dir);
}

TEST_CASE("another accelerator scales the measured kernels by the kernel model") {
  const std::string dir = temp_dir();
  (void)import_trace(kExampleTrace, dir);
  const std::string s = scenario(dir, "dgx-h100", 256);
  const auto h100 = simulate(s);
  const auto a100 = simulate(s, {"cluster=dgx-a100"});
  CHECK(a100["workload"]["scaled"] == true);
  CHECK_THAT(a100["workload"]["note"].get<std::string>(),
             Catch::Contains("from h100-sxm5, bf16, batch 256 to a100-sxm4-40gb, bf16, batch 256"));
  // The A100 has a third of the H100's bf16 peak (312 vs 989.5 TFLOP/s, datasheets) and 1.56
  // vs 3.35 TB/s: the GEMM-heavy step is slower, by less than the peak ratio (the host's share
  // stays as measured).
  const double ratio = a100["step_time_s"].get<double>() / h100["step_time_s"].get<double>();
  CHECK(ratio > 1.3);
  CHECK(ratio < 989.5 / 312);
  const auto text = run_cli({"simulate", s, "--set", "cluster=dgx-a100"});
  CHECK_THAT(text.out, Catch::Contains("workload             measured kernel times scaled"));
  // A doubled batch scales the kernels' work (twice the GEMM FLOPs, not twice the time).
  const auto big = simulate(s, {"batch_per_replica=512"});
  CHECK(big["workload"]["scaled"] == true);
  CHECK(big["step_time_s"].get<double>() > h100["step_time_s"].get<double>());
  CHECK(big["step_time_s"].get<double>() < 2 * h100["step_time_s"].get<double>());
  fs::remove_all(dir);
}

TEST_CASE(
    "data and pipeline parallelism run, and tensor parallelism without module names is refused") {
  const std::string dir = temp_dir();
  (void)import_trace(kExampleTrace, dir);
  const std::string s = scenario(dir, "dgx-h100", 256);
  const auto one = simulate(s);
  const auto dp = simulate(s, {"parallelism.data=8"});
  // Gradients: the four linear layers' weights and biases in fp32 (autocast keeps fp32 grads).
  CHECK(dp["gradient_bytes"].get<double>() == Approx(4.0 * (4096 * 4096 + 4096) * 4));
  CHECK(dp["step_time_s"].get<double>() > one["step_time_s"].get<double>());
  const auto pp = simulate(s, {"parallelism.data=1", "parallelism.pipeline=2",
                               "parallelism.microbatches=4", "parallelism.schedule=\"1f1b\""});
  CHECK(pp["pipeline"]["stages"] == 2);
  CHECK(pp["step_time_s"].get<double>() > 0);
  // The MLP's trace has no module names: no layer has a tensor-parallel role to split by.
  const auto tp = run_cli({"simulate", s, "--set", "parallelism.tensor=2"});
  CHECK(tp.exit_code == 2);
  CHECK_THAT(tp.err, Catch::Contains("parallelism.tensor"));
  CHECK_THAT(tp.err, Catch::Contains("no layer of it carries one"));
  fs::remove_all(dir);
}

namespace {

// The synthetic GPT-style decoder (scripts/make_kineto_trace.py --transformer): 2 blocks of
// d_model 1024 with 16 heads, 512 tokens, batch 8, vocabulary 32000, bf16 on an H100.
constexpr double kB = 8;
constexpr double kS = 512;
constexpr double kD = 1024;
const std::vector<std::string> kTransformer = {
    "--transformer", "--layers", "2", "--width", "1024", "--batch", "8", "--seq", "512"};

trainsim::models::Scenario load(const std::string& path, const std::vector<std::string>& sets) {
  static const trainsim::sim::ProfileLibrary profiles = trainsim::cli::load_profile_library({});
  return trainsim::models::load_scenario(nlohmann::json::parse(slurp(path)), path, sets, profiles);
}

}  // namespace

TEST_CASE("a transformer trace with module names imports with Megatron's tensor-parallel roles") {
  const std::string dir = temp_dir();
  const auto w = import_trace(make_trace(dir, kTransformer), dir);
  CHECK(w["batch"] == 8);  // the embedding's indices, not its table
  std::vector<std::string> roles;
  for (const auto& l : w["layers"])
    roles.push_back(l.value("tp", "replicated"));
  // Per block: LayerNorm, QKV (column), attention (split), projection (row), residual add,
  // LayerNorm, fc1 (column), GELU (split), fc2 (row), residual add.
  const std::vector<std::string> block = {"replicated", "column", "split", "row", "replicated",
                                          "replicated", "column", "split", "row", "replicated"};
  std::vector<std::string> expected = {"vocab"};  // the token embedding
  expected.insert(expected.end(), block.begin(), block.end());
  expected.insert(expected.end(), block.begin(), block.end());
  expected.insert(expected.end(), {"replicated", "vocab", "split"});  // norm, LM head, loss
  CHECK(roles == expected);
  CHECK(w["layers"][3]["heads"] == 16);  // the attention's [8, 16, 512, 64] inputs
  fs::remove_all(dir);
}

TEST_CASE("tensor parallelism of an imported transformer: split kernels, all-reduces, step") {
  using namespace trainsim;
  const std::string dir = temp_dir();
  const auto w = import_trace(make_trace(dir, kTransformer), dir);
  const std::string path = scenario(dir, "dgx-h100", 8);
  const models::Scenario s1 = load(path, {});
  const models::Scenario s2 = load(path, {"parallelism.tensor=2"});
  const models::ZooModel rank = models::shard_tensor_parallel(s2.model, 2, false, "test");
  REQUIRE(rank.layers.size() == s1.model.layers.size());

  // Megatron's all-reduces: forward after each row layer (2 per block), the embedding's output
  // and the cross entropy's three statistics; backward of each region's first column layer's
  // input gradient (2 per block) and of the LM head's. Each big one is a [512, 1024] bf16
  // activation per sample: 8 MiB for the batch of 8.
  int fwd = 0;
  int bwd = 0;
  for (const auto& l : rank.layers) {
    for (const auto& c : l.tp_fwd) {
      ++fwd;
      CHECK((c.elements_per_sample == kS * kD || c.elements_per_sample == kS));
    }
    for (const auto& c : l.tp_bwd) {
      ++bwd;
      CHECK(c.elements_per_sample * kB * 2 == 8.0 * 1024 * 1024);
    }
  }
  CHECK(fwd == 2 * 2 + 1 + 3);
  CHECK(bwd == 2 * 2 + 1);
  CHECK(rank.layers[4].tp_fwd.at(0).elements_per_sample * kB * 2 == 8.0 * 1024 * 1024);

  // The QKV GEMM (layer 2, [4096 tokens, 3072, 1024]) runs [4096, 1536, 1024] per rank: its
  // measured time times the kernel model's ratio of the two shapes on the H100.
  const models::Layer& qkv = s1.model.layers[2];
  const models::KernelSpec& g = qkv.fwd_kernels.at(0);
  REQUIRE(g.gemm.n == 3 * kD);
  sim::Kernel whole = models::instantiate(g, kB, sim::Dtype::bf16);
  sim::Kernel half = whole;
  half.flops /= 2;
  half.gemm.n /= 2;
  const auto footprint = [](const sim::GemmShape& v) { return v.m * v.k + v.k * v.n + v.m * v.n; };
  half.bytes *= footprint(half.gemm) / footprint(whole.gemm);
  const double ratio = sim::kernel_body_s(s1.cluster.accelerator, half) /
                       sim::kernel_body_s(s1.cluster.accelerator, whole);
  CHECK(ratio >= 0.5);  // a split GEMM never runs faster than its share of the work
  CHECK(ratio < 0.6);
  std::vector<models::Launch> one;
  std::vector<models::Launch> two;
  models::layer_launches(s1, qkv, models::Pass::forward, kB, one);
  models::layer_launches(s2, rank.layers[2], models::Pass::forward, kB, two);
  CHECK(one.at(0).device_s == Approx(g.measured_s + g.measured_gap_s));
  CHECK(two.at(0).device_s == Approx(g.measured_s * ratio + g.measured_gap_s));
  // Per-rank parameters: the split layers' halve (the norms' stay whole).
  CHECK(rank.layers[2].params == (3 * 1024 * 1024 + 3 * 1024) / 2);
  CHECK(rank.layers[4].params == 1024 * 1024 / 2 + 1024);  // the row layer's bias stays whole

  // The step: tp 1 round-trips; tp 2 on NVLink is faster and spends time in the all-reduces.
  const auto r1 = simulate(path);
  const auto r2 = simulate(path, {"parallelism.tensor=2"});
  const double measured = w["measured_step_s"].get<double>();
  INFO("measured " << measured << " s, tp 1 " << r1["step_time_s"] << " s, tp 2 "
                   << r2["step_time_s"]);
  CHECK(std::abs(r1["step_time_s"].get<double>() / measured - 1) < 0.05);
  CHECK(r2["step_time_s"].get<double>() < r1["step_time_s"].get<double>());
  CHECK(r2["breakdown_s"]["tp_comm"].get<double>() > 0);
  CHECK_THAT(r2["workload"]["note"].get<std::string>(),
             Catch::Contains("layers split over 2 tensor-parallel ranks"));
  CHECK(r1["breakdown_s"]["tp_comm"].get<double>() == 0);
  // 16 heads do not split over 32 ranks (Megatron-LM's rule, as for the zoo's models).
  const auto tp32 = run_cli({"simulate", path, "--set", "parallelism.tensor=32"});
  CHECK(tp32.exit_code == 2);
  CHECK_THAT(tp32.err, Catch::Contains("parallelism.tensor"));
  CHECK_THAT(tp32.err, Catch::Contains("its heads 16 is not divisible by tp=32"));
  // The zoo's GPT-2 at the same shapes, split by the zoo's own generator, runs the same
  // tensor-parallel collectives: the same time in them.
  const std::string zoo = dir + "/zoo.json";
  std::ofstream(zoo) << R"({"name": "zoo", "cluster": "dgx-h100", "model": {"name": "gpt2_medium",
    "n_layer": 2, "seq_len": 512, "vocab": 32000}, "precision": "bf16", "batch_per_replica": 8,
    "parallelism": {"data": 1, "tensor": 2}, "steps": 4, "warmup_steps": 1})";
  CHECK(simulate(zoo)["breakdown_s"]["tp_comm"].get<double>() ==
        Approx(r2["breakdown_s"]["tp_comm"].get<double>()).epsilon(1e-9));
  fs::remove_all(dir);
}

TEST_CASE("an imported workload runs in sweep and plan") {
  const std::string dir = temp_dir();
  (void)import_trace(kExampleTrace, dir);
  const std::string s = scenario(dir, "dgx-h100", 256);
  const auto sweep = run_cli({"sweep", s, "--vary", "parallelism.data=1,8", "--format", "csv"});
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  CHECK(std::count(sweep.out.begin(), sweep.out.end(), '\n') == 3);  // header + 2 rows
  const std::string catalog = dir + "/c.json";
  std::ofstream(catalog) << R"({"kind": "plan_catalog", "currency": "USD", "options": [
      {"name": "h100", "cluster": "dgx-h100-x4", "price_per_node_hour": 98.32, "max_nodes": 2}]})";
  std::ofstream(dir + "/g.json")
      << R"({"name": "imported", "cluster": "dgx-h100", "model": {"workload": "w.json"},
             "batch_per_replica": 256, "global_batch": 2048, "steps": 3, "warmup_steps": 1})";
  const auto plan = run_cli({"plan", dir + "/g.json", "--catalog", catalog, "--target",
                             "1000 samples/s", "--max-pipeline", "1", "--format", "json"});
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  const auto j = nlohmann::json::parse(plan.out);
  CHECK(j["simulated"].get<int>() > 0);
  CHECK_FALSE(j["cheapest_meeting_target"].is_null());
  fs::remove_all(dir);
}

TEST_CASE("a large trace is streamed in memory that follows the imported steps") {
  // 100 steps of 360 launches (32 MB of JSON): parsing it into a document would take several
  // times its size; the import keeps the steps it imports (the last 10) and a few numbers per
  // event of those, so its peak RSS stays below the file's size (bench/bench_import prints it).
  const std::string dir = temp_dir();
  const std::string trace = dir + "/big.json";
  const auto t = trainsim::test::write_large_kineto_trace(trace, 100, 360);
  CHECK(t.bytes > 30'000'000);
  const std::string out = dir + "/w.json";
  std::vector<std::string> words = {TRAINSIM_EXE, "import", trace, "--out", out};
  std::vector<char*> argv;
  for (auto& w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, TRAINSIM_EXE, &quiet, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&quiet);
  int status = 0;
  rusage usage{};
  REQUIRE(wait4(pid, &status, 0, &usage) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const auto w = nlohmann::json::parse(slurp(out));
  CHECK(w["steps"] == 10);
  CHECK(w["layers"].size() == 360);
#if !defined(__SANITIZE_ADDRESS__)
  const double rss_bytes = static_cast<double>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB
  INFO("peak RSS " << rss_bytes / 1e6 << " MB for a " << static_cast<double>(t.bytes) / 1e6
                   << " MB trace");
  CHECK(rss_bytes < static_cast<double>(t.bytes));
#endif
  fs::remove_all(dir);
}

TEST_CASE("the committed example workload is the import of the committed trace") {
  // examples/imported_mlp_64xh100.json runs examples/traces/mlp_h100_workload.json; regenerate it
  // with the command in that scenario's header when the import changes.
  const std::string dir = temp_dir();
  const auto w = import_trace(kExampleTrace, dir);
  const auto committed = nlohmann::json::parse(
      slurp(std::string(TRAINSIM_SOURCE_DIR) + "/examples/traces/mlp_h100_workload.json"));
  CHECK(w == committed);
  const auto r = simulate(std::string(TRAINSIM_SOURCE_DIR) + "/examples/imported_mlp_64xh100.json");
  CHECK(r["devices"] == 64);
  CHECK(r["data_parallel"] == 64);
  CHECK(r["breakdown_s"]["exposed_comm"].get<double>() > 0);
  fs::remove_all(dir);
}

TEST_CASE("kernel classes from kernel names, devices from CUDA device names") {
  using trainsim::models::guess_kernel_class;
  using K = trainsim::sim::KernelClass;
  // Names as cuBLAS, cuDNN, FlashAttention, PyTorch and NCCL kernels appear in Kineto traces.
  CHECK(guess_kernel_class("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn") ==
        K::gemm);
  CHECK(guess_kernel_class("sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwc") ==
        K::conv);
  CHECK(guess_kernel_class("void cudnn::winograd_nonfused::winogradForwardData4x4<float>") ==
        K::conv);
  CHECK(guess_kernel_class("flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>") ==
        K::attention);
  CHECK(guess_kernel_class("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel"
                           "<c10::BFloat16, float>") == K::normalization);
  CHECK(guess_kernel_class("void at::native::embedding_backward_feature_kernel<float>") ==
        K::scatter);
  CHECK(guess_kernel_class("void at::native::indexSelectLargeIndex<float, long>") == K::gather);
  CHECK(guess_kernel_class("Memcpy HtoD (Pageable -> Device)") == K::copy);
  CHECK(guess_kernel_class("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>") ==
        K::reduction);
  CHECK(guess_kernel_class("void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernel>") ==
        K::elementwise);
  CHECK(trainsim::models::is_collective_kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...)"));
  CHECK_FALSE(trainsim::models::is_collective_kernel("gemm_nccl_like"));
  using trainsim::cli::accelerator_for_device;
  CHECK(accelerator_for_device("NVIDIA A100-SXM4-80GB") == "a100-sxm4-80gb");
  CHECK(accelerator_for_device("NVIDIA A100-PCIE-40GB") == "a100-pcie-40gb");
  CHECK(accelerator_for_device("NVIDIA H100 PCIe") == "h100-pcie");
  CHECK(accelerator_for_device("Tesla V100-SXM2-32GB") == "v100-sxm2-32gb");
  CHECK(accelerator_for_device("NVIDIA L4") == "l4");
  CHECK(accelerator_for_device("NVIDIA L40S") == "l40s");
  CHECK(accelerator_for_device("AMD Instinct MI300X") == "mi300x");
  CHECK(accelerator_for_device("Acme GPU 9000").empty());
}

TEST_CASE("NCCL kernels are kept for the record with their sizes, not simulated") {
  const std::string dir = temp_dir();
  const std::string trace = dir + "/t.json";
  std::ofstream(trace) << R"T({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 4, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 30, "args": {"stream": 7, "correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 1, "tid": 1, "ts": 20, "dur": 4, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": 30, "dur": 50, "args": {"stream": 20, "correlation": 2, "Collective name": "allreduce", "In msg nelems": 1000000, "Out msg nelems": 1000000, "Group size": 8, "dtype": "BFloat16"}}
  ]})T";
  const auto w = import_trace(trace, dir);
  REQUIRE(w["collectives"].size() == 1);
  CHECK(w["collectives"][0]["bytes"] == 2e6);
  CHECK(w["collectives"][0]["stream"] == 20);
  REQUIRE(w["layers"].size() == 1);
  CHECK(w["layers"][0]["forward"].size() == 1);  // the GEMM only
  fs::remove_all(dir);
}
