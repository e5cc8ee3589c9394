#pragma once
// Capacity planning: the candidate configurations of a catalog (option x node count x pipeline
// depth, with recomputation when the plain layout does not fit), their simulated throughput,
// time and cost for a piece of work, and the Pareto front of cost vs time.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/plan_catalog.hpp"
#include "models/training_step.hpp"

namespace trainsim::cli {

struct PlanTarget {
  std::optional<double> samples_per_s;  // a throughput target, or
  std::optional<double> time_s;         // a time to train `work_samples`
  double work_samples = 1e6;            // epochs x dataset samples (1e6 when not given)
  bool work_given = false;
  std::string text;  // as given, for reports
};

// "20000 samples/s" (or a bare number: samples/s) or a duration such as "24 h".
PlanTarget parse_plan_target(const std::string& text, std::optional<double> epochs,
                             std::optional<double> dataset_samples);

struct Candidate {
  std::size_t option = 0;  // index into the catalog
  int nodes = 1;
  int devices = 1;
  int data = 1;
  int pipeline = 1;
  int microbatches = 1;
  bool recompute = false;
  std::vector<std::string> cluster_overrides;  // the option's cluster and node count
  std::vector<std::string> layout_overrides;   // parallelism (and recompute when needed)
  // Filled by evaluation:
  bool fits = false;
  std::string failure;  // why it could not be simulated (empty when it was)
  models::StepReport report;
  double samples_per_s = 0;
  double time_s = 0;          // for the work
  double cost = 0;            // for the work, in the catalog's currency
  double price_per_hour = 0;  // all nodes
  bool meets_target = false;
  bool pareto = false;
};

// Candidates in a fixed order: option, nodes, pipeline depth (1, 2, 4, ... up to max_pipeline).
std::vector<Candidate> enumerate_candidates(const PlanCatalog& catalog, int max_pipeline);

// Simulates the candidates that fit in memory (on `jobs` threads; results do not depend on it).
// `load` turns a candidate into its scenario: the plan's scenario with the cluster overrides,
// then the user's --set overrides (so they can adjust the chosen cluster), then the layout.
// A layout the scenario rejects is a candidate that was not simulated, with the reason.
struct LoadedCandidate {
  models::Scenario scenario;
  std::string label;  // the scenario and its overrides, for messages
};
using CandidateLoader = std::function<LoadedCandidate(const Candidate&)>;
// `progress` (optional) is called after each candidate with (done, total).
using PlanProgress = std::function<void(std::size_t done, std::size_t total)>;
void evaluate_candidates(std::vector<Candidate>& candidates, const PlanCatalog& catalog,
                         const PlanTarget& target, int jobs, const CandidateLoader& load,
                         const PlanProgress& progress = {});

// Marks the simulated candidates on the Pareto front of (cost, time): none is both cheaper and
// faster. Returns their indices, cheapest first.
std::vector<std::size_t> mark_pareto_front(std::vector<Candidate>& candidates);
// The cheapest candidate meeting the target (ties: the faster, then the earlier).
std::optional<std::size_t> cheapest_meeting_target(const std::vector<Candidate>& candidates);

std::string layout_name(const Candidate& c);

}  // namespace trainsim::cli
