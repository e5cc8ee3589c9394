// Wall time and peak memory of a ring allreduce (64 MiB, kernels on) on star-1gbe for
// P = 8 .. 65,536 ranks: the message-level run where it is feasible (P <= 1024) and the
// phase-aggregated run everywhere, with their ratio. Peak RSS is the process's high-water mark
// (getrusage), so each row's figure includes the rows before it.

#include <sys/resource.h>

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

int main() {
  ClusterSpec c = trainsim::cli::load_profile_library({}).cluster("star-1gbe", "bench");
  std::printf("ring allreduce of 64 MiB on star-1gbe (1 Gb/s star), kernels charged\n");
  std::printf("%8s %12s %12s %12s %12s %14s %12s\n", "ranks", "sim_time_s", "exact_wall_s",
              "aggr_wall_s", "exact/aggr", "messages", "peak_rss_MiB");
  for (int p = 8; p <= 65536; p *= 2) {
    c.nodes = p;
    CollectiveSpec s;
    s.bytes = 64.0 * 1024 * 1024;
    s.model = Model::aggregated;
    const CollectiveResult agg = run_collective(c, s);
    double exact_wall = -1;
    if (p <= 1024) {
      s.model = Model::exact;
      s.exact = true;
      const CollectiveResult ex = run_collective(c, s);
      exact_wall = ex.wall_s;
    }
    if (exact_wall >= 0) {
      std::printf("%8d %12.6g %12.4g %12.4g %12.1f %14llu %12.1f\n", p, agg.time_s, exact_wall,
                  agg.wall_s, exact_wall / agg.wall_s, static_cast<unsigned long long>(agg.flows),
                  peak_rss_mib());
    } else {
      std::printf("%8d %12.6g %12s %12.4g %12s %14llu %12.1f\n", p, agg.time_s, "-", agg.wall_s,
                  "-", static_cast<unsigned long long>(agg.flows), peak_rss_mib());
    }
    std::fflush(stdout);
  }
  return 0;
}
