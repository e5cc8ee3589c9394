// Ring allreduce on the 512-node star-1gbe cluster, run as actors exchanging messages in SimGrid
// 3.32 (CM02, factors 1, no TCP-gamma cap, no cross-traffic; trainsim's routes) and in trainsim's
// message-level run: completion times agree to 1e-6 relative. SimGrid runs in a forked child
// (its engine is a process-wide singleton).
#if defined(TRAINSIM_HAVE_SIMGRID)

#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <simgrid/s4u.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/profiles_source.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/net/cluster_topology.hpp"
#include "sim/net/routing.hpp"
#include "tests/support/simgrid_cm02_args.hpp"

using namespace trainsim::sim;
namespace sg4 = simgrid::s4u;

namespace {

[[noreturn]] void simgrid_ring(const ClusterSpec& spec, double bytes, int out_fd) {
  const ClusterTopology c = build_cluster_topology(spec);
  const Topology& topo = c.topology;
  Router router(topo);
  std::vector<std::string> args = trainsim::testing::simgrid_cm02_args("ring");
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine e(&argc, argv.data());
  auto* zone = sg4::create_full_zone("world");
  std::vector<sg4::Host*> hosts;
  for (VertexId v = 0; v < topo.num_vertices(); ++v)
    hosts.push_back(zone->create_host(topo.vertex(v).name, 1e9));
  std::vector<sg4::Link*> links;
  for (LinkId l = 0; l < topo.num_links(); ++l) {
    const LinkProps& p = topo.link(l);
    links.push_back(zone->create_split_duplex_link("link" + std::to_string(l), p.bw_bytes_per_s)
                        ->set_latency(p.latency_s)
                        ->seal());
  }
  const int ranks = static_cast<int>(c.accelerators.size());
  for (int r = 0; r < ranks; ++r) {
    const VertexId a = c.accelerator(r), b = c.accelerator((r + 1) % ranks);
    std::vector<sg4::LinkInRoute> route;
    for (const Hop& hop : router.route(a, b).hops) {
      route.emplace_back(links[hop.link], hop.forward ? sg4::LinkInRoute::Direction::UP
                                                      : sg4::LinkInRoute::Direction::DOWN);
    }
    zone->add_route(hosts[a]->get_netpoint(), hosts[b]->get_netpoint(), nullptr, nullptr, route,
                    false);
  }
  zone->seal();
  static int token = 0;
  for (int r = 0; r < ranks; ++r) {
    sg4::Actor::create("rank" + std::to_string(r), hosts[c.accelerator(r)], [r, ranks, bytes] {
      sg4::Mailbox* mine = sg4::Mailbox::by_name("mb" + std::to_string(r));
      sg4::Mailbox* next = sg4::Mailbox::by_name("mb" + std::to_string((r + 1) % ranks));
      for (int step = 0; step < 2 * (ranks - 1); ++step) {
        sg4::CommPtr send = next->put_async(&token, static_cast<std::uint64_t>(bytes / ranks));
        mine->get<int>();
        send->wait();
      }
    });
  }
  e.run();
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.17g\n", sg4::Engine::get_clock());
  if (write(out_fd, buf, static_cast<std::size_t>(n)) != n) _exit(3);
  close(out_fd);
  _exit(0);
}

double run_simgrid(const ClusterSpec& spec, double bytes) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    simgrid_ring(spec, bytes, fds[1]);
  }
  close(fds[1]);
  std::string text;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return std::stod(text);
}

}  // namespace

TEST_CASE("SimGrid agreement: ring allreduce on the 512-node star-1gbe cluster") {
  const ClusterSpec spec = trainsim::cli::load_profile_library({}).cluster("star-1gbe", "test");
  REQUIRE(spec.nodes == 512);
  const double bytes = 512.0 * 100000;  // whole bytes per message, as SimGrid sends integers
  trainsim::sim::collectives::CollectiveSpec s;
  s.bytes = bytes;
  s.exact = true;
  s.charge_kernels = false;
  const double ours = trainsim::sim::collectives::run_collective(spec, s).time_s;
  const double theirs = run_simgrid(spec, bytes);
  INFO("trainsim " << ours << " s, SimGrid " << theirs << " s");
  CHECK(std::abs(ours - theirs) / theirs < 1e-6);
  WARN("ring allreduce, 512 ranks: relative difference " << std::abs(ours - theirs) / theirs);
}

#endif  // TRAINSIM_HAVE_SIMGRID
