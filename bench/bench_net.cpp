// Ring allreduce on a star, simulated by trainsim's flow network and by SimGrid (CM02): prints both
// wall times, both simulated completion times, their relative difference and ratio= (SimGrid wall
// / trainsim wall).
//
// Scenario: P hosts, each on a 1 Gb/s full-duplex link of 50 us latency to one non-blocking
// switch. Reduce-scatter + allgather: 2(P-1) steps; in each step every rank sends B/P bytes to its
// right neighbour, and a rank starts step s+1 when the step-s message from its left neighbour
// has arrived.
//
//   bench_net [--nodes N] [--bytes B]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sim/core/engine.hpp"
#include "sim/net/flow_network.hpp"
#include "tests/support/simgrid_cm02_args.hpp"

#if defined(TRAINSIM_HAVE_SIMGRID)
#include <simgrid/s4u.hpp>
#endif

namespace {

using namespace trainsim::sim;

constexpr double kLinkBwBytesPerS = 1e9 / 8;  // 1 Gb/s
constexpr double kLinkLatencyS = 50e-6;

struct Scenario {
  int nodes = 512;
  std::uint64_t bytes = 100'000'000;
  std::uint64_t chunk_bytes() const { return bytes / static_cast<std::uint64_t>(nodes); }
  int steps() const { return 2 * (nodes - 1); }
};

struct RunResult {
  double sim_s = 0;
  double wall_s = 0;
};

std::string numbered(const char* prefix, int i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

// trainsim: one flow per (rank, step); the arrival of (r, s) at r+1 starts (r+1, s+1).
struct Ring {
  Engine* engine;
  FlowNetwork* net;
  std::vector<const Route*> to_right;  // rank -> route to its right neighbour
  double chunk_bytes;
  int nodes;
  int steps;
  Time finish;
};

struct Arrived {
  Ring* ring;
  int sender;
  int step;
  void operator()() const {
    const int receiver = (sender + 1) % ring->nodes;
    if (step + 1 < ring->steps) {
      ring->net->start_flow(*ring->to_right[static_cast<std::size_t>(receiver)], ring->chunk_bytes,
                            Arrived{ring, receiver, step + 1});
    } else {
      ring->finish = std::max(ring->finish, ring->engine->now());
    }
  }
};

RunResult run_trainsim(const Scenario& sc) {
  const auto t0 = std::chrono::steady_clock::now();
  Topology topo;
  const VertexId sw = topo.add_vertex({VertexKind::network_switch, "switch"});
  std::vector<VertexId> hosts;
  for (int i = 0; i < sc.nodes; ++i) {
    hosts.push_back(topo.add_vertex({VertexKind::host, numbered("h", i)}));
    topo.add_link(hosts.back(), sw, kLinkBwBytesPerS, kLinkLatencyS, Duplex::full);
  }
  Engine engine;
  FlowNetwork net(engine, topo);
  Ring ring{&engine,  &net,       {},          static_cast<double>(sc.chunk_bytes()),
            sc.nodes, sc.steps(), Time::zero()};
  for (int r = 0; r < sc.nodes; ++r)
    ring.to_right.push_back(&net.router().route(hosts[r], hosts[(r + 1) % sc.nodes]));
  for (int r = 0; r < sc.nodes; ++r)
    net.start_flow(*ring.to_right[static_cast<std::size_t>(r)], ring.chunk_bytes,
                   Arrived{&ring, r, 0});
  engine.run();
  RunResult out;
  out.sim_s = ring.finish.seconds();
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("trainsim: flows=%llu network_events=%llu engine_events=%llu flows_resolved=%llu\n",
              static_cast<unsigned long long>(net.stats().flows_started),
              static_cast<unsigned long long>(net.stats().events),
              static_cast<unsigned long long>(engine.stats().events_executed),
              static_cast<unsigned long long>(net.stats().flows_resolved));
  return out;
}

#if defined(TRAINSIM_HAVE_SIMGRID)
RunResult run_simgrid(const Scenario& sc, int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> args = trainsim::testing::simgrid_cm02_args(argv[0]);
  (void)argc;
  std::vector<char*> sg_argv;
  for (auto& a : args)
    sg_argv.push_back(a.data());
  int sg_argc = static_cast<int>(sg_argv.size());
  namespace sg4 = simgrid::s4u;
  sg4::Engine e(&sg_argc, sg_argv.data());
  auto* zone = sg4::create_full_zone("star");
  std::vector<sg4::Host*> hosts;
  std::vector<sg4::Link*> links;
  for (int i = 0; i < sc.nodes; ++i) {
    hosts.push_back(zone->create_host(numbered("h", i), 1e9));
    links.push_back(zone->create_split_duplex_link(numbered("l", i), kLinkBwBytesPerS)
                        ->set_latency(kLinkLatencyS)
                        ->seal());
  }
  // The switch is non-blocking: a route is the sender's uplink then the receiver's downlink.
  for (int i = 0; i < sc.nodes; ++i) {
    const int j = (i + 1) % sc.nodes;
    zone->add_route(hosts[i]->get_netpoint(), hosts[j]->get_netpoint(), nullptr, nullptr,
                    {sg4::LinkInRoute(links[i], sg4::LinkInRoute::Direction::UP),
                     sg4::LinkInRoute(links[j], sg4::LinkInRoute::Direction::DOWN)},
                    false);
  }
  zone->seal();
  std::vector<sg4::Mailbox*> boxes;
  for (int i = 0; i < sc.nodes; ++i)
    boxes.push_back(sg4::Mailbox::by_name(numbered("mb", i)));
  static int token = 0;
  double finish = 0;
  for (int r = 0; r < sc.nodes; ++r) {
    sg4::Actor::create(numbered("rank", r), hosts[r], [&, r] {
      sg4::Mailbox* mine = boxes[r];
      sg4::Mailbox* right = boxes[(r + 1) % sc.nodes];
      // A permanent receiver makes sends start at once instead of waiting for a matching get.
      mine->set_receiver(sg4::Actor::self());
      for (int s = 0; s < sc.steps(); ++s) {
        right->put_init(&token, sc.chunk_bytes())->detach();
        mine->get<int>();
      }
      finish = std::max(finish, sg4::Engine::get_clock());
      mine->set_receiver(nullptr);
    });
  }
  e.run();
  RunResult out;
  out.sim_s = finish;
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Scenario sc;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--nodes") == 0 && has_value) {
      sc.nodes = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--bytes") == 0 && has_value) {
      sc.bytes = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--nodes N] [--bytes B]\n", argv[0]);
      return 2;
    }
  }
  if (sc.nodes < 2 || sc.bytes < static_cast<std::uint64_t>(sc.nodes)) {
    std::fprintf(stderr, "need --nodes >= 2 and --bytes >= nodes\n");
    return 2;
  }
  std::printf(
      "ring allreduce: nodes=%d bytes=%llu chunk_bytes=%llu steps=%d link=1Gb/s,50us star\n",
      sc.nodes, static_cast<unsigned long long>(sc.bytes),
      static_cast<unsigned long long>(sc.chunk_bytes()), sc.steps());
  const double closed_form =
      sc.steps() * (2 * kLinkLatencyS + static_cast<double>(sc.chunk_bytes()) / kLinkBwBytesPerS);
  const RunResult ours = run_trainsim(sc);
  std::printf("trainsim: wall_s=%.6f sim_s=%.12f\n", ours.wall_s, ours.sim_s);
  std::printf("closed form 2(P-1)(2*lat + chunk/bw): sim_s=%.12f\n", closed_form);
#if defined(TRAINSIM_HAVE_SIMGRID)
  const RunResult theirs = run_simgrid(sc, argc, argv);
  std::printf("simgrid:  wall_s=%.6f sim_s=%.12f\n", theirs.wall_s, theirs.sim_s);
  std::printf("rel_diff=%.3e ratio=%.1f\n", std::abs(ours.sim_s - theirs.sim_s) / theirs.sim_s,
              theirs.wall_s / ours.wall_s);
#else
  std::printf("SimGrid not available: no comparison\n");
#endif
  return 0;
}
