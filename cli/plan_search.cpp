#include "cli/plan_search.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <utility>

#include "cli/run_checks.hpp"
#include "cli/sweep_runner.hpp"
#include "cli/target_report.hpp"
#include "models/zoo/tensor_parallel.hpp"
#include "sim/config/limits.hpp"
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

const char* candidate_status_name(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::simulated:
      return "simulated";
    case CandidateStatus::no_fit:
      return "no_fit";
    case CandidateStatus::dominated:
      return "dominated";
    case CandidateStatus::not_divisible:
      return "not_divisible";
    case CandidateStatus::failed:
      break;
  }
  return "failed";
}

std::int64_t plan_global_batch(const models::Scenario& base, const std::string& origin) {
  if (base.batch_max) {
    throw InputError(origin + ": batch_per_replica",
                     "\"max\": plan keeps the scenario's global batch (batch_per_replica x data x "
                     "grad_accum) fixed across layouts, so it needs a number");
  }
  return std::int64_t{base.batch_per_replica} * base.data_parallel * base.grad_accum;
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Whether `m` splits into `tp` tensor-parallel ranks, and with sequence parallelism (on
// whenever it can be: it divides the replicated activations by tp for a reduce-scatter and an
// all-gather that replace each allreduce, Korthikanti et al. 2022 Sec. 4.2.2). nullopt: no split.
std::optional<bool> tensor_split(const models::ZooModel& m, int tp) {
  if (tp == 1) return false;
  for (const bool sp : {true, false}) {
    try {
      (void)models::shard_tensor_parallel(m, tp, sp, "plan");
      return sp;
    } catch (const InputError&) {
    }
  }
  return std::nullopt;
}

// Model chunks per stage of the interleaved schedule. Narayanan et al. 2021 (SC21) Sec. 2.2.2:
// v chunks per device cut the bubble by v at v times the pipeline transfers; NVIDIA's NeMo
// recipes (NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/llama/llama2_70b.yaml:
// pipeline 4 x virtual 20 for 80 layers) go to one transformer layer per chunk. A zoo
// transformer layer is two entries (attention, MLP), so two entries per chunk is that depth.
int interleave_chunks(int layers, int pp) {
  return layers / pp / 2;
}

// Micro-batch sizes to try for a replica batch of `batch`, largest first. One stage: any power of
// two dividing the batch, and the batch itself (accumulation only when memory forces it). A
// pipeline: powers of two up to `max_microbatch`, whole micro-batch counts, a multiple of the
// depth when interleaved (Megatron-LM's interleaved schedule needs it), and at least 4K
// micro-batches for K stages unless only one sample each is left (Huang et al. 2019, "GPipe",
// Sec. 2.2: the bubble (K-1)/(M+K-1) is negligible once M >= 4K; a larger micro-batch that
// leaves fewer only trades GEMM efficiency for bubble).
std::vector<int> micro_batch_choices(std::int64_t batch, int pp, int v, int max_microbatch) {
  std::vector<int> out;
  if (pp == 1) {
    if (batch <= sim::limits::kMaxBatchPerReplica) out.push_back(static_cast<int>(batch));
    for (std::int64_t p = 1; p < batch && p <= sim::limits::kMaxBatchPerReplica; p *= 2) {
      if (batch % p == 0 && batch / p <= sim::limits::kMaxGradAccum)
        out.push_back(static_cast<int>(p));
    }
  } else {
    for (std::int64_t p = 1; p <= max_microbatch && p <= batch; p *= 2) {
      if (batch % p != 0) continue;
      const std::int64_t m = batch / p;
      if (m > sim::limits::kMaxMicrobatches || (v > 1 && m % pp != 0)) continue;
      if (p > 1 && m < 4 * std::int64_t{pp}) continue;
      out.push_back(static_cast<int>(p));
    }
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The scenario fields a layout's micro-batch and recomputation set (as the overrides below do).
void set_micro(models::Scenario& s, std::int64_t batch, int mb, models::Recompute rc) {
  s.recompute = rc;
  if (s.pipeline_stages == 1) {
    s.batch_per_replica = mb;
    s.microbatches = 1;
    s.grad_accum = static_cast<int>(batch / mb);
  } else {
    s.batch_per_replica = static_cast<int>(batch);
    s.microbatches = static_cast<int>(batch / mb);
    s.grad_accum = 1;
  }
}

// The layout as `simulate --set` overrides. One stage accumulates gradients (grad_accum rounds
// of one micro-batch); a pipeline splits the replica batch into micro-batches under 1F1B
// (Megatron-LM's schedule). With a "global_batch" key the loader derives grad_accum itself.
std::vector<std::string> layout_overrides(const Candidate& c, std::int64_t batch,
                                          bool global_batch_key) {
  const auto str = [](std::int64_t v) { return std::to_string(v); };
  std::vector<std::string> o = {
      "parallelism.data=" + str(c.data),
      "parallelism.tensor=" + str(c.tensor),
      std::string("parallelism.sequence_parallel=") + (c.sequence_parallel ? "true" : "false"),
      "parallelism.pipeline=" + str(c.pipeline),
      "parallelism.virtual_stages=" + str(c.virtual_stages),
      "parallelism.zero=" + str(c.zero),
      std::string("recompute=") + models::recompute_name(c.recompute)};
  if (c.pipeline == 1) {
    o.push_back("batch_per_replica=" + str(c.micro_batch));
    o.push_back("parallelism.microbatches=1");
    if (!global_batch_key) o.push_back("parallelism.grad_accum=" + str(batch / c.micro_batch));
  } else {
    o.push_back("batch_per_replica=" + str(batch));
    o.push_back("parallelism.microbatches=" + str(batch / c.micro_batch));
    o.push_back("parallelism.schedule=1f1b");
    if (!global_batch_key) o.push_back("parallelism.grad_accum=1");
  }
  return o;
}

bool same_group(const Candidate& a, const Candidate& b) {
  return a.option == b.option && a.nodes == b.nodes && a.tensor == b.tensor &&
         a.pipeline == b.pipeline && a.virtual_stages == b.virtual_stages;
}

}  // namespace

std::vector<Candidate> enumerate_candidates(const PlanCatalog& catalog,
                                            const PlanSearchOptions& options,
                                            const models::Scenario& base) {
  const std::int64_t global = plan_global_batch(base, "scenario " + base.name);
  const int layers = static_cast<int>(base.model.layers.size());
  std::map<int, std::optional<bool>> splits;  // tensor degree -> sequence parallel, if it splits
  std::vector<Candidate> out;
  for (std::size_t i = 0; i < catalog.options.size(); ++i) {
    const PlanOption& o = catalog.options[i];
    const int max_tp = options.max_tensor > 0 ? options.max_tensor : o.accelerators_per_node;
    for (const int nodes : o.node_counts) {
      const int devices = nodes * o.accelerators_per_node;
      for (int tp = 1; tp <= max_tp && tp <= devices; tp *= 2) {
        if (splits.find(tp) == splits.end()) splits[tp] = tensor_split(base.model, tp);
        const std::optional<bool> sp = splits[tp];
        if (!sp) continue;
        for (int pp = 1; pp <= options.max_pipeline && tp * pp <= devices && pp <= layers;
             pp *= 2) {
          Candidate c;
          c.option = i;
          c.nodes = nodes;
          c.devices = devices;
          c.tensor = tp;
          c.sequence_parallel = *sp;
          c.pipeline = pp;
          c.cluster_overrides = {"cluster=" + o.cluster_value,
                                 "cluster.nodes=" + std::to_string(nodes)};
          if (devices % (tp * pp) != 0) {
            c.status = CandidateStatus::not_divisible;
            c.failure =
                std::to_string(devices) + " devices are not a multiple of tensor x pipeline";
            out.push_back(std::move(c));
            continue;
          }
          c.data = devices / (tp * pp);
          if (global % c.data != 0) {
            c.status = CandidateStatus::not_divisible;
            c.failure = "global batch " + std::to_string(global) + " is not a multiple of data " +
                        std::to_string(c.data);
            out.push_back(std::move(c));
            continue;
          }
          std::vector<int> vs = {1};
          if (pp > 1 && options.interleave) {
            const int v = interleave_chunks(layers, pp);
            if (v > 1) vs.push_back(v);
          }
          const std::int64_t batch = global / c.data;
          c.replica_batch = batch;
          for (const int v : vs) {
            const std::vector<int> mbs = micro_batch_choices(batch, pp, v, options.max_microbatch);
            if (mbs.empty()) {
              Candidate x = c;
              x.virtual_stages = v;
              x.status = CandidateStatus::not_divisible;
              x.failure = "replica batch " + std::to_string(batch) +
                          " gives no micro-batch count that is a multiple of pipeline " +
                          std::to_string(pp) + " (interleaving needs one)";
              out.push_back(std::move(x));
              continue;
            }
            for (const int z : {0, 1, 3}) {
              // DeepSpeed refuses ZeRO-2/3 with pipelines (deepspeed/runtime/pipe/engine.py);
              // ZeRO-2 is never tried: ZeRO-1's memory plus sharded gradients, which ZeRO-3
              // also shards.
              if (z == 3 && pp > 1) continue;
              Candidate x = c;
              x.virtual_stages = v;
              x.zero = z;
              x.micro_batches_to_try = mbs;
              out.push_back(std::move(x));
            }
          }
        }
      }
    }
  }
  return out;
}

namespace {

// The least recomputation and then the largest micro-batch that fit, checked with the memory
// model on copies of `s` (the layout's scenario).
struct FitSearch {
  bool fits = false;
  models::Recompute recompute = models::Recompute::none;
  int micro_batch = 0;
  double peak_bytes = 0;  // at the smallest micro-batch with full recomputation when none fits
  double capacity_bytes = 0;
  std::size_t checks = 0;
};

FitSearch search_fit(const models::Scenario& s, std::int64_t batch, const std::vector<int>& mbs) {
  FitSearch f;
  for (const models::Recompute rc :
       {models::Recompute::none, models::Recompute::selective, models::Recompute::full}) {
    models::Scenario t = s;
    set_micro(t, batch, mbs.back(), rc);
    const models::MemoryReport smallest = models::estimate_memory(t);
    ++f.checks;
    f.peak_bytes = smallest.peak_bytes_per_device;
    f.capacity_bytes = smallest.capacity_bytes;
    if (!smallest.fits) continue;
    // The memory model's largest micro-batch at this micro-batch count is where to start; the
    // count (and the stage balance) changes with the micro-batch, so each choice is checked.
    for (const int mb : mbs) {
      if (mb != mbs.back() && mb > smallest.max_microbatch_that_fits) continue;
      if (mb != mbs.back()) {
        set_micro(t, batch, mb, rc);
        ++f.checks;
        if (!models::estimate_memory(t).fits) continue;
      }
      f.fits = true;
      f.recompute = rc;
      f.micro_batch = mb;
      return f;
    }
  }
  return f;
}

}  // namespace

PlanCounts evaluate_candidates(std::vector<Candidate>& candidates, const PlanCatalog& catalog,
                               const PlanTarget& target, const models::Scenario& base, int jobs,
                               const CandidateLoader& load, const PlanProgress& progress) {
  const bool global_batch_key = base.global_batch > 0;
  // Layouts that differ only in the ZeRO stage form one work item, so a ZeRO-3 layout is
  // compared with the lower stages' fits before it is simulated.
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  for (std::size_t i = 0; i < candidates.size();) {
    std::size_t j = i + 1;
    while (j < candidates.size() && same_group(candidates[i], candidates[j]))
      ++j;
    groups.emplace_back(i, j);
    i = j;
  }
  std::atomic<std::size_t> memory_checks{0};
  std::atomic<std::size_t> simulated{0};
  const auto evaluate = [&](Candidate& c, const Candidate* first_in_group) {
    if (c.status == CandidateStatus::not_divisible) return;
    c.status = CandidateStatus::failed;
    const std::int64_t batch = c.replica_batch;
    // The layout's scenario at its largest micro-batch, loaded (and so validated) once; the
    // memory search varies recomputation and micro-batch on copies.
    c.micro_batch = c.micro_batches_to_try.front();
    c.layout_overrides = layout_overrides(c, batch, global_batch_key);
    const LoadedCandidate layout = load(c);
    const FitSearch fit = search_fit(layout.scenario, batch, c.micro_batches_to_try);
    memory_checks += fit.checks;
    if (!fit.fits) {
      c.status = CandidateStatus::no_fit;
      c.micro_batch = 0;
      c.layout_overrides.clear();
      c.failure = "does not fit in memory: " +
                  std::to_string(static_cast<int>(std::ceil(fit.peak_bytes / kGiB))) +
                  " GiB per device at micro-batch " +
                  std::to_string(c.micro_batches_to_try.back()) + " with full recomputation, " +
                  std::to_string(static_cast<int>(fit.capacity_bytes / kGiB)) + " GiB available";
      return;
    }
    c.recompute = fit.recompute;
    c.micro_batch = fit.micro_batch;
    c.microbatches = static_cast<int>(batch / fit.micro_batch);
    c.layout_overrides = layout_overrides(c, batch, global_batch_key);
    // ZeRO-3 adds parameter all-gathers to ZeRO-1's traffic (Rajbhandari et al. 2020, "ZeRO",
    // Sec. 7: 1.5x data parallelism's volume); it only pays when its memory buys less
    // recomputation or a larger micro-batch.
    if (c.zero == 3) {
      for (const Candidate* o = first_in_group; o != &c; ++o) {
        if (o->status == CandidateStatus::simulated && o->recompute == c.recompute &&
            o->micro_batch == c.micro_batch) {
          c.status = CandidateStatus::dominated;
          c.failure = "ZeRO-" + std::to_string(o->zero) +
                      " fits with the same recomputation and micro-batch";
          return;
        }
      }
    }
    const LoadedCandidate loaded = load(c);
    c.report = simulate_checked(loaded.scenario, loaded.label);
    ++simulated;
    // In a pipeline at a fixed global batch a larger micro-batch means fewer micro-batches and a
    // larger bubble ((K-1)/(M+K-1)), which can cost more than its better kernel efficiency gains:
    // the smallest micro-batch (it fits whenever a larger one does) is simulated too and the
    // faster of the two kept.
    const int smallest = c.micro_batches_to_try.back();
    if (c.pipeline > 1 && smallest != c.micro_batch) {
      Candidate small = c;
      small.micro_batch = smallest;
      small.microbatches = static_cast<int>(batch / smallest);
      small.layout_overrides = layout_overrides(small, batch, global_batch_key);
      const LoadedCandidate other = load(small);
      const models::StepReport r = simulate_checked(other.scenario, other.label);
      ++simulated;
      if (r.throughput_samples_per_s > c.report.throughput_samples_per_s) {
        c.micro_batch = small.micro_batch;
        c.microbatches = small.microbatches;
        c.layout_overrides = small.layout_overrides;
        c.report = r;
      }
    }
    const PlanOption& o = catalog.options[c.option];
    c.samples_per_s = c.report.throughput_samples_per_s;
    c.mfu = c.report.mfu;
    // With a convergence target the work is the steps to reach it at this layout's global batch
    // (cli/target_report.hpp): a larger batch needs fewer steps only down to S_min.
    if (const auto t = evaluate_target(loaded.scenario, c.report)) {
      c.to_target_steps = t->at_echo.steps;
      c.time_s = t->at_echo.time_s;
    } else {
      c.time_s = target.work_samples / c.samples_per_s;
    }
    c.price_per_hour = o.price_per_node_hour * c.nodes;
    c.cost = c.price_per_hour * c.time_s / 3600;
    if (!std::isfinite(c.time_s) || !std::isfinite(c.cost) || !(c.samples_per_s > 0)) {
      c.failure = "time or cost is not finite";
      return;
    }
    c.status = CandidateStatus::simulated;
    c.meets_target = target.samples_per_s ? c.samples_per_s >= *target.samples_per_s
                                          : c.time_s <= *target.time_s;
  };
  const std::atomic<bool> never{false};
  OrderedRunner runner(
      groups.size(), jobs,
      [&](std::size_t g) {
        for (std::size_t i = groups[g].first; i < groups[g].second; ++i) {
          Candidate& c = candidates[i];
          try {
            evaluate(c, &candidates[groups[g].first]);
          } catch (const std::exception& e) {
            c.status = CandidateStatus::failed;
            c.failure = e.what();
          }
        }
        return std::string();
      },
      never);
  std::size_t done = 0;
  for (std::size_t g = 0; runner.next(); ++g) {
    done = groups[g].second;
    if (progress) progress(done, candidates.size());
  }
  return {memory_checks.load(), simulated.load()};
}

std::vector<std::size_t> mark_pareto_front(std::vector<Candidate>& candidates) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].simulated()) order.push_back(i);
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
    if (!c.simulated() || !c.meets_target) continue;
    if (!best || c.cost < candidates[*best].cost ||
        (c.cost == candidates[*best].cost && c.time_s < candidates[*best].time_s)) {
      best = i;
    }
  }
  return best;
}

std::vector<std::size_t> mark_best_mfu(std::vector<Candidate>& candidates) {
  std::map<std::pair<std::size_t, int>, std::size_t> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!c.simulated()) continue;
    const auto key = std::make_pair(c.option, c.nodes);
    const auto it = best.find(key);
    if (it == best.end() || c.mfu > candidates[it->second].mfu) best[key] = i;
  }
  std::vector<std::size_t> out;
  for (const auto& [key, i] : best) {
    candidates[i].best_mfu = true;
    out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string layout_name(const Candidate& c) {
  std::string s = "dp" + std::to_string(c.data) + " tp" + std::to_string(c.tensor) + " pp" +
                  std::to_string(c.pipeline);
  if (c.virtual_stages > 1) s += " v" + std::to_string(c.virtual_stages);
  s += " z" + std::to_string(c.zero);
  if (c.micro_batch > 0) s += " mb" + std::to_string(c.micro_batch);
  if (c.recompute == models::Recompute::selective) s += " sel";
  if (c.recompute == models::Recompute::full) s += " full";
  return s;
}

}  // namespace trainsim::cli
