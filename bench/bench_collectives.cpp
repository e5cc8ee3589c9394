// Wall time and peak memory of ring allreduces for P = 8 .. 65,536 ranks: the message-level run
// where it is feasible (P <= 1024 on the star, <= 256 on the fat tree) and the phase-aggregated
// run everywhere, with their ratio. Two fabrics: star-1gbe (64 MiB, plain message schedule) and
// DGX H100 nodes on a rail-optimised NDR fat tree (25 MB, NCCL channels and Simple protocol).
// Peak RSS is the process's high-water mark (getrusage), so each row includes the rows before.

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

#include "cli/profiles_source.hpp"
#include "sim/collectives/collective.hpp"

using namespace trainsim::sim;
using namespace trainsim::sim::collectives;

namespace {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace

namespace {

void sweep(ClusterSpec c, int apn, double bytes, int exact_max, bool nccl) {
  std::printf("%8s %12s %12s %12s %12s %16s %12s\n", "ranks", "sim_time_s", "exact_wall_s",
              "aggr_wall_s", "exact/aggr", "messages", "peak_rss_MiB");
  for (int p = 8; p <= 65536; p *= 2) {
    c.nodes = std::max(1, p / apn);
    CollectiveSpec s;
    s.bytes = bytes;
    if (nccl) s.protocol = Protocol::simple;
    s.model = Model::aggregated;
    const CollectiveResult agg = run_collective(c, s);
    double exact_wall = -1;
    if (p <= exact_max) {
      s.model = Model::exact;
      s.exact = true;
      exact_wall = run_collective(c, s).wall_s;
    }
    if (exact_wall >= 0) {
      std::printf("%8d %12.6g %12.4g %12.4g %12.1f %16llu %12.1f\n", p, agg.time_s, exact_wall,
                  agg.wall_s, exact_wall / agg.wall_s, static_cast<unsigned long long>(agg.flows),
                  peak_rss_mib());
    } else {
      std::printf("%8d %12.6g %12s %12.4g %12s %16llu %12.1f\n", p, agg.time_s, "-", agg.wall_s,
                  "-", static_cast<unsigned long long>(agg.flows), peak_rss_mib());
    }
    std::fflush(stdout);
  }
}

}  // namespace

int main() {
  const auto profiles = trainsim::cli::load_profile_library({});
  std::printf("ring allreduce of 64 MiB on star-1gbe (1 Gb/s star), kernels charged\n");
  sweep(profiles.cluster("star-1gbe", "bench"), 1, 64.0 * 1024 * 1024, 1024, false);
  std::printf(
      "\nring allreduce of 25 MB on dgx-h100-x4 nodes (NDR fat tree, 8 rails, leaves of 4 "
      "nodes), NCCL Simple, 24 channels\n");
  sweep(profiles.cluster("dgx-h100-x4", "bench"), 8, 25e6, 256, true);
  return 0;
}
