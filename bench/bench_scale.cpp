// Wall time and peak memory of one `simulate` (scenario load + training-step simulation) vs the
// number of accelerators, 8 to 65,536: ResNet-50 (the built-in demo scenario) on DGX H100 nodes
// joined by an NDR fat tree, data x pipeline parallel, collectives priced flow-level at every size
// (message level up to 256 ranks, phase-aggregated beyond). Each device count runs in a forked
// child so its peak RSS is its own. Replicas are identical and simulated once, so the
// cost should stay flat; the last column is the growth relative to 8 devices, to compare
// with the device ratio (linear growth would equal it). A benchmark, never a timed test.
//
// usage: bench_scale [--pipeline K] [--reps N]

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/profiles_source.hpp"
#include "cli/scenario_source.hpp"
#include "models/training_step.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Measure {
  double wall_s = 0;      // median over reps
  long peak_rss_kib = 0;  // the child's peak resident set
  unsigned long long events = 0;
  double step_time_s = 0;
  double comm_time_s = 0;
  char model[40] = {};
};

struct ChildResult {
  double wall_s;
  unsigned long long events;
  double step_time_s;
  double comm_time_s;
  char model[40];  // the step report's collective_model
};

// Runs in the child: `reps` simulations of the scenario at `devices`, median wall time.
ChildResult simulate_at(int devices, int pipeline, int reps) {
  const auto profiles = trainsim::cli::load_profile_library({});
  const int nodes = std::max(1, devices / 8);
  std::vector<std::string> sets = {"cluster=dgx-h100-x4", "cluster.nodes=" + std::to_string(nodes),
                                   "parallelism.data=" + std::to_string(devices / pipeline)};
  if (pipeline > 1) {
    sets.push_back("parallelism.pipeline=" + std::to_string(pipeline));
    sets.push_back("parallelism.microbatches=" + std::to_string(4 * pipeline));
  }
  std::vector<double> walls;
  ChildResult r{};
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    const auto scenario = trainsim::cli::load_scenario_source("", sets, profiles);
    const auto report = trainsim::models::simulate_training(scenario);
    walls.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    r.events = report.events;
    r.step_time_s = report.step_time_s;
    r.comm_time_s = report.comm_time_s;
    std::snprintf(r.model, sizeof r.model, "%s", report.collective_model.c_str());
  }
  std::sort(walls.begin(), walls.end());
  r.wall_s = walls[walls.size() / 2];
  return r;
}

// Forks, runs `work` in the child and returns what it wrote back plus its peak RSS.
Measure in_child(int devices, int pipeline, int reps, bool idle) {
  int fds[2];
  if (::pipe(fds) != 0) std::exit(1);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ChildResult r{};
    try {
      if (!idle) r = simulate_at(devices, pipeline, reps);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_scale: %d devices: %s\n", devices, e.what());
      ::_exit(1);
    }
    if (::write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) ::_exit(1);
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildResult r{};
  const bool got = ::read(fds[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
  ::close(fds[0]);
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) std::exit(1);
  Measure m{r.wall_s, usage.ru_maxrss, r.events, r.step_time_s, r.comm_time_s, {}};
  std::snprintf(m.model, sizeof m.model, "%s", r.model);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  int pipeline = 1;
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--pipeline") == 0) pipeline = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  if (pipeline < 1 || reps < 1) {
    std::fprintf(stderr, "usage: bench_scale [--pipeline K] [--reps N]\n");
    return 2;
  }
  const Measure idle = in_child(8, pipeline, 1, true);
  std::printf(
      "bench_scale: ResNet-50 (built-in demo) on dgx-h100-x4 nodes, data x pipeline %d, "
      "median of %d runs; forked child's baseline RSS %ld KiB\n",
      pipeline, reps, idle.peak_rss_kib);
  std::printf("%8s %8s %12s %12s %14s %10s %14s %12s %12s  %s\n", "devices", "nodes", "wall_ms",
              "events", "peak_rss_KiB", "rss_+KiB", "step_time_ms", "comm_ms", "cost_vs_8",
              "collective_model");
  double base = 0;
  for (int devices = std::max(8, pipeline); devices <= 65536; devices *= 2) {
    const Measure m = in_child(devices, pipeline, reps, false);
    if (base == 0) base = m.wall_s;
    std::printf("%8d %8d %12.3f %12llu %14ld %10ld %14.3f %12.3f %11.2fx  %s\n", devices,
                std::max(1, devices / 8), m.wall_s * 1e3, m.events, m.peak_rss_kib,
                m.peak_rss_kib - idle.peak_rss_kib, m.step_time_s * 1e3, m.comm_time_s * 1e3,
                m.wall_s / base, m.model);
    std::fflush(stdout);
  }
  std::printf("device ratio 65536/8 = 8192x (linear growth); cost_vs_8 is the measured growth\n");
  return 0;
}
