#include "cli/plan_search.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>

#include "cli/run_checks.hpp"
#include "cli/sweep_runner.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

PlanTarget parse_plan_target(const std::string& text, std::optional<double> epochs,
                             std::optional<double> dataset_samples) {
  PlanTarget t;
  t.text = text;
  const std::string where = "--target " + text;
  if (epochs.has_value() != dataset_samples.has_value()) {
    throw UsageError("--epochs/--dataset-samples", "give both (the work is epochs x samples)");
  }
  if (epochs) {
    t.work_samples = *epochs * *dataset_samples;
    t.work_given = true;
  }
  if (auto seconds = sim::parse_quantity(text, sim::Dimension::seconds)) {
    if (!(*seconds > 0)) throw UsageError(where, "the time must be positive");
    if (!t.work_given) {
      throw UsageError(where, "a time target needs --epochs E and --dataset-samples D");
    }
    t.time_s = *seconds;
    return t;
  }
  std::string number = text;
  for (const char* suffix : {"samples/s", "sample/s", "/s"}) {
    const std::string s = suffix;
    if (number.size() > s.size() && number.compare(number.size() - s.size(), s.size(), s) == 0) {
      number.resize(number.size() - s.size());
      break;
    }
  }
  while (!number.empty() && number.back() == ' ')
    number.pop_back();
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != number.size() || !std::isfinite(v) || v <= 0) {
    throw UsageError(where,
                     "expected a throughput such as '20000 samples/s' or a time such as '24 h'");
  }
  t.samples_per_s = v;
  return t;
}

std::vector<Candidate> enumerate_candidates(const PlanCatalog& catalog, int max_pipeline) {
  std::vector<Candidate> out;
  for (std::size_t i = 0; i < catalog.options.size(); ++i) {
    const PlanOption& o = catalog.options[i];
    for (const int nodes : o.node_counts) {
      const int devices = nodes * o.accelerators_per_node;
      for (int p = 1; p <= max_pipeline && p <= devices; p *= 2) {
        if (devices % p != 0) continue;
        Candidate c;
        c.option = i;
        c.nodes = nodes;
        c.devices = devices;
        c.pipeline = p;
        c.data = devices / p;
        // GPipe: the bubble (K-1)/(M+K-1) is negligible once M >= 4K.
        c.microbatches = p > 1 ? 4 * p : 1;
        c.cluster_overrides = {"cluster=" + o.cluster_value,
                               "cluster.nodes=" + std::to_string(nodes)};
        c.layout_overrides = {"parallelism.data=" + std::to_string(c.data),
                              "parallelism.pipeline=" + std::to_string(p)};
        if (p > 1) {
          c.layout_overrides.push_back("parallelism.microbatches=" +
                                       std::to_string(c.microbatches));
        }
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

void evaluate_candidates(std::vector<Candidate>& candidates, const PlanCatalog& catalog,
                         const PlanTarget& target, int jobs, const CandidateLoader& load,
                         const PlanProgress& progress) {
  const std::atomic<bool> never{false};
  OrderedRunner runner(
      candidates.size(), jobs,
      [&](std::size_t i) {
        Candidate& c = candidates[i];
        c.fits = true;
        try {
          LoadedCandidate loaded = load(c);
          if (!models::estimate_memory(loaded.scenario).fits &&
              loaded.scenario.recompute == models::Recompute::none) {
            c.layout_overrides.push_back("recompute=true");
            c.recompute = true;
            loaded = load(c);
          }
          if (!models::estimate_memory(loaded.scenario).fits) {
            c.fits = false;
            c.failure = "does not fit in memory";
            return std::string();
          }
          c.report = simulate_checked(loaded.scenario, loaded.label);
        } catch (const std::exception& e) {
          c.failure = e.what();
          return std::string();
        }
        const PlanOption& o = catalog.options[c.option];
        c.samples_per_s = c.report.throughput_samples_per_s;
        c.time_s = target.work_samples / c.samples_per_s;
        c.price_per_hour = o.price_per_node_hour * c.nodes;
        c.cost = c.price_per_hour * c.time_s / 3600;
        if (!std::isfinite(c.time_s) || !std::isfinite(c.cost) || !(c.samples_per_s > 0)) {
          c.failure = "time or cost is not finite";
          return std::string();
        }
        c.meets_target = target.samples_per_s ? c.samples_per_s >= *target.samples_per_s
                                              : c.time_s <= *target.time_s;
        return std::string();
      },
      never);
  std::size_t done = 0;
  while (runner.next()) {
    if (progress) progress(++done, candidates.size());
  }
}

std::vector<std::size_t> mark_pareto_front(std::vector<Candidate>& candidates) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].failure.empty()) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Candidate& x = candidates[a];
    const Candidate& y = candidates[b];
    if (x.cost != y.cost) return x.cost < y.cost;
    if (x.time_s != y.time_s) return x.time_s < y.time_s;
    return a < b;
  });
  std::vector<std::size_t> front;
  for (const std::size_t i : order) {
    if (front.empty() || candidates[i].time_s < candidates[front.back()].time_s) {
      candidates[i].pareto = true;
      front.push_back(i);
    }
  }
  return front;
}

std::optional<std::size_t> cheapest_meeting_target(const std::vector<Candidate>& candidates) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!c.failure.empty() || !c.meets_target) continue;
    if (!best || c.cost < candidates[*best].cost ||
        (c.cost == candidates[*best].cost && c.time_s < candidates[*best].time_s)) {
      best = i;
    }
  }
  return best;
}

std::string layout_name(const Candidate& c) {
  std::string s = "dp" + std::to_string(c.data);
  if (c.pipeline > 1)
    s += " x pp" + std::to_string(c.pipeline) + " (m" + std::to_string(c.microbatches) + ")";
  if (c.recompute) s += " +recompute";
  return s;
}

}  // namespace trainsim::cli
