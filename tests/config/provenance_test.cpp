// Provenance of profile values: the comment grammar of sim/config/provenance.hpp rule by rule,
// every value of every built-in profile sourced, and what `profiles show` and `simulate` print.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/profiles_source.hpp"
#include "sim/config/provenance.hpp"
#include "support/profile_library.hpp"
#include "sweep/cli_support.hpp"

using trainsim::sim::parse_provenance;
using trainsim::sim::parse_source;
using trainsim::sim::ProfileProvenance;
using trainsim::sim::ProvenanceKind;
using trainsim::test::library;
using trainsim::test::run_cli;

namespace {

// The kind of `path`; fails the test when the parser found no such value.
ProvenanceKind kind_of(const ProfileProvenance& p, const std::string& path) {
  const auto* found = p.find(path);
  INFO(path);
  REQUIRE(found != nullptr);
  return found->kind;
}

std::string citation_of(const ProfileProvenance& p, const std::string& path) {
  const auto* found = p.find(path);
  INFO(path);
  REQUIRE(found != nullptr);
  return found->citation;
}

nlohmann::json simulate_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"simulate", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

bool contains(const nlohmann::json& list, const std::string& s) {
  for (const auto& v : list) {
    if (v == s) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a source is a comment that starts with its kind") {
  const auto d = parse_source("  datasheet: NVIDIA A100 datasheet (2021): 2039 GB/s");
  REQUIRE(d);
  CHECK(d->kind == ProvenanceKind::datasheet);
  CHECK(d->citation == "NVIDIA A100 datasheet (2021): 2039 GB/s");
  CHECK(parse_source("paper: arXiv:2307.08691")->kind == ProvenanceKind::paper);
  CHECK(parse_source("measured: forum thread")->kind == ProvenanceKind::measured);
  CHECK(parse_source("estimate: a guess")->kind == ProvenanceKind::estimate);
  const auto c = parse_source("calibrated on deepbench_gemm (calibration half, rows 't4 '): 0.8");
  REQUIRE(c);
  CHECK(c->kind == ProvenanceKind::calibrated);
  CHECK(c->table == "deepbench_gemm");
  CHECK(c->citation == "deepbench_gemm (calibration half, rows 't4 '): 0.8");
  CHECK(parse_source("calibrated on lambda_dp_scaling_fp32: x")->table == "lambda_dp_scaling_fp32");
  // Not a kind: free text, a kind word without its colon, another case, a table-less calibration.
  CHECK_FALSE(parse_source("NVIDIA A100 datasheet (2021)"));
  CHECK_FALSE(parse_source("estimate from the forum"));
  CHECK_FALSE(parse_source("Datasheet: x"));
  CHECK_FALSE(parse_source("calibrated on "));
}

TEST_CASE("an inline comment applies to the value on its line") {
  const auto p = parse_provenance(R"({
  "kind": "link",
  "bandwidth": "100 Gb/s",   // datasheet: IEEE 802.3ba
  "latency": "3 us",         // estimate: one switch hop
  "efficiency": 0.9
})");
  REQUIRE(p.leaves.size() == 3);  // kind is a name, not a number
  CHECK(p.leaves[0].path == "bandwidth");
  CHECK(kind_of(p, "bandwidth") == ProvenanceKind::datasheet);
  CHECK(citation_of(p, "bandwidth") == "IEEE 802.3ba");
  CHECK(kind_of(p, "latency") == ProvenanceKind::estimate);
  CHECK(kind_of(p, "efficiency") == ProvenanceKind::unsourced);
  CHECK(p.problems.empty());
}

TEST_CASE("an inline comment after a one-line object applies to all its values") {
  const auto p = parse_provenance(R"({
  "gemm_tile": {"m": 128, "n": 128, "half": 0.85},  // paper: CUTLASS GemmShape<128, 128, 32>
  "k_half": 64
})");
  CHECK(kind_of(p, "gemm_tile.m") == ProvenanceKind::paper);
  CHECK(kind_of(p, "gemm_tile.n") == ProvenanceKind::paper);
  CHECK(kind_of(p, "gemm_tile.half") == ProvenanceKind::paper);
  CHECK(kind_of(p, "k_half") == ProvenanceKind::unsourced);
}

TEST_CASE("an inline comment where an object opens applies to that object") {
  const auto p = parse_provenance(R"({
  "peak_flops": {   // datasheet: T4 datasheet (2018)
    "fp32": "8.1 TFLOP/s",
    "fp16": "65 TFLOP/s"
  },
  "compute_units": 40
})");
  CHECK(kind_of(p, "peak_flops.fp32") == ProvenanceKind::datasheet);
  CHECK(kind_of(p, "peak_flops.fp16") == ProvenanceKind::datasheet);
  CHECK(kind_of(p, "compute_units") == ProvenanceKind::unsourced);
}

TEST_CASE("a comment line below an inline comment, in its column, continues it") {
  const auto p = parse_provenance(R"({
  "efficiency": 0.767,  // measured: NVIDIA/nccl-tests#149: ~20 GB/s
                        // of a 25 GB/s link
  "latency": "1 us"
})");
  CHECK(citation_of(p, "efficiency") == "NVIDIA/nccl-tests#149: ~20 GB/s of a 25 GB/s link");
  // The continuation is not a block for the next key.
  CHECK(kind_of(p, "latency") == ProvenanceKind::unsourced);
}

TEST_CASE("a comment block applies to the next key, its values inherit it") {
  const auto p = parse_provenance(R"({
  "description": "x",
  // Dense rates: notes before the source are not part of it.
  // datasheet: NVIDIA A100 Tensor Core GPU datasheet (2021):
  // starred figures are with sparsity
  "peak_flops": {
    "fp32": "19.5 TFLOP/s",
    "fp16": "312 TFLOP/s"  // estimate: half the sparse rate
  },
  "memory_capacity": "80 GiB"
})");
  CHECK(kind_of(p, "peak_flops.fp32") == ProvenanceKind::datasheet);
  CHECK(citation_of(p, "peak_flops.fp32") ==
        "NVIDIA A100 Tensor Core GPU datasheet (2021): starred figures are with sparsity");
  // A value's own source beats its enclosing key's.
  CHECK(kind_of(p, "peak_flops.fp16") == ProvenanceKind::estimate);
  // A block applies to the next key only.
  CHECK(kind_of(p, "memory_capacity") == ProvenanceKind::unsourced);
}

TEST_CASE("a PATH line applies to that path relative to the object the comment is in") {
  const auto p = parse_provenance(R"({
  // gemm_tile.half_tile_throughput: estimate: a half-area tile loses operand reuse
  // paper: CUTLASS default tile
  "gemm_tile": {"m": 128, "n": 128, "half_tile_throughput": 0.85},
  "compute": {
    // gemm.fp32: estimate: SGEMM on CUDA cores
    // gemm.fp16: calibrated on deepbench_gemm (calibration half, rows 'v100 fp16'): 0.66 ->
    // 0.8334
    "gemm": {"fp32": 0.869, "fp16": 0.833},  // datasheet: the object's own source
    "conv": {"fp32": 0.5}  // conv.fp32: measured: inline PATH line
  }
})");
  CHECK(kind_of(p, "gemm_tile.half_tile_throughput") == ProvenanceKind::estimate);
  CHECK(kind_of(p, "gemm_tile.m") == ProvenanceKind::paper);
  CHECK(kind_of(p, "compute.gemm.fp32") == ProvenanceKind::estimate);
  // The continuation of a PATH line extends its citation.
  const auto* fp16 = p.find("compute.gemm.fp16");
  REQUIRE(fp16 != nullptr);
  CHECK(fp16->kind == ProvenanceKind::calibrated);
  CHECK(fp16->table == "deepbench_gemm");
  CHECK(fp16->citation == "deepbench_gemm (calibration half, rows 'v100 fp16'): 0.66 -> 0.8334");
  CHECK(kind_of(p, "compute.conv.fp32") == ProvenanceKind::measured);
  CHECK(p.problems.empty());
}

TEST_CASE("on one key a PATH line beats an inline comment, which beats a block") {
  const auto p = parse_provenance(R"({
  // paper: block
  "a": 1,  // measured: inline
  // o.x: estimate: path line
  // datasheet: block
  "o": {"x": 1, "y": 2},  // measured: inline
  // datasheet: block only
  "b": 2
})");
  CHECK(kind_of(p, "a") == ProvenanceKind::measured);
  CHECK(kind_of(p, "o.x") == ProvenanceKind::estimate);
  CHECK(kind_of(p, "o.y") == ProvenanceKind::measured);
  CHECK(kind_of(p, "b") == ProvenanceKind::datasheet);
  CHECK(p.problems.empty());
}

TEST_CASE("a PATH line that names no value is reported") {
  const auto p = parse_provenance(R"({
  "compute": {
    // gemm.fp61: estimate: a typo
    "gemm": {"fp16": 0.8}
  }
})");
  CHECK(kind_of(p, "compute.gemm.fp16") == ProvenanceKind::unsourced);
  REQUIRE(p.problems.size() == 1);
  CHECK(p.problems[0] == "line 3: gemm.fp61 names no value");
}

TEST_CASE("numbers, quantities and lists of numbers are values; names and flags are not") {
  const auto p = parse_provenance(R"({
  "kind": "cluster", "name": "c", "description": "8 x GPUs",
  "nodes": 4, "p2p": true, "link": "nvlink3", "bucket": "25 MB", "share": "80%",
  "dims": [2, 2], "protocols": ["LL", "Simple"], "nothing": null, "neg": -1.5e3
})");
  std::set<std::string> paths;
  for (const auto& l : p.leaves)
    paths.insert(l.path);
  CHECK(paths == std::set<std::string>{"nodes", "bucket", "share", "dims", "neg"});
}

TEST_CASE("a second source in one block is reported, the first counts") {
  const auto p = parse_provenance(R"({
  // datasheet: one
  // estimate: two
  "a": 1
})");
  CHECK(kind_of(p, "a") == ProvenanceKind::datasheet);
  REQUIRE(p.problems.size() == 1);
  CHECK(p.problems[0].find("a second source for a") != std::string::npos);
}

TEST_CASE("the header calibrate --out writes makes the fitted values calibrated") {
  // As cli/calibrate_report.cpp writes it: the header, then the document without comments.
  const auto p = parse_provenance(
      "// Calibrated by `trainsim calibrate scenario.json measured.csv` from "
      "hw_profiles/kernels/nvidia-volta.json:\n"
      "//   with --set batch_per_replica=64\n"
      "//   compute.gemm.fp32: 0.85 -> 0.8695 (stderr 0.012, 95% CI [0.845, 0.894])\n"
      "// fitted to 6 measured throughputs; RMS relative error 12.3% -> 2.1%.\n"
      "// Calibrated values are in SI base units; the sources of the other values are in the "
      "original.\n"
      "{\n  \"compute\": {\n    \"gemm\": {\n      \"fp16\": 0.833,\n      \"fp32\": 0.8695\n    "
      "}\n"
      "  },\n  \"k_half\": 9.7\n}\n");
  CHECK(p.calibrate_header);
  const auto* fp32 = p.find("compute.gemm.fp32");
  REQUIRE(fp32 != nullptr);
  CHECK(fp32->kind == ProvenanceKind::calibrated);
  CHECK(fp32->table == "measured.csv");
  CHECK(fp32->citation.find("0.85 -> 0.8695") != std::string::npos);
  CHECK(kind_of(p, "compute.gemm.fp16") == ProvenanceKind::unsourced);
  CHECK(kind_of(p, "k_half") == ProvenanceKind::unsourced);
  CHECK(p.problems.empty());
}

TEST_CASE("a profile from --profile-dir keeps the sources of the built-in values it leaves alone") {
  const auto& builtin = library().find("nvidia-volta", "kernels", "test");
  nlohmann::json doc = builtin.json;
  doc["compute"]["gemm"]["fp32"] = 0.5;  // fitted
  doc["k_half"] = 11;                    // changed without a source
  const std::filesystem::path dir = trainsim::test::fresh_dir("provenance");
  std::filesystem::create_directories(dir / "kernels");
  {
    std::ofstream out(dir / "kernels" / "nvidia-volta.json");
    out << "// Calibrated by `trainsim calibrate s.json m.csv` from "
           "hw_profiles/kernels/nvidia-volta.json:\n"
        << "//   compute.gemm.fp32: 0.8695 -> 0.5 (stderr 0.01, 95% CI [0.48, 0.52])\n"
        << doc.dump(2) << "\n";
  }
  const auto lib = trainsim::cli::load_profile_library({dir.string()});
  std::filesystem::remove_all(dir);
  const auto& p = lib.find("nvidia-volta", "kernels", "test").provenance;
  CHECK(kind_of(p, "compute.gemm.fp32") == ProvenanceKind::calibrated);
  CHECK(p.find("compute.gemm.fp32")->table == "m.csv");
  CHECK(kind_of(p, "k_half") == ProvenanceKind::unsourced);
  // Unchanged values keep the built-in profile's sources.
  for (const char* path : {"memory.copy", "compute.conv.fp16", "gemm_tile.m"}) {
    CHECK(kind_of(p, path) == builtin.provenance.find(path)->kind);
    CHECK(citation_of(p, path) == builtin.provenance.find(path)->citation);
  }
}

TEST_CASE("every value of every built-in profile has a source") {
  std::map<ProvenanceKind, int> counts;
  for (const auto* e : library().list()) {
    INFO(e->origin);
    CHECK(e->provenance.problems.empty());
    CHECK_FALSE(e->provenance.leaves.empty());
    for (const auto& leaf : e->provenance.leaves) {
      INFO(leaf.path);
      CHECK(leaf.provenance.kind != ProvenanceKind::unsourced);
      CHECK_FALSE(leaf.provenance.citation.empty());
      ++counts[leaf.provenance.kind];
      // Sources a reader cannot look up.
      static const std::regex unlookable(
          R"(\b(the brief|this pass|this session|issue \d+|recalled|re-checked|re-read)\b)",
          std::regex::icase);
      CHECK_FALSE(std::regex_search(leaf.provenance.citation, unlookable));
      if (leaf.provenance.kind == ProvenanceKind::calibrated) {
        // A calibration names the `trainsim validate` table it was fitted on.
        static const std::set<std::string> tables = {
            "deepbench_gemm",         "deepbench_conv",
            "deepbench_lstm",         "dle_training_throughput",
            "h200_kernels",           "h200_training",
            "lambda_dp_scaling_fp32", "megatron",
            "mxnet_k80_m60_batch",    "nccl_allreduce_16xH100_2node_a3mega",
            "rccl_allreduce_8xMI300X"};
        CHECK(tables.contains(leaf.provenance.table));
      }
    }
  }
  // Every kind is in use (the numbers per kind are in the README's provenance paragraph).
  for (auto k : {ProvenanceKind::datasheet, ProvenanceKind::paper, ProvenanceKind::measured,
                 ProvenanceKind::calibrated, ProvenanceKind::estimate})
    CHECK(counts[k] > 0);
}

TEST_CASE("profiles show ends with the source of every value and the count of estimates") {
  const auto& e = library().find("nvidia-ampere-ga100", "kernels", "test");
  int estimates = 0;
  for (const auto& l : e.provenance.leaves)
    estimates += l.provenance.kind == ProvenanceKind::estimate;
  const auto r = run_cli({"profiles", "show", "nvidia-ampere-ga100"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("  sources:\n") != std::string::npos);
  CHECK(std::regex_search(
      r.out, std::regex(R"(\n    compute\.conv\.tf32 +calibrated +lambda_dp_scaling_fp32 \()")));
  CHECK(std::regex_search(r.out, std::regex(R"(\n    k_half +estimate +the main loop)")));
  CHECK(r.out.find("\n  " + std::to_string(estimates) + " of " +
                   std::to_string(e.provenance.leaves.size()) + " values are estimates (") !=
        std::string::npos);
}

TEST_CASE("profiles show states a kernels profile's tile rules") {
  const auto r = run_cli({"profiles", "show", "nvidia-hopper"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("  convolution tiles: a half-area tile runs at 0.746 of the rate\n") !=
        std::string::npos);
  CHECK(r.out.find("  convolution tiles on matrix units: at least 64 tall on GEMM_M (a weight "
                   "gradient's filters)\n") != std::string::npos);
  const auto volta = run_cli({"profiles", "show", "nvidia-volta"});
  REQUIRE(volta.exit_code == 0);
  CHECK(volta.out.find("  convolution tiles on matrix units: at least 128 tall on GEMM_M") !=
        std::string::npos);
  const auto ampere = run_cli({"profiles", "show", "nvidia-ampere-ga100"});
  REQUIRE(ampere.exit_code == 0);
  CHECK(ampere.out.find("convolution tiles on matrix units") == std::string::npos);
}

TEST_CASE("simulate counts the parameters behind the result and names the estimates") {
  const auto j = simulate_json({"--set", "steps=3", "--set", "warmup_steps=1"});
  const auto& p = j["provenance"];
  const int n = p["parameters"];
  // Every value of the profiles the demo uses, and 14 entries of the kernels profile: the tile
  // (3), k_half, compute.conv.fp16 and compute.gemm.fp16 (the classifier), memory.copy and the
  // memory efficiency of the 7 other classes ResNet-50's step runs (elementwise, normalization,
  // pooling, softmax and gather of the loss, reduction of bias gradients, optimizer).
  std::size_t expected = 14;
  for (const auto& [kind, name] :
       std::vector<std::pair<std::string, std::string>>{{"cluster", "dgx-a100"},
                                                        {"accelerator", "a100-sxm4-40gb"},
                                                        {"host", "dual-epyc-7742"},
                                                        {"link", "nvlink3"},
                                                        {"link", "pcie4-x16"},
                                                        {"framework", "pytorch_eager"}})
    expected += library().find(name, kind, "test").provenance.leaves.size();
  CHECK(n == static_cast<int>(expected));
  CHECK(p["estimates"].get<int>() + p["calibrated"].get<int>() + p["sourced"].get<int>() +
            p["unsourced"].get<int>() ==
        n);
  CHECK(p["unsourced"] == 0);
  CHECK(p["estimate_paths"].size() == p["estimates"].get<std::size_t>());
  // The demo (ResNet-50, fp16, 8-way data parallel) runs convolutions, not attention or
  // embeddings, and compresses nothing: only the kernels entries it uses count.
  const auto& est = p["estimate_paths"];
  CHECK(contains(est, "kernels/nvidia-ampere-ga100:compute.conv.fp16"));
  CHECK(contains(est, "kernels/nvidia-ampere-ga100:memory.normalization"));
  CHECK_FALSE(contains(est, "kernels/nvidia-ampere-ga100:compute.conv.fp32"));
  CHECK_FALSE(contains(est, "kernels/nvidia-ampere-ga100:compute.depthwise_conv.fp16"));
  CHECK_FALSE(contains(est, "kernels/nvidia-ampere-ga100:memory.scatter"));
  CHECK_FALSE(contains(est, "kernels/nvidia-ampere-ga100:memory.topk"));
  CHECK(contains(est, "accelerator/a100-sxm4-40gb:kernel_launch_overhead"));
  CHECK(contains(est, "framework/pytorch_eager:host.backward_per_kernel"));

  // Top-k compression adds the selection and scatter kernels; a value set with --set is the
  // user's, not a parameter.
  const auto k = simulate_json({"--set", "communication.compression=topk", "--set",
                                "cluster.node.accelerator.kernel_launch_overhead=4 us", "--set",
                                "steps=3", "--set", "warmup_steps=1"});
  const auto& kp = k["provenance"];
  CHECK(contains(kp["estimate_paths"], "kernels/nvidia-ampere-ga100:memory.topk"));
  CHECK(contains(kp["estimate_paths"], "kernels/nvidia-ampere-ga100:memory.scatter"));
  CHECK_FALSE(contains(kp["estimate_paths"], "accelerator/a100-sxm4-40gb:kernel_launch_overhead"));
  CHECK(kp["parameters"].get<int>() == n + 2 - 1);
}

TEST_CASE("the simulate text report ends with the estimates line, the CSV has the counts") {
  const auto j = simulate_json({"--set", "steps=3", "--set", "warmup_steps=1"});
  const std::string n = j["provenance"]["parameters"].dump();
  const std::string est = j["provenance"]["estimates"].dump();
  const auto text = run_cli({"simulate", "--set", "steps=3", "--set", "warmup_steps=1"});
  REQUIRE(text.exit_code == 0);
  const auto last = text.out.rfind("\n  ", text.out.size() - 2);
  REQUIRE(last != std::string::npos);
  CHECK(text.out.substr(last + 3).rfind(
            est + " of the " + n + " parameters behind this result are estimates: ", 0) == 0);
  CHECK(text.out.find(", ...\n") != std::string::npos);  // truncated after 8 names
  const auto csv =
      run_cli({"simulate", "--format", "csv", "--set", "steps=3", "--set", "warmup_steps=1"});
  REQUIRE(csv.exit_code == 0);
  const auto newline = csv.out.find('\n');
  const std::string header = csv.out.substr(0, newline);
  const std::string row = csv.out.substr(newline + 1);
  CHECK(header.size() > 40);
  CHECK(header.substr(header.size() - 42) == "provenance.parameters,provenance.estimates");
  CHECK(row.substr(row.size() - n.size() - est.size() - 2) == n + "," + est + "\n");
}
