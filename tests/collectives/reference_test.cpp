// Agreement of the phase-aggregated model with the message-level run, and of the simulated
// MI300X ring allreduce with published rccl-tests measurements.

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/profiles_source.hpp"
#include "sim/collectives/collective.hpp"

using namespace trainsim::sim;
using namespace trainsim::sim::collectives;

namespace {

ClusterSpec profile(const std::string& name) {
  return trainsim::cli::load_profile_library({}).cluster(name, "test");
}

CollectiveResult run(const ClusterSpec& c, Algorithm alg, double bytes, Model model,
                     int ranks = 0) {
  CollectiveSpec s;
  s.algorithm = alg;
  s.bytes = bytes;
  s.model = model;
  s.exact = model == Model::exact;
  s.ranks = ranks;
  return run_collective(c, s);
}

double rel(double x, double y) {
  return std::abs(x - y) / std::abs(y);
}

}  // namespace

TEST_CASE("aggregated and message-level runs agree on star-1gbe up to 1024 ranks (kernels on)") {
  ClusterSpec c = profile("star-1gbe");
  c.nodes = 1024;
  for (Algorithm alg :
       {Algorithm::ring, Algorithm::halving_doubling, Algorithm::hierarchical, Algorithm::topk,
        Algorithm::gtopk, Algorithm::tree, Algorithm::double_binary_tree}) {
    for (int p : {2, 6, 64, 100, 1024}) {
      if (p == 1024 && alg != Algorithm::ring && alg != Algorithm::halving_doubling) continue;
      const double m = 32.0 * 1024 * 1024;
      const double exact = run(c, alg, m, Model::exact, p).time_s;
      const double agg = run(c, alg, m, Model::aggregated, p).time_s;
      INFO(algorithm_name(alg) << " P = " << p << ": exact " << exact << " s, aggregated " << agg
                               << " s");
      // Pipelined trees are not alike in every phase (leaves idle, inner nodes receive twice):
      // bulk-synchronous phases then cost up to ~0.5% more than the dataflow run.
      const bool tree = alg == Algorithm::tree || alg == Algorithm::double_binary_tree;
      CHECK(rel(agg, exact) < (tree ? 1e-2 : 1e-9));
      CHECK(agg >= exact * (1 - 1e-9));
    }
  }
}

TEST_CASE("aggregated model on 8-GPU nodes behind a star agrees with the message-level run") {
  ClusterSpec c = profile("dgx-a100-x4");
  c.inter_topology = InterTopology::star;  // the aggregated model needs a star fabric
  for (Algorithm alg : {Algorithm::ring, Algorithm::hierarchical, Algorithm::halving_doubling}) {
    const double exact = run(c, alg, 256.0 * 1024 * 1024, Model::exact).time_s;
    const double agg = run(c, alg, 256.0 * 1024 * 1024, Model::aggregated).time_s;
    INFO(algorithm_name(alg) << ": exact " << exact << " s, aggregated " << agg << " s");
    CHECK(rel(agg, exact) < 1e-6);
  }
}

TEST_CASE("the automatic choice aggregates large runs: 65,536 ranks of star-1gbe") {
  ClusterSpec c = profile("star-1gbe");
  c.nodes = 65536;
  CollectiveSpec s;
  s.bytes = 64.0 * 1024 * 1024;
  const CollectiveResult r = run_collective(c, s);
  CHECK(r.aggregated);
  CHECK(r.ranks == 65536);
  // Without kernels the ring is exactly 2(P-1)(a + m/P b): a kernel-free rerun checks it.
  s.charge_kernels = false;
  const CollectiveResult bare = run_collective(c, s);
  const double b = 8 / 1e9;  // 1 Gb/s
  CHECK(bare.time_s > 2.0 * 65535 * (s.bytes / 65536 * b));
  CHECK(r.time_s >= bare.time_s);
}

TEST_CASE("8 x MI300X ring allreduce vs rccl-tests (ROCm docs), profile numbers not fitted") {
  const ClusterSpec c = profile("mi300x-8");
  std::ifstream in(std::string(TRAINSIM_REFERENCE_DATA_DIR) +
                   "/rccl_allreduce_1node_8xMI300X_rocm_docs.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  double worst_large = 0, worst_small = 0;
  int rows = 0;
  while (std::getline(in, line)) {
    // The first field is quoted and contains commas: split after its closing quote.
    const std::size_t q = line.find('"', 1);
    std::stringstream ss(line.substr(q + 2));
    std::vector<std::string> f;
    for (std::string x; std::getline(ss, x, ',');)
      f.push_back(x);
    const double bytes = std::stod(f[1]);
    const double time_us = std::stod(f[6]);
    const double busbw = std::stod(f[8]);
    const CollectiveResult r = run(c, Algorithm::ring, bytes, Model::automatic);
    ++rows;
    if (bytes >= 64.0 * 1024 * 1024) {
      const double e = rel(r.busbw_bytes_per_s / 1e9, busbw);
      WARN("size " << bytes << " B: simulated busbw " << r.busbw_bytes_per_s / 1e9
                   << " GB/s, measured " << busbw << " GB/s (" << 100 * e << "% off)");
      worst_large = std::max(worst_large, e);
    } else if (bytes <= 64.0 * 1024) {
      worst_small = std::max(worst_small, rel(r.time_s * 1e6, time_us));
    }
  }
  CHECK(rows == 31);
  WARN("bandwidth regime (>= 64 MiB): worst busbw error "
       << 100 * worst_large << "%; latency regime (<= 64 KiB): "
       << "worst time error " << 100 * worst_small << "%");
  // Stated closeness: 4 stride rings on 4 of the 7 xGMI links per GPU give at most 256 GB/s of
  // busbw where RCCL reaches 317 (measured 18-26% below); small messages: 2 x 7 x 1.5 us + one
  // 5 us launch = 26 us vs measured 34-45 us (xGMI latency is an estimate in the profile).
  CHECK(worst_large < 0.30);
  CHECK(worst_small < 0.60);
}
