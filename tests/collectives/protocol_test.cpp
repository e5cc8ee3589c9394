// NCCL/RCCL structure: protocol parameters from the libraries' tuning tables, protocols chosen
// by size, channels on disjoint links and NIC rails, in-network reduction where the fabric has it.

#include <catch2/catch.hpp>

#include <set>

#include "cli/profiles_source.hpp"
#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/protocol.hpp"
#include "support/profile_library.hpp"

using namespace trainsim::sim;
using namespace trainsim::sim::collectives;
using trainsim::test::profile;

namespace {

CollectiveResult allreduce(const ClusterSpec& c, double bytes, Algorithm a = Algorithm::automatic,
                           std::optional<Protocol> p = std::nullopt) {
  CollectiveSpec s;
  s.algorithm = a;
  s.protocol = p;
  s.bytes = bytes;
  return run_collective(c, s);
}

}  // namespace

TEST_CASE("protocol parameters are NCCL's tuning table on an A100 node") {
  const ClusterSpec c = profile("dgx-a100");
  const ProtocolParams ll = protocol_params(c, AlgoFamily::ring, Protocol::ll, 1, 24);
  CHECK(ll.base_latency_s == Approx(6.6e-6));
  CHECK(ll.step_latency_s[0] == Approx(0.6e-6));  // NVLink
  CHECK(ll.wire_efficiency == 0.5);
  CHECK(ll.channel_cap_bytes_per_s == Approx(87.7e9 / 24));  // llMaxBw, Ampere, one node
  const ProtocolParams ll128 = protocol_params(c, AlgoFamily::ring, Protocol::ll128, 1, 24);
  CHECK(ll128.wire_efficiency == Approx(120.0 / 128));
  CHECK(ll128.channel_cap_bytes_per_s == Approx(20e9));
  const ProtocolParams simple = protocol_params(c, AlgoFamily::ring, Protocol::simple, 2, 24);
  CHECK(simple.step_latency_s[2] == Approx(14e-6));                                       // network
  CHECK(simple.step_latency_s[0] == Approx(3.4e-6));                                      // NVLink
  CHECK(protocol_enabled(c, AlgoFamily::ring, Protocol::ll128));                          // NVLink
  CHECK_FALSE(protocol_enabled(profile("mi300x-8"), AlgoFamily::ring, Protocol::ll128));  // RCCL
  CHECK_FALSE(protocol_enabled(c, AlgoFamily::nvls, Protocol::simple));  // A100: no NVLS
  CHECK_THROWS(protocol_params(profile("star-1gbe"), AlgoFamily::ring, Protocol::ll, 1, 1));
}

TEST_CASE("small allreduces run LL, large ones Simple; latency and bandwidth regimes") {
  const ClusterSpec c = profile("dgx-a100");
  const CollectiveResult small = allreduce(c, 8, Algorithm::ring);
  CHECK(small.protocol == "LL");
  // 8 B: NCCL's ring LL base 6.6 us + 14 steps of 0.6 us (tuning.cc).
  CHECK(small.time_s == Approx(6.6e-6 + 14 * 0.6e-6).epsilon(1e-3));
  const CollectiveResult large = allreduce(c, 4.0 * 1024 * 1024 * 1024, Algorithm::ring);
  CHECK(large.protocol == "Simple");
  // NVLink3's 230 GB/s effective (NVIDIA/nccl-tests#149) bounds a ring's busbw.
  CHECK(large.busbw_bytes_per_s / 1e9 == Approx(230).epsilon(0.02));
  // Forcing LL on a large message halves the wire efficiency and hits LL's 87.7 GB/s cap.
  CHECK(allreduce(c, 256.0 * 1024 * 1024, Algorithm::ring, Protocol::ll).busbw_bytes_per_s < 90e9);
}

TEST_CASE("H100 node: ring at NVLink's 370 GB/s effective, NVLS at the maintainers' ~480") {
  const ClusterSpec c = profile("dgx-h100");
  const double big = 8.0 * 1024 * 1024 * 1024;
  // NVIDIA/nccl-tests#212 (sjeaugey): ring ~370 GB/s busbw, NVLS ~480 GB/s on 8 GPUs.
  CHECK(allreduce(c, big, Algorithm::ring).busbw_bytes_per_s / 1e9 == Approx(370).epsilon(0.02));
  const CollectiveResult nvls = allreduce(c, big);
  CHECK(nvls.algorithm == Algorithm::nvls);
  CHECK(nvls.busbw_bytes_per_s / 1e9 == Approx(480).epsilon(0.03));
}

TEST_CASE("fully connected 8-GPU node: 7 rings on disjoint xGMI links use all 56 of them") {
  const std::vector<std::vector<int>> rings = disjoint_rings(8);
  REQUIRE(rings.size() == 7);
  std::set<std::pair<int, int>> arcs;
  for (const auto& r : rings) {
    REQUIRE(r.size() == 8);
    CHECK(std::set<int>(r.begin(), r.end()).size() == 8);
    for (std::size_t i = 0; i < r.size(); ++i)
      arcs.emplace(r[i], r[(i + 1) % r.size()]);
  }
  CHECK(arcs.size() == 56);
  // Every xGMI link carries the ring traffic: the 28 links, both directions.
  const CollectiveResult r = allreduce(profile("mi300x-8"), 1024.0 * 1024 * 1024, Algorithm::ring);
  CHECK(r.links_used == 28);
  CHECK(r.channels % 7 == 0);
}

TEST_CASE("multi-node rings cross nodes on every NIC rail, not through one NIC") {
  // 16 x H100 on 2 nodes with 8 NDR rails: ring busbw is bounded by the 8 NICs (each ring crosses
  // twice per node pair), not by one NIC's 50 GB/s.
  ClusterSpec c = profile("dgx-h100-x4");
  c.nodes = 2;
  const CollectiveResult r = allreduce(c, 8.0 * 1024 * 1024 * 1024, Algorithm::ring);
  int nic_links = 0;
  for (const auto& l : r.link_bytes)
    nic_links += l.name.find(".nic") != std::string::npos ? 1 : 0;
  CHECK(nic_links == 16);  // every GPU's NIC, on both nodes
  // The 8 rails carry the crossings (8 x 47 GB/s), NVLink its 370 GB/s effective less the PXN
  // hop each crossing takes inside the node: about 330 GB/s of busbw, not one NIC's 50.
  CHECK(r.busbw_bytes_per_s / 1e9 > 300);
  CHECK(r.busbw_bytes_per_s / 1e9 < 376);
  // NCCL's tree sends each node's data across once per direction; hierarchical pipelines its
  // intra reduce-scatter, inter allreduce and intra allgather: both beat the flat ring.
  const CollectiveResult tree =
      allreduce(c, 8.0 * 1024 * 1024 * 1024, Algorithm::double_binary_tree);
  const CollectiveResult hier = allreduce(c, 8.0 * 1024 * 1024 * 1024, Algorithm::hierarchical);
  CHECK(tree.busbw_bytes_per_s > 1.15 * r.busbw_bytes_per_s);
  CHECK(hier.busbw_bytes_per_s > 1.15 * r.busbw_bytes_per_s);
}

TEST_CASE("SHARP where the fabric has it, refused where it does not") {
  ClusterSpec c = profile("dgx-a100-x4");
  CHECK_THROWS(allreduce(c, 1e8, Algorithm::collnet));
  c.collectives.sharp = true;
  const CollectiveResult sharp = allreduce(c, 1e9, Algorithm::collnet);
  const CollectiveResult ring = allreduce(c, 1e9, Algorithm::ring);
  // In-network reduction: each rank's shard crosses the network once each way.
  CHECK(sharp.time_s < ring.time_s);
}

TEST_CASE("all-to-all: every rank sends 1/P to every other at once") {
  const ClusterSpec c = profile("dgx-h100");
  CollectiveSpec s;
  s.op = Op::alltoall;
  s.bytes = 1024.0 * 1024 * 1024;
  const CollectiveResult r = run_collective(c, s);
  CHECK(r.flows == 8 * 7);
  // Each GPU sends 7/8 of its buffer over its NVLink uplink at 370 GB/s effective.
  CHECK(r.busbw_bytes_per_s / 1e9 == Approx(370).epsilon(0.03));
}
