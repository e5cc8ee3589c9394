// Runs the same flows on the same platform in trainsim and in SimGrid 3.32 (CM02 model, factors 1,
// no TCP-gamma cap, no cross-traffic) and requires completion times to agree to 1e-6 relative.
// SimGrid's engine is a process-wide singleton, so each platform runs in a forked child that sends
// its completion times back through a pipe.
#if defined(TRAINSIM_HAVE_SIMGRID)

#include <catch2/catch.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/engine.hpp"
#include "sim/hw/specs.hpp"
#include "sim/net/cluster_topology.hpp"
#include "sim/net/flow_network.hpp"
#include "support/link_specs.hpp"
#include "tests/support/forked_child.hpp"
#include "tests/support/simgrid_platform.hpp"

using namespace trainsim::sim;
using trainsim::test::link_spec;
namespace sg4 = simgrid::s4u;

namespace {

struct Transfer {
  VertexId src, dst;
  std::uint64_t bytes;
  double start_s;
};

std::string numbered(const char* prefix, int i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

std::vector<double> run_trainsim(const Topology& topo, const std::vector<Transfer>& transfers) {
  Engine engine;
  FlowNetwork net(engine, topo);
  std::vector<double> done(transfers.size(), -1);
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    engine.at(Time::from_seconds(transfers[i].start_s), [&net, &transfers, &done, &engine, i] {
      const Transfer& t = transfers[i];
      net.start_flow(t.src, t.dst, static_cast<double>(t.bytes),
                     [&done, &engine, i] { done[i] = engine.now().seconds(); });
    });
  }
  engine.run();
  return done;
}

// In the child: one actor per transfer on SimGrid's copy of the platform.
[[noreturn]] void simgrid_child(const Topology& topo, std::vector<Transfer> transfers, int out_fd) {
  trainsim::testing::SimgridPlatform platform(topo, "trainsim-simgrid-compare");
  for (const Transfer& t : transfers)
    platform.add_route(t.src, t.dst);
  std::vector<double> done(transfers.size(), -1);
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    sg4::Actor::create(numbered("t", static_cast<int>(i)), platform.host(transfers[i].src), [&, i] {
      sg4::this_actor::sleep_until(transfers[i].start_s);
      sg4::Comm::sendto(platform.host(transfers[i].src), platform.host(transfers[i].dst),
                        transfers[i].bytes);
      done[i] = sg4::Engine::get_clock();
    });
  }
  platform.run();
  trainsim::testing::write_numbers_and_exit(out_fd, done);
}

std::vector<double> run_simgrid(const Topology& topo, const std::vector<Transfer>& transfers) {
  return trainsim::testing::numbers_from_forked_child(
      [&](int fd) { simgrid_child(topo, transfers, fd); });
}

// Compares both simulators; returns the largest relative difference.
double compare(const Topology& topo, const std::vector<Transfer>& transfers) {
  const auto ours = run_trainsim(topo, transfers);
  const auto theirs = run_simgrid(topo, transfers);
  REQUIRE(theirs.size() == ours.size());
  double worst = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    INFO("transfer " << i << ": trainsim " << ours[i] << " s, SimGrid " << theirs[i] << " s");
    REQUIRE(ours[i] > 0);
    const double rel = std::abs(ours[i] - theirs[i]) / theirs[i];
    CHECK(rel <= 1e-6);
    worst = std::max(worst, rel);
  }
  return worst;
}

std::vector<Transfer> random_transfers(const std::vector<VertexId>& endpoints, int count,
                                       std::uint64_t seed, double max_start_s, double min_bytes,
                                       double max_bytes) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, endpoints.size() - 1);
  std::uniform_real_distribution<double> log_bytes(std::log(min_bytes), std::log(max_bytes));
  std::uniform_real_distribution<double> start(0, max_start_s);
  std::vector<Transfer> out;
  while (static_cast<int>(out.size()) < count) {
    const VertexId a = endpoints[pick(rng)], b = endpoints[pick(rng)];
    if (a == b) continue;
    // Start times on a 1 us grid, so both simulators see them exactly.
    out.push_back({a, b, static_cast<std::uint64_t>(std::exp(log_bytes(rng))),
                   std::round(start(rng) * 1e6) / 1e6});
  }
  return out;
}

}  // namespace

TEST_CASE("SimGrid agreement: dumbbell with a shared bottleneck, both directions") {
  Topology topo;
  const auto r1 = topo.add_vertex({VertexKind::network_switch, "r1"});
  const auto r2 = topo.add_vertex({VertexKind::network_switch, "r2"});
  topo.add_link(r1, r2, 1.25e8, 200e-6, Duplex::full);
  std::vector<VertexId> ends;
  for (int i = 0; i < 8; ++i) {
    const auto h = topo.add_vertex({VertexKind::host, numbered("h", i)});
    topo.add_link(h, i < 4 ? r1 : r2, 1.25e8 * (1 + i % 3), 10e-6 * (1 + i), Duplex::full);
    ends.push_back(h);
  }
  const double worst = compare(topo, random_transfers(ends, 40, 1, 0.2, 1e5, 2e7));
  WARN("dumbbell: max relative difference " << worst);
}

TEST_CASE("SimGrid agreement: half-duplex chain shared by both directions") {
  Topology topo;
  std::vector<VertexId> v;
  for (int i = 0; i < 5; ++i)
    v.push_back(topo.add_vertex({VertexKind::host, numbered("v", i)}));
  for (int i = 0; i < 4; ++i)
    topo.add_link(v[i], v[i + 1], 1e8 * (i + 1), 25e-6 * (4 - i),
                  i % 2 ? Duplex::half : Duplex::full);
  const double worst = compare(topo, random_transfers(v, 40, 2, 0.1, 1e4, 1e7));
  WARN("half-duplex chain: max relative difference " << worst);
}

TEST_CASE("SimGrid agreement: 2-level fat tree, 8 nodes x 2 accelerators, NVSwitch-like nodes") {
  ClusterSpec spec;
  spec.name = "fat";
  spec.nodes = 8;
  spec.accelerators_per_node = 2;
  spec.intra_topology = IntraTopology::switched;
  spec.intra_link = link_spec(3e11, 1e-6);
  spec.host_link = link_spec(3.2e10, 2e-6);
  spec.inter_topology = InterTopology::fat_tree;
  spec.inter_link = link_spec(1.25e10, 5e-6);
  spec.nics_per_node = 2;
  spec.leaf_switch_ports = 2;
  spec.oversubscription = 2;
  const ClusterTopology c = build_cluster_topology(spec);
  std::vector<VertexId> ends = c.accelerators;
  ends.insert(ends.end(), c.hosts.begin(), c.hosts.end());
  const double worst = compare(c.topology, random_transfers(ends, 60, 3, 0.01, 1e6, 1e9));
  WARN("fat tree: max relative difference " << worst);
}

TEST_CASE("SimGrid agreement: 3x3 torus of nodes, multi-hop routes of unequal latency") {
  ClusterSpec spec;
  spec.name = "torus";
  spec.nodes = 9;
  spec.accelerators_per_node = 1;
  spec.host_link = link_spec(1.6e10, 1e-6);
  spec.inter_topology = InterTopology::torus2d;
  spec.inter_dims = {3, 3};
  spec.inter_link = link_spec(5e9, 3e-6);
  const ClusterTopology c = build_cluster_topology(spec);
  const double worst = compare(c.topology, random_transfers(c.accelerators, 50, 4, 0.02, 1e6, 2e8));
  WARN("torus: max relative difference " << worst);
}

TEST_CASE("SimGrid agreement: nodes without P2P (traffic crosses the host) on an inter-node ring") {
  ClusterSpec spec;
  spec.name = "nop2p";
  spec.nodes = 4;
  spec.accelerators_per_node = 4;
  spec.p2p = false;
  spec.host_link = link_spec(1.2e10, 5e-6, Duplex::full);
  spec.inter_topology = InterTopology::ring;
  spec.inter_link = link_spec(1.25e9, 20e-6, Duplex::half);
  const ClusterTopology c = build_cluster_topology(spec);
  const double worst = compare(c.topology, random_transfers(c.accelerators, 50, 5, 0.05, 1e5, 1e8));
  WARN("no-P2P ring: max relative difference " << worst);
}

TEST_CASE("SimGrid agreement: ring allreduce steps on a star (synchronised contention)") {
  ClusterSpec spec;
  spec.name = "star";
  spec.nodes = 16;
  spec.accelerators_per_node = 1;
  spec.host_link = link_spec(1.6e10, 1e-6);
  spec.inter_topology = InterTopology::star;
  spec.inter_link = link_spec(1.25e8, 50e-6);
  const ClusterTopology c = build_cluster_topology(spec);
  std::vector<Transfer> transfers;
  // Every rank sends to its right neighbour and to the rank 5 further at once: two flows per
  // uplink and per downlink, all with equal routes.
  for (int step = 0; step < 3; ++step) {
    for (int r = 0; r < 16; ++r) {
      transfers.push_back({c.accelerator(r), c.accelerator((r + 1) % 16), 1'000'000, 0.05 * step});
      transfers.push_back({c.accelerator(r), c.accelerator((r + 5) % 16), 3'000'000, 0.05 * step});
    }
  }
  const double worst = compare(c.topology, transfers);
  WARN("star: max relative difference " << worst);
}

#endif  // TRAINSIM_HAVE_SIMGRID
