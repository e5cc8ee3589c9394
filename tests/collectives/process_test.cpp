// Collectives as processes on an engine and a flow network owned by the caller (how the step
// simulator runs them): one alone takes what run_collective says; two at once on one network
// contend for its links and take longer.

#include <catch2/catch.hpp>

#include "cli/profiles_source.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/process.hpp"
#include "sim/core/engine.hpp"
#include "sim/net/cluster_layout.hpp"
#include "sim/net/cluster_topology.hpp"
#include "sim/net/flow_network.hpp"
#include "support/profile_library.hpp"

using namespace trainsim::sim;
using namespace trainsim::sim::collectives;
using trainsim::test::profile;

namespace {

CollectiveSpec allreduce(double bytes, std::vector<int> group = {}) {
  CollectiveSpec s;
  s.algorithm = Algorithm::ring;
  s.protocol = Protocol::simple;
  s.bytes = bytes;
  s.exact = true;
  s.group = std::move(group);
  return s;
}

}  // namespace

TEST_CASE("a collective process on a shared engine takes what run_collective takes") {
  const ClusterSpec c = profile("dgx-h100-x4");
  const ClusterLayout layout(c);
  const ClusterTopology topo = build_cluster_topology(c);
  Engine engine;
  FlowNetwork net(engine, topo.topology);
  const CollectiveSpec spec = allreduce(64.0 * 1024 * 1024);
  CollectiveProcess p(engine, net, layout, plan_collective(c, spec));
  // Started at 1 ms: the process measures from its own start.
  bool done = false;
  engine.at(Time::from_seconds(1e-3), [&] { p.start([&] { done = true; }); });
  engine.run();
  REQUIRE(done);
  CHECK(p.finished());
  CHECK(p.start_time() == Time::from_seconds(1e-3));
  CHECK(p.duration_s() == Approx(run_collective(c, spec).time_s).epsilon(1e-9));
}

TEST_CASE("two concurrent allreduces on one network contend: each takes longer than alone") {
  const ClusterSpec c = profile("dgx-h100-x4");
  const ClusterLayout layout(c);
  const ClusterTopology topo = build_cluster_topology(c);
  // Two allreduces over the same 32 ranks (e.g. two gradient buckets in flight) share every
  // link of their rings.
  const CollectiveSpec a = allreduce(256.0 * 1024 * 1024);
  const double alone = run_collective(c, a).time_s;
  Engine engine;
  FlowNetwork net(engine, topo.topology);
  CollectiveProcess first(engine, net, layout, plan_collective(c, a));
  CollectiveProcess second(engine, net, layout, plan_collective(c, a));
  int done = 0;
  first.start([&] { ++done; });
  second.start([&] { ++done; });
  engine.run();
  REQUIRE(done == 2);
  INFO("alone " << alone << " s, concurrent " << first.duration_s() << " and "
                << second.duration_s() << " s");
  // Sharing every link, each gets about half the bandwidth: the bandwidth part doubles, the
  // latency part does not (measured 1.64x for 256 MiB on 32 ranks).
  CHECK(first.duration_s() > 1.5 * alone);
  CHECK(second.duration_s() > 1.5 * alone);
  CHECK(std::max(first.duration_s(), second.duration_s()) < 2.1 * alone);
}

TEST_CASE("collectives of disjoint groups on disjoint links do not slow each other") {
  const ClusterSpec c = profile("dgx-h100");
  const ClusterLayout layout(c);
  const ClusterTopology topo = build_cluster_topology(c);
  const CollectiveSpec left = allreduce(64.0 * 1024 * 1024, {0, 1, 2, 3});
  const CollectiveSpec right = allreduce(64.0 * 1024 * 1024, {4, 5, 6, 7});
  Engine engine;
  FlowNetwork net(engine, topo.topology);
  CollectiveProcess a(engine, net, layout, plan_collective(c, left));
  CollectiveProcess b(engine, net, layout, plan_collective(c, right));
  a.start({});
  b.start({});
  engine.run();
  CHECK(a.duration_s() == Approx(run_collective(c, left).time_s).epsilon(1e-9));
  CHECK(b.duration_s() == Approx(a.duration_s()).epsilon(1e-9));
}
