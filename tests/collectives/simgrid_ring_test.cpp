// Ring allreduce on the 512-node star-1gbe cluster, run as actors exchanging messages in SimGrid
// 3.32 (CM02, factors 1, no TCP-gamma cap, no cross-traffic; trainsim's routes) and in trainsim's
// message-level run: completion times agree to 1e-6 relative. SimGrid runs in a forked child
// (its engine is a process-wide singleton).
#if defined(TRAINSIM_HAVE_SIMGRID)

#include <catch2/catch.hpp>
#include <simgrid/s4u.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "cli/profiles_source.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/net/cluster_topology.hpp"
#include "tests/support/forked_child.hpp"
#include "tests/support/profile_library.hpp"
#include "tests/support/simgrid_platform.hpp"

using namespace trainsim::sim;
namespace sg4 = simgrid::s4u;

namespace {

[[noreturn]] void simgrid_ring(const ClusterSpec& spec, double bytes, int out_fd) {
  const ClusterTopology c = build_cluster_topology(spec);
  trainsim::testing::SimgridPlatform platform(c.topology, "ring");
  const int ranks = static_cast<int>(c.accelerators.size());
  for (int r = 0; r < ranks; ++r)
    platform.add_route(c.accelerator(r), c.accelerator((r + 1) % ranks));
  static int token = 0;
  for (int r = 0; r < ranks; ++r) {
    sg4::Actor::create(
        "rank" + std::to_string(r), platform.host(c.accelerator(r)), [r, ranks, bytes] {
          sg4::Mailbox* mine = sg4::Mailbox::by_name("mb" + std::to_string(r));
          sg4::Mailbox* next = sg4::Mailbox::by_name("mb" + std::to_string((r + 1) % ranks));
          for (int step = 0; step < 2 * (ranks - 1); ++step) {
            sg4::CommPtr send = next->put_async(&token, static_cast<std::uint64_t>(bytes / ranks));
            mine->get<int>();
            send->wait();
          }
        });
  }
  platform.run();
  trainsim::testing::write_numbers_and_exit(out_fd, {sg4::Engine::get_clock()});
}

double run_simgrid(const ClusterSpec& spec, double bytes) {
  const std::vector<double> clock =
      trainsim::testing::numbers_from_forked_child([&](int fd) { simgrid_ring(spec, bytes, fd); });
  REQUIRE(clock.size() == 1);
  return clock.front();
}

}  // namespace

TEST_CASE("SimGrid agreement: ring allreduce on the 512-node star-1gbe cluster") {
  const ClusterSpec spec = trainsim::test::profile("star-1gbe");
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
