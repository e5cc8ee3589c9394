// Wall time of `trainsim plan`'s layout search for Llama 2 70B (examples/llama2_70b_64xh100.json,
// its global batch of 1024 sequences) on 128 DGX H100 nodes (1024 GPUs): the layouts enumerated,
// checked with the memory model, pruned and simulated, against a reference measured in the same
// run: one `trainsim simulate` of the example's own layout (64 GPUs, tp 4 pp 4 v20). Prints the
// search's wall time, its counts and the ratio. A benchmark, never a timed test.
//
// usage: bench_plan [--jobs N] [--nodes N] [--max-pipeline K]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli/plan_catalog.hpp"
#include "cli/plan_search.hpp"
#include "cli/profiles_source.hpp"
#include "cli/scenario_source.hpp"
#include "models/training_step.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 2;
  int nodes = 128;
  int max_pipeline = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--jobs") == 0) jobs = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--nodes") == 0) nodes = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-pipeline") == 0) max_pipeline = std::atoi(argv[i + 1]);
  }
  using namespace trainsim;
  const auto profiles = cli::load_profile_library({});
  const std::string scenario =
      std::string(TRAINSIM_SOURCE_DIR) + "/examples/llama2_70b_64xh100.json";

  // Reference: the example as it is.
  auto t0 = Clock::now();
  const models::StepReport one =
      models::simulate_training(cli::load_scenario_source(scenario, {}, profiles));
  const double one_s = seconds_since(t0);

  const auto catalog_path = std::filesystem::temp_directory_path() / "bench_plan_catalog.json";
  {
    std::ofstream f(catalog_path);
    f << R"({"kind": "plan_catalog", "currency": "USD", "options": [{"name": "dgx-h100",
        "cluster": "dgx-h100-x4", "price_per_node_hour": 98.32, "node_counts": [)"
      << nodes << "]}]}";
  }
  t0 = Clock::now();
  const cli::PlanCatalog catalog = cli::load_plan_catalog(catalog_path.string(), profiles);
  const models::Scenario base = cli::load_scenario_source(scenario, {}, profiles);
  cli::PlanSearchOptions options;
  options.max_pipeline = max_pipeline;
  std::vector<cli::Candidate> cands = cli::enumerate_candidates(catalog, options, base);
  const cli::PlanTarget target = cli::parse_plan_target("1 samples/s", {}, {});
  const auto load = [&](const cli::Candidate& c) {
    std::vector<std::string> all = c.cluster_overrides;
    all.insert(all.end(), c.layout_overrides.begin(), c.layout_overrides.end());
    return cli::LoadedCandidate{cli::load_scenario_source(scenario, all, profiles),
                                cli::scenario_label(scenario, all)};
  };
  const cli::PlanCounts counts = cli::evaluate_candidates(cands, catalog, target, base, jobs, load);
  const std::vector<std::size_t> best = cli::mark_best_mfu(cands);
  const double plan_s = seconds_since(t0);
  std::filesystem::remove(catalog_path);

  std::map<cli::CandidateStatus, int> by_status;
  for (const auto& c : cands)
    ++by_status[c.status];
  std::printf("bench_plan: llama2_70b, global batch %lld, %d x DGX H100 (%d GPUs), jobs %d\n",
              static_cast<long long>(cli::plan_global_batch(base, scenario)), nodes, nodes * 8,
              jobs);
  std::printf("  reference: one simulate of the example (64 GPUs): %.3f s wall, MFU %.1f%%\n",
              one_s, 100 * one.mfu);
  std::printf(
      "  plan search: %.3f s wall (%.1fx the reference); %zu layouts: %d simulated, %d no fit, "
      "%d dominated, %d not divisible, %d failed; %zu memory checks\n",
      plan_s, plan_s / one_s, cands.size(), by_status[cli::CandidateStatus::simulated],
      by_status[cli::CandidateStatus::no_fit], by_status[cli::CandidateStatus::dominated],
      by_status[cli::CandidateStatus::not_divisible], by_status[cli::CandidateStatus::failed],
      counts.memory_checks);
  for (const auto& c : cands) {
    std::printf("    %-32s %-13s MFU %5.1f%%  step %8.3f s  wall %.3f s  %s\n",
                cli::layout_name(c).c_str(), cli::candidate_status_name(c.status), 100 * c.mfu,
                c.report.step_time_s, c.report.wall_s, c.simulated() ? "" : c.failure.c_str());
  }
  if (!best.empty()) {
    const auto& b = cands[best.front()];
    std::printf("  best MFU: %s, %.1f%%, %.4g samples/s\n", cli::layout_name(b).c_str(),
                100 * b.mfu, b.samples_per_s);
  }
  return 0;
}
