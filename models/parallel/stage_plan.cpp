#include "models/parallel/stage_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "models/collective_cost.hpp"
#include "models/kernel_plan.hpp"
#include "models/parallel/partition.hpp"
#include "models/parallel/pipeline_schedule.hpp"
#include "sim/core/input_error.hpp"
#include "sim/net/cluster_topology.hpp"
#include "sim/net/routing.hpp"

namespace trainsim::models {

namespace {

double act_bytes(const Scenario& s) {
  return sim::dtype_bytes(s.precision == sim::Dtype::fp8 ? sim::Dtype::bf16 : s.precision);
}

// The stage's kernels for layers [first, first + count) and n samples, launched back to back by
// its host thread (models/kernel_plan.hpp, the same launches as the data-parallel step).
double layers_s(const Scenario& s, int first, int count, double n, Pass pass) {
  std::vector<Launch> launches;
  if (pass == Pass::forward) {
    for (int i = first; i < first + count; ++i)
      layer_launches(s, s.model.layers[static_cast<std::size_t>(i)], pass, n, launches);
  } else {
    for (int i = first + count; i-- > first;)
      layer_launches(s, s.model.layers[static_cast<std::size_t>(i)], pass, n, launches);
  }
  return dispatched_seconds(launches);
}
double layer_forward_s(const Scenario& s, int i, double n) {
  return layers_s(s, i, 1, n, Pass::forward);
}
double layer_backward_s(const Scenario& s, int i, double n) {
  return layers_s(s, i, 1, n, Pass::backward);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Per-layer cost of one micro-batch of n samples, as the balancer weighs it.
std::vector<double> layer_costs(const Scenario& s, double n) {
  std::vector<double> costs;
  costs.reserve(s.model.layers.size());
  for (int i = 0; i < static_cast<int>(s.model.layers.size()); ++i) {
    const double f = layer_forward_s(s, i, n);
    costs.push_back(
        s.inference ? f : f + layer_backward_s(s, i, n) + (s.recompute == Recompute::full ? f : 0));
  }
  return costs;
}

std::vector<int> choose_balance(const Scenario& s, double micro_samples) {
  if (!s.balance.empty()) return s.balance;
  return balance_by_cost(layer_costs(s, micro_samples), s.pipeline_stages);
}

std::int64_t largest_batch(const Scenario& s, const std::vector<int>& balance) {
  const auto fits = [&](std::int64_t n) {
    for (const StageMemory& m : stage_memory(s, balance, n)) {
      if (!m.fits) return false;
    }
    return true;
  };
  const std::int64_t lo_bound = s.microbatches;
  if (!fits(lo_bound)) return 0;
  // Activations grow linearly with the batch; the cap keeps a model without activations finite.
  constexpr std::int64_t kCap = std::int64_t{1} << 30;
  std::int64_t lo = lo_bound;
  std::int64_t hi = lo_bound * 2;
  while (hi < kCap && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi >= kCap && fits(kCap)) return kCap;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

struct LinkPath {
  double latency_s = 0;
  double bw_bytes_per_s = std::numeric_limits<double>::infinity();
};

// The path from stage k's device to stage k+1's (replica 0 sits on ranks 0 .. K-1).
std::vector<LinkPath> stage_links(const Scenario& s) {
  std::vector<LinkPath> paths;
  if (s.pipeline_stages < 2) return paths;
  const sim::ClusterTopology topo = sim::build_cluster_topology(s.cluster);
  sim::Router router(topo.topology);
  for (int k = 0; k + 1 < s.pipeline_stages; ++k) {
    const sim::Route& r = router.route(topo.accelerator(k), topo.accelerator(k + 1));
    LinkPath p;
    p.latency_s = r.latency_s;
    for (const sim::Hop& h : r.hops)
      p.bw_bytes_per_s = std::min(p.bw_bytes_per_s, topo.topology.link(h.link).bw_bytes_per_s);
    paths.push_back(p);
  }
  return paths;
}

// The cluster as stage k's allreduce sees it: its R peers are K ranks apart, so a node holds
// apn/K of them, and the node's K stage-rings share its NICs.
sim::ClusterSpec peer_view(const Scenario& s) {
  sim::ClusterSpec c = s.cluster;
  const int apn = s.cluster.accelerators_per_node;
  c.accelerators_per_node = std::max(1, apn / s.pipeline_stages);
  if (c.inter_link)
    c.inter_link->bw_bytes_per_s *= static_cast<double>(c.accelerators_per_node) / apn;
  return c;
}

}  // namespace

std::vector<StageMemory> stage_memory(const Scenario& s, const std::vector<int>& balance,
                                      std::int64_t batch) {
  std::vector<StageMemory> out;
  const double w = act_bytes(s);
  const std::int64_t micro_hi = ceil_div(batch, s.microbatches);
  int first = 0;
  for (int k = 0; k < static_cast<int>(balance.size()); ++k) {
    StageMemory m;
    double p = 0;
    double saved_per_sample = 0;
    double widest = 0;
    for (int i = first; i < first + balance[static_cast<std::size_t>(k)]; ++i) {
      const Layer& l = s.model.layers[static_cast<std::size_t>(i)];
      p += static_cast<double>(l.params);
      saved_per_sample += l.saved_bytes(w, s.fused_attention);
      widest = std::max(widest, (l.input_elements + l.output_elements) * w);
    }
    const double boundary_per_sample =
        s.model.layers[static_cast<std::size_t>(first)].input_elements * w;
    m.weights_bytes = p * weight_bytes_per_param(s);
    m.gradients_bytes = s.inference ? 0 : p * gradient_bytes_per_param(s);
    m.optimizer_state_bytes = s.inference ? 0 : p * optimizer_state_bytes_per_param(s);
    if (s.inference) {
      m.activations_bytes = static_cast<double>(micro_hi) * widest;
    } else {
      const int in_flight =
          peak_in_flight(s.schedule, k, s.pipeline_stages, s.microbatches, s.grad_accum);
      // GPipe holds the whole round's N samples; 1F1B holds in_flight micro-batches.
      const double stored = s.schedule == PipelineSchedule::gpipe
                                ? static_cast<double>(batch)
                                : static_cast<double>(std::min<std::int64_t>(in_flight * micro_hi,
                                                                             batch * s.grad_accum));
      // Re-materialization keeps each stored micro-batch's stage input and rebuilds one
      // micro-batch's activations at a time: O(N + (L/K)(N/M)) instead of O(N L/K).
      m.activations_bytes =
          s.recompute == Recompute::full
              ? stored * boundary_per_sample + static_cast<double>(micro_hi) * saved_per_sample
              : stored * saved_per_sample;
    }
    m.workspace_bytes = s.workspace_bytes;
    m.peak_bytes = m.weights_bytes + m.gradients_bytes + m.optimizer_state_bytes +
                   m.activations_bytes + m.workspace_bytes;
    m.capacity_bytes = s.cluster.accelerator.memory_capacity_bytes;
    m.fits = m.peak_bytes <= m.capacity_bytes;
    out.push_back(m);
    first += balance[static_cast<std::size_t>(k)];
  }
  return out;
}

StagePlan plan_stages(const Scenario& s) {
  StagePlan plan;
  plan.microbatches = s.microbatches;
  if (s.batch_max) {
    plan.batch_was_max = true;
    // The balance depends on the micro-batch size and the largest batch on the balance: start
    // from one sample per micro-batch and re-balance at the found size until it settles.
    std::vector<int> balance = choose_balance(s, 1);
    std::int64_t best = largest_batch(s, balance);
    for (int iter = 0; iter < 4 && s.balance.empty() && best > 0; ++iter) {
      const std::vector<int> next =
          choose_balance(s, static_cast<double>(ceil_div(best, s.microbatches)));
      if (next == balance) break;
      balance = next;
      best = largest_batch(s, balance);
    }
    if (best == 0) {
      throw InputError("scenario " + s.name + ": batch_per_replica",
                       "\"max\": not even one sample per micro-batch fits in " +
                           s.cluster.accelerator.name + " memory with " +
                           std::to_string(s.pipeline_stages) + " stages and " +
                           std::to_string(s.microbatches) + " micro-batches");
    }
    plan.batch = best;
    plan.balance = balance;
    plan.max_batch_that_fits = best;
  } else {
    plan.batch = s.batch_per_replica;
    plan.balance = choose_balance(s, static_cast<double>(ceil_div(plan.batch, s.microbatches)));
    plan.max_batch_that_fits = largest_batch(s, plan.balance);
  }
  const std::int64_t micro_lo = plan.batch / s.microbatches;
  const std::int64_t micro_hi = ceil_div(plan.batch, s.microbatches);
  const double sizes[2] = {static_cast<double>(micro_lo), static_cast<double>(micro_hi)};
  const std::vector<StageMemory> memory = stage_memory(s, plan.balance, plan.batch);
  const std::vector<LinkPath> links = stage_links(s);
  const sim::ClusterSpec peers = peer_view(s);
  const double w = act_bytes(s);
  const double grad_w = gradient_bytes_per_param(s);
  int first = 0;
  for (int k = 0; k < s.pipeline_stages; ++k) {
    StageCosts c;
    c.first_layer = first;
    c.layers = plan.balance[static_cast<std::size_t>(k)];
    int tensors = 0;
    for (int i = first; i < first + c.layers; ++i) {
      c.params += s.model.layers[static_cast<std::size_t>(i)].params;
      tensors += s.model.layers[static_cast<std::size_t>(i)].param_tensors;
    }
    for (int z = 0; z < 2; ++z) {
      const double f = layers_s(s, first, c.layers, sizes[z], Pass::forward);
      c.forward_s[z] = f;
      if (!s.inference) c.backward_s[z] = layers_s(s, first, c.layers, sizes[z], Pass::backward);
      if (!s.inference && s.recompute == Recompute::full) c.recompute_s[z] = f;
    }
    if (k + 1 < s.pipeline_stages) {
      const Layer& last = s.model.layers[static_cast<std::size_t>(first + c.layers - 1)];
      const LinkPath& path = links[static_cast<std::size_t>(k)];
      for (int z = 0; z < 2; ++z) {
        c.send_bytes[z] = sizes[z] * last.output_elements * w;
        c.send_s[z] = path.latency_s + c.send_bytes[z] / path.bw_bytes_per_s;
      }
    }
    const double p = static_cast<double>(c.params);
    if (!s.inference) {
      c.allreduce_s = allreduce_time_s(peers, s.comm, s.data_parallel, p * grad_w);
      // The stage's optimizer step, launched as the data-parallel step launches it.
      std::vector<Launch> opt;
      optimizer_launches(s, p, tensors, opt);
      c.optimizer_s = dispatched_seconds(opt);
    }
    c.memory = memory[static_cast<std::size_t>(k)];
    c.in_flight = s.inference ? 1
                              : peak_in_flight(s.schedule, k, s.pipeline_stages, s.microbatches,
                                               s.grad_accum);
    plan.stages.push_back(c);
    first += c.layers;
  }
  return plan;
}

}  // namespace trainsim::models
