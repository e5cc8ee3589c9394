// Wall time of one `trainsim simulate` of the built-in demo (ResNet-50 on a DGX A100, every kernel
// a framework launches on the engine, with the host dispatch thread) and of a few heavier
// scenarios, against a reference measured in the same run: the same scenario with the kernel
// lists collapsed to one kernel per layer pass (what the step simulator priced before it launched
// kernels as frameworks do). Prints median wall time, events and the ratio. A benchmark, never a
// timed test.
//
// Then the LLM layouts of issue 15 (examples/gpt3_175b_1024xa100.json: 1024 A100, tp 8 x pp 16 x
// dp 8, 192 micro-batches; examples/llama2_70b_64xh100.json: 64 H100, tp 4 x pp 4 x 20 chunks,
// 256 micro-batches): median wall time, events, the process's peak RSS after them, and the ratio
// to the demo's wall time in the same run.
//
// usage: bench_step [--reps N]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "cli/profiles_source.hpp"
#include "cli/scenario_source.hpp"
#include "models/training_step.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  double median_s = 0;
  unsigned long long events = 0;
  double kernels = 0;
};

// One kernel per layer pass: the sum of each pass's kernels as one launch.
void collapse(trainsim::models::Scenario& s) {
  for (auto& l : s.model.layers) {
    for (auto* list : {&l.fwd_kernels, &l.bwd_kernels}) {
      if (list->empty()) continue;
      trainsim::models::KernelSpec sum = list->front();
      sum.repeat = 1;
      sum.flops = sum.act_elements = sum.param_elements = sum.raw_bytes = 0;
      for (const auto& k : *list) {
        sum.flops += k.flops * k.repeat;
        sum.act_elements += k.act_elements * k.repeat;
        sum.param_elements += k.param_elements * k.repeat;
        sum.raw_bytes += k.raw_bytes * k.repeat;
      }
      *list = {sum};
    }
  }
}

Result run(const std::vector<std::string>& sets, bool collapsed, int reps,
           const std::string& file = "") {
  static const auto profiles = trainsim::cli::load_profile_library({});
  std::vector<double> walls;
  Result r;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    auto scenario = trainsim::cli::load_scenario_source(file, sets, profiles);
    if (collapsed) collapse(scenario);
    const auto report = trainsim::models::simulate_training(scenario);
    walls.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    r.events = report.events;
    r.kernels = report.kernels_per_step;
  }
  std::sort(walls.begin(), walls.end());
  r.median_s = walls[walls.size() / 2];
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 21;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bench_step [--reps N]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  struct Case {
    const char* name;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases{
      {"demo (resnet50, 8 x A100)", {}},
      {"bert_large seq 512, 8 x A100",
       {"model={\"name\":\"bert_large\",\"seq_len\":512}", "batch_per_replica=16",
        "input.enabled=false"}},
      {"tacotron2, 1 x A100",
       {"model=tacotron2", "batch_per_replica=48", "input.enabled=false", "parallelism.data=1"}},
  };
  std::printf("%-32s %12s %12s %10s %14s %10s\n", "scenario", "kernels/step", "events", "wall (ms)",
              "1/layer (ms)", "ratio");
  for (const Case& c : cases) {
    const Result fine = run(c.sets, false, reps);
    const Result coarse = run(c.sets, true, reps);
    std::printf("%-32s %12.0f %12llu %10.3f %14.3f %9.2fx\n", c.name, fine.kernels, fine.events,
                1e3 * fine.median_s, 1e3 * coarse.median_s, fine.median_s / coarse.median_s);
  }
  const Result demo = run({}, false, reps);
  const std::string examples = std::string(TRAINSIM_SOURCE_DIR) + "/examples/";
  std::printf("\n%-32s %12s %12s %10s %14s %10s\n", "LLM layout", "kernels/step", "events",
              "wall (s)", "peak RSS (MiB)", "vs demo");
  for (const char* file : {"gpt3_175b_1024xa100.json", "llama2_70b_64xh100.json"}) {
    const Result r = run({}, false, std::max(1, reps / 7), examples + file);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("%-32s %12.0f %12llu %10.3f %14.1f %9.0fx\n", file, r.kernels, r.events, r.median_s,
                static_cast<double>(usage.ru_maxrss) / 1024.0, r.median_s / demo.median_s);
  }
  return 0;
}
