#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "sim/core/engine.hpp"
#include "sim/net/flow_network.hpp"

using namespace trainsim::sim;

namespace {

// Appended, not `"v" + to_string(i)`: GCC 12 reports a false -Wrestrict on that.
std::string vname(int i) {
  std::string s("v");
  s += std::to_string(i);
  return s;
}

struct Line {
  Topology topo;
  std::vector<VertexId> v;
  // A chain of `links` identical links between links + 1 vertices.
  Line(int links, double bw, double lat, Duplex duplex = Duplex::full) {
    for (int i = 0; i <= links; ++i)
      v.push_back(topo.add_vertex({VertexKind::host, vname(i)}));
    for (int i = 0; i < links; ++i)
      topo.add_link(v[i], v[i + 1], bw, lat, duplex);
  }
};

// Runs flows (src, dst, bytes, start) and returns each one's completion time in seconds.
struct FlowSpec {
  VertexId src, dst;
  double bytes;
  Time start;
};
std::vector<Time> run_flows(const Topology& topo, const std::vector<FlowSpec>& flows,
                            FlowNetwork::Sharing sharing = FlowNetwork::Sharing::latency_weighted) {
  Engine engine;
  FlowNetwork net(engine, topo, {sharing});
  std::vector<Time> done(flows.size(), Time::max());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    engine.at(flows[i].start, [&net, &flows, &done, i, &engine] {
      net.start_flow(flows[i].src, flows[i].dst, flows[i].bytes,
                     [&done, &engine, i] { done[i] = engine.now(); });
    });
  }
  engine.run();
  return done;
}

Time secs(double s) {
  return Time::from_seconds(s);
}

}  // namespace

TEST_CASE("one flow takes latency + size / bandwidth") {
  Line line(1, 1e9, 10e-6);
  const auto done = run_flows(line.topo, {{line.v[0], line.v[1], 1e6, Time::zero()}});
  CHECK(done[0] == Time::us(10) + Time::ms(1));
  // Multi-hop: latencies add, the bandwidth is the route's.
  Line three(3, 1e9, 10e-6);
  const auto d3 = run_flows(three.topo, {{three.v[0], three.v[3], 1e6, Time::ms(2)}});
  CHECK(d3[0] == Time::ms(2) + Time::us(30) + Time::ms(1));
}

TEST_CASE("N flows on one link each get bw / N") {
  Line line(1, 1e9, 5e-6);
  for (int n : {1, 2, 3, 7, 64}) {
    std::vector<FlowSpec> flows(static_cast<std::size_t>(n),
                                FlowSpec{line.v[0], line.v[1], 1e6, Time::zero()});
    const auto done = run_flows(line.topo, flows);
    for (const Time t : done)
      CHECK(t.seconds() == Approx(5e-6 + n * 1e-3).epsilon(1e-12));
  }
}

TEST_CASE("a flow speeds up when a competitor ends") {
  Line line(1, 1e9, 0);
  const auto done = run_flows(line.topo, {{line.v[0], line.v[1], 1e6, Time::zero()},
                                          {line.v[0], line.v[1], 2e6, Time::zero()},
                                          {line.v[0], line.v[1], 1e6, Time::ms(3)}});
  CHECK(done[0] == Time::ms(2));  // half of 1e9 B/s
  CHECK(done[1] == Time::ms(3));  // 1e6 left at t=2 ms, then alone
  CHECK(done[2] == Time::ms(4));  // starts alone at 3 ms
}

TEST_CASE("full duplex carries both directions at full rate; half duplex shares") {
  Line full(1, 1e9, 1e-6, Duplex::full);
  auto done = run_flows(full.topo, {{full.v[0], full.v[1], 1e6, Time::zero()},
                                    {full.v[1], full.v[0], 1e6, Time::zero()}});
  CHECK(done[0] == Time::us(1001));
  CHECK(done[1] == Time::us(1001));
  Line half(1, 1e9, 1e-6, Duplex::half);
  done = run_flows(half.topo, {{half.v[0], half.v[1], 1e6, Time::zero()},
                               {half.v[1], half.v[0], 1e6, Time::zero()}});
  CHECK(done[0] == Time::us(2001));
  CHECK(done[1] == Time::us(2001));
}

TEST_CASE("textbook max-min: a 3-link line with one long flow and three one-hop flows") {
  // Plain max-min: every link is shared by the long flow and one short flow -> C/2 each.
  // CM02 weights by 1/route latency: long 1/(3l), short 1/l, so on each link the level is
  // C / (1/(3l) + 1/l) and the long flow gets C/4, each short flow 3C/4.
  const double c = 1e9, l = 1e-3, bytes = 1e6;
  Line line(3, c, l);
  std::vector<FlowSpec> flows{{line.v[0], line.v[3], bytes, Time::zero()},
                              {line.v[0], line.v[1], bytes, Time::zero()},
                              {line.v[1], line.v[2], bytes, Time::zero()},
                              {line.v[2], line.v[3], bytes, Time::zero()}};
  {
    Engine engine;
    FlowNetwork net(engine, line.topo, {FlowNetwork::Sharing::equal});
    std::vector<FlowId> ids;
    for (const auto& f : flows)
      ids.push_back(net.start_flow(f.src, f.dst, 1e3 * f.bytes, [] {}));
    engine.run_until(Time::ms(3) + Time::us(1));  // every latency paid
    for (const FlowId id : ids)
      CHECK(net.rate_bytes_per_s(id) == Approx(c / 2).epsilon(1e-12));
  }
  {
    Engine engine;
    FlowNetwork net(engine, line.topo);
    std::vector<FlowId> ids;
    for (const auto& f : flows)
      ids.push_back(net.start_flow(f.src, f.dst, 1e3 * f.bytes, [] {}));
    engine.run_until(Time::ms(3) + Time::us(1));
    CHECK(net.rate_bytes_per_s(ids[0]) == Approx(c / 4).epsilon(1e-12));
    for (int i = 1; i < 4; ++i)
      CHECK(net.rate_bytes_per_s(ids[i]) == Approx(3 * c / 4).epsilon(1e-12));
  }
  // Completion times, plain max-min: short flows are alone on their link during [l, 3l) at C,
  // then share with the long flow at C/2.
  const auto done = run_flows(line.topo, flows, FlowNetwork::Sharing::equal);
  // short: 2l at rate C moves 2e6 > 1e6 bytes: done at l + bytes/C = 2 ms.
  CHECK(done[1] == Time::ms(2));
  // long: starts flowing at 3 ms, all shorts gone: 3 ms + 1 ms.
  CHECK(done[0] == Time::ms(4));
}

TEST_CASE("progressive filling with two bottleneck levels") {
  // v0 -L1(1 GB/s)- v1 -L2(2 GB/s)- v2; flow A over both, B over L1, C over L2 (plain max-min):
  // L1 saturates first at 0.5 GB/s for A and B; C gets the 1.5 GB/s left on L2.
  Topology topo;
  const auto v0 = topo.add_vertex({VertexKind::host, "v0"});
  const auto v1 = topo.add_vertex({VertexKind::host, "v1"});
  const auto v2 = topo.add_vertex({VertexKind::host, "v2"});
  topo.add_link(v0, v1, 1e9, 0, Duplex::full);
  topo.add_link(v1, v2, 2e9, 0, Duplex::full);
  Engine engine;
  FlowNetwork net(engine, topo, {FlowNetwork::Sharing::equal});
  const FlowId a = net.start_flow(v0, v2, 1e9, [] {});
  const FlowId b = net.start_flow(v0, v1, 1e9, [] {});
  const FlowId c = net.start_flow(v1, v2, 1e9, [] {});
  engine.run_until(Time::ns(1));
  CHECK(net.rate_bytes_per_s(a) == Approx(0.5e9));
  CHECK(net.rate_bytes_per_s(b) == Approx(0.5e9));
  CHECK(net.rate_bytes_per_s(c) == Approx(1.5e9));
  engine.run();
  CHECK(net.stats().flows_completed == 3);
  CHECK(net.link_bytes(0, true) == 2e9);
  CHECK(net.link_bytes(0, false) == 0);
  CHECK(net.link_bytes(1) == 2e9);
}

TEST_CASE("zero bytes pay latency only; src == dst completes at once") {
  Line line(2, 1e9, 7e-6);
  const auto done = run_flows(line.topo, {{line.v[0], line.v[2], 0, Time::us(1)},
                                          {line.v[1], line.v[1], 1e6, Time::us(3)}});
  CHECK(done[0] == Time::us(15));
  CHECK(done[1] == Time::us(3));
}

TEST_CASE("completion callbacks can start flows; one pending network event") {
  Line line(1, 1e9, 1e-6);
  Engine engine;
  FlowNetwork net(engine, line.topo);
  int remaining = 100;
  struct Chain {
    FlowNetwork* net;
    VertexId a, b;
    int* remaining;
    void operator()() const {
      if (--*remaining > 0) net->start_flow(a, b, 1e3, Chain{*this});
    }
  };
  for (int i = 0; i < 10; ++i)
    net.start_flow(line.v[0], line.v[1], 1e3, Chain{&net, line.v[0], line.v[1], &remaining});
  CHECK(engine.pending() == 1);
  engine.run();
  CHECK(net.stats().flows_started == 109);
  CHECK(net.stats().flows_active == 0);
  CHECK(net.stats().peak_flows_active == 10);
}

TEST_CASE("same inputs give bit-identical completion times") {
  // Random flows over a random-ish mesh with mixed duplex and latencies, twice.
  Topology topo;
  std::mt19937_64 rng(42);
  std::vector<VertexId> v;
  for (int i = 0; i < 12; ++i)
    v.push_back(topo.add_vertex({VertexKind::host, vname(i)}));
  std::uniform_real_distribution<double> bw(1e8, 1e10), lat(0, 1e-4);
  for (int i = 0; i < 12; ++i) {
    topo.add_link(v[i], v[(i + 1) % 12], bw(rng), lat(rng),
                  i % 3 == 0 ? Duplex::half : Duplex::full);
    if (i % 4 == 0) topo.add_link(v[i], v[(i + 5) % 12], bw(rng), lat(rng), Duplex::full);
  }
  std::vector<FlowSpec> flows;
  std::uniform_int_distribution<int> pick(0, 11);
  std::uniform_real_distribution<double> size(1e3, 1e8), start(0, 0.1);
  for (int i = 0; i < 300; ++i) {
    const int a = pick(rng), b = (a + 1 + pick(rng) % 11) % 12;
    flows.push_back({v[a], v[b], std::round(size(rng)), secs(start(rng))});
  }
  const auto first = run_flows(topo, flows);
  const auto second = run_flows(topo, flows);
  CHECK(first == second);
  for (const Time t : first)
    CHECK(t < Time::max());
}

TEST_CASE("start_flow rejects bad sizes") {
  Line line(1, 1e9, 0);
  Engine engine;
  FlowNetwork net(engine, line.topo);
  CHECK_THROWS_AS(net.start_flow(line.v[0], line.v[1], -1, [] {}), std::invalid_argument);
  CHECK_THROWS_AS(net.start_flow(line.v[0], line.v[1], std::nan(""), [] {}), std::invalid_argument);
}
