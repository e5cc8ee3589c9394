// Time and peak memory of `trainsim import` on generated large PyTorch profiler traces
// (tests/support/kineto_trace.hpp: ProfilerSteps of cpu_op + cudaLaunchKernel + kernel + flow
// events): for each size, the file's size and events, the import's wall time and throughput, and
// the process's peak RSS after it (ru_maxrss only grows, so sizes run smallest first). A
// benchmark, never a timed test.
//
// usage: bench_import [--steps S1,S2,...] [--kernels K] [--dir DIR]

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/import_trace.hpp"
#include "cli/profiles_source.hpp"
#include "tests/support/kineto_trace.hpp"

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB -> MiB
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> steps = {20, 100, 400};
  int kernels = 360;
  std::string dir = std::filesystem::temp_directory_path().string();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) {
      steps.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string x; std::getline(ss, x, ',');)
        steps.push_back(std::atoi(x.c_str()));
    } else if (std::strcmp(argv[i], "--kernels") == 0) {
      kernels = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--dir") == 0) {
      dir = argv[i + 1];
    }
  }
  const auto profiles = trainsim::cli::load_profile_library({});
  std::printf("baseline peak RSS %.1f MiB (profiles loaded)\n", peak_rss_mb());
  std::printf("%8s %10s %10s %9s %9s %12s\n", "steps", "events", "MB", "import s", "MB/s",
              "peak RSS MiB");
  for (const int s : steps) {
    const std::string path = dir + "/bench_import_" + std::to_string(s) + ".json";
    const auto t = trainsim::test::write_large_kineto_trace(path, s, kernels);
    const auto t0 = std::chrono::steady_clock::now();
    const auto w = trainsim::cli::import_kineto_trace(path, {}, profiles);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double mb = static_cast<double>(t.bytes) / 1e6;
    std::printf("%8d %10lld %10.1f %9.2f %9.1f %12.1f   (%d steps imported, %zu layers)\n", s,
                static_cast<long long>(t.events), mb, secs, mb / secs, peak_rss_mb(), w.steps,
                w.layers.size());
    std::filesystem::remove(path);
  }
  return 0;
}
