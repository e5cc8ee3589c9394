// On a contention-free star (every rank has its own uplink and downlink, the switch never
// blocks) the simulated times equal the alpha-beta closed forms, with a = route latency and
// b = 1 / bottleneck bandwidth; reduction kernels off, as the closed forms have none.

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_forms.hpp"
#include "sim/collectives/collective.hpp"
#include "support/profile_library.hpp"

using namespace trainsim::sim;
using namespace trainsim::sim::collectives;
using trainsim::test::rel;

namespace {

LinkSpec link(double bw, double lat) {
  LinkSpec s;
  s.name = "l";
  s.bw_bytes_per_s = bw;
  s.latency_s = lat;
  return s;
}

// star-1gbe's shape: accelerator - host (PCIe) - NIC (PCIe) - switch (1 Gb/s Ethernet).
ClusterSpec star(int nodes) {
  ClusterSpec c;
  c.name = "star";
  c.nodes = nodes;
  c.accelerators_per_node = 1;
  c.accelerator.name = "acc";
  c.accelerator.peak_flops_per_s[0] = 1e13;
  c.accelerator.memory_bw_bytes_per_s = 5e11;
  c.host_link = link(1.6e10, 2e-6);
  c.intra_link = c.host_link;
  c.p2p = false;
  c.inter_topology = InterTopology::star;
  c.inter_link = link(1.25e8, 50e-6);
  return c;
}

constexpr double kA = 2 * (2e-6 + 2e-6 + 50e-6);  // acc-host, host-nic, nic-switch, both ends
constexpr double kB = 1 / 1.25e8;

CollectiveResult run(int p, Algorithm alg, double bytes, bool exact, double density = 0.001) {
  CollectiveSpec s;
  s.algorithm = alg;
  s.bytes = bytes;
  s.density = density;
  s.exact = exact;
  s.model = exact ? Model::exact : Model::aggregated;
  s.charge_kernels = false;
  return run_collective(star(p), s);
}

const std::vector<int> kRanks{2,   3,   5,   7,   8,   12,  16,  31,   33,  64,
                              100, 127, 128, 255, 256, 500, 512, 1000, 1024};

}  // namespace

TEST_CASE("ring allreduce equals 2(P-1)a + 2(P-1)/P m b for P = 2..1024") {
  const double m = 64.0 * 1024 * 1024;
  for (int p : kRanks) {
    const double want = closed_form::ring_allreduce_s(p, m, kA, kB);
    INFO("P = " << p);
    CHECK(rel(run(p, Algorithm::ring, m, false).time_s, want) < 1e-9);
    if (p <= 256 || p == 1024) CHECK(rel(run(p, Algorithm::ring, m, true).time_s, want) < 1e-9);
  }
}

TEST_CASE("halving-doubling allreduce equals its closed form, powers of two or not") {
  const double m = 8.0 * 1024 * 1024;
  for (int p : kRanks) {
    const double want = closed_form::halving_doubling_allreduce_s(p, m, kA, kB);
    INFO("P = " << p);
    CHECK(rel(run(p, Algorithm::halving_doubling, m, false).time_s, want) < 1e-9);
    CHECK(rel(run(p, Algorithm::halving_doubling, m, true).time_s, want) < 1e-9);
  }
}

TEST_CASE("Top-k S-SGD equals a log2P + 2(P-1)k b (AllGather of values and indices)") {
  const double m = 100e6;  // 25 M fp32 gradients
  const double density = 0.001;
  const double k = static_cast<double>(topk_count(m, density, Dtype::fp32));
  CHECK(k == 25000);
  for (int p : kRanks) {
    const double want = closed_form::topk_allgather_s(p, k, 4, kA, kB);
    INFO("P = " << p);
    CHECK(rel(run(p, Algorithm::topk, m, false, density).time_s, want) < 1e-9);
    CHECK(rel(run(p, Algorithm::topk, m, true, density).time_s, want) < 1e-9);
  }
}

TEST_CASE("gTop-k equals the paper's 2a log2P + 4k b log2P (tree reduce, then broadcast)") {
  const double m = 100e6;
  const double k = static_cast<double>(topk_count(m, 0.001, Dtype::fp32));
  for (int p : kRanks) {
    const double want = closed_form::gtopk_allreduce_s(p, k, 4, kA, kB);
    INFO("P = " << p);
    CHECK(rel(run(p, Algorithm::gtopk, m, false).time_s, want) < 1e-9);
    CHECK(rel(run(p, Algorithm::gtopk, m, true).time_s, want) < 1e-9);
  }
}

TEST_CASE("algbw and busbw follow nccl-tests conventions") {
  const double m = 1e8;
  const CollectiveResult r = run(16, Algorithm::ring, m, true);
  CHECK(r.algbw_bytes_per_s == Approx(m / r.time_s).epsilon(1e-12));
  CHECK(r.busbw_bytes_per_s == Approx(r.algbw_bytes_per_s * 2 * 15 / 16).epsilon(1e-12));
  CHECK(busbw_factor(Op::allgather, 8) == Approx(7.0 / 8));
  CHECK(busbw_factor(Op::broadcast, 8) == 1);
  // Every byte a ring allreduce moves crosses one uplink and one downlink: 2(P-1)/P m per rank.
  double total = 0;
  for (const auto& l : r.link_bytes)
    total += l.bytes;
  CHECK(r.links_used == 16 * 3);  // acc-host, host-nic, nic-switch per node
  CHECK(r.link_bytes.front().bytes == Approx(2 * 2.0 * 15 / 16 * m).epsilon(1e-9));
  CHECK(total > 0);
}
