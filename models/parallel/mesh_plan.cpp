#include "models/parallel/mesh_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "models/kernel_plan.hpp"
#include "models/parallel/partition.hpp"
#include "models/parallel/pipeline_schedule.hpp"
#include "models/zoo/tensor_parallel.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/input_error.hpp"
#include "sim/net/cluster_layout.hpp"

namespace trainsim::models {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

ZooModel rank_model_of(const Scenario& s) {
  return shard_tensor_parallel(s.model, s.tensor_parallel, s.sequence_parallel,
                               "scenario " + s.name + ": parallelism.tensor");
}

// The kernels of layers [first, first + count) for n samples launched back to back by one host
// thread (models/kernel_plan.hpp): what the balancer weighs.
double layers_s(const Scenario& s, const ZooModel& m, int first, int count, double n, Pass pass) {
  std::vector<Launch> launches;
  if (pass == Pass::forward) {
    for (int i = first; i < first + count; ++i)
      layer_launches(s, m.layers[static_cast<std::size_t>(i)], pass, n, launches);
  } else {
    for (int i = first + count; i-- > first;)
      layer_launches(s, m.layers[static_cast<std::size_t>(i)], pass, n, launches);
  }
  return dispatched_seconds(launches);
}

std::vector<double> layer_costs(const Scenario& s, const ZooModel& m, double n) {
  std::vector<double> costs;
  costs.reserve(m.layers.size());
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    const double f = layers_s(s, m, i, 1, n, Pass::forward);
    if (s.inference) {
      costs.push_back(f);
      continue;
    }
    costs.push_back(f + layers_s(s, m, i, 1, n, Pass::backward) +
                    (s.recompute == Recompute::full ? f : 0));
  }
  return costs;
}

std::vector<int> choose_balance(const Scenario& s, const ZooModel& m, double micro_samples) {
  if (!s.balance.empty()) return s.balance;
  const int chunks = s.pipeline_stages * s.virtual_stages;
  if (chunks == 1) return {static_cast<int>(m.layers.size())};
  return balance_by_cost(layer_costs(s, m, micro_samples), chunks);
}

std::vector<Chunk> make_chunks(const Scenario& s, const ZooModel& m,
                               const std::vector<int>& balance) {
  std::vector<Chunk> chunks;
  int first = 0;
  for (std::size_t c = 0; c < balance.size(); ++c) {
    Chunk ch;
    ch.first_layer = first;
    ch.layers = balance[c];
    ch.stage = static_cast<int>(c) % s.pipeline_stages;
    for (int i = first; i < first + ch.layers; ++i) {
      ch.params += m.layers[static_cast<std::size_t>(i)].params;
      ch.param_tensors += m.layers[static_cast<std::size_t>(i)].param_tensors;
    }
    chunks.push_back(ch);
    first += ch.layers;
  }
  return chunks;
}

// Bytes a layer keeps for backward per sample under the recomputation mode (full recomputation
// is handled per checkpoint segment by the caller). Selective recomputation drops the
// score-sized part of unfused attention (Korthikanti et al. 2022, Sec. 5: softmax output, its
// dropout mask and the dropped probabilities); fused attention keeps only row statistics anyway.
double kept_bytes(const Scenario& s, const Layer& l, double width) {
  if (s.recompute == Recompute::selective && !s.fused_attention) {
    return l.saved_bytes(width) - l.unfused_saved_elements * width - l.unfused_saved_mask_bytes;
  }
  return l.saved_bytes(width, s.fused_attention);
}

// Full recomputation stores only checkpoints and rebuilds one segment at a time in backward.
// GPipe pipelines (Huang et al. 2019, Sec. 2.3; torchgpipe) checkpoint each stage's input per
// micro-batch; Megatron-LM (1F1B, interleaved, or one stage) checkpoints every transformer
// layer's input (--recompute-granularity full, uniform, one layer); other single-device models
// use sqrt(L) segments (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost").
int checkpoint_segment(const Scenario& s, const ZooModel& m, int chunk_layers) {
  if (s.pipeline_stages > 1 && s.schedule == PipelineSchedule::gpipe) return chunk_layers;
  bool transformer = false;
  for (const Layer& l : m.layers)
    transformer = transformer || l.transformer.has_value();
  if (transformer) return 1;
  if (s.pipeline_stages > 1) return chunk_layers;
  return static_cast<int>(std::ceil(std::sqrt(static_cast<double>(chunk_layers))));
}

struct ChunkActivations {
  double stored_per_sample = 0;     // per in-flight micro-batch sample
  double transient_per_sample = 0;  // the segment rebuilt in backward (full recomputation)
  double live_per_sample = 0;       // the layer being computed: its input and output
};

ChunkActivations chunk_activations(const Scenario& s, const ZooModel& m, const Chunk& c) {
  ChunkActivations a;
  const double w = activation_bytes_per_element(s);
  for (int i = c.first_layer; i < c.first_layer + c.layers; ++i) {
    const Layer& l = m.layers[static_cast<std::size_t>(i)];
    a.live_per_sample = std::max(a.live_per_sample, (l.input_elements + l.output_elements) * w);
  }
  if (s.inference) return a;
  if (s.recompute != Recompute::full || c.layers < 2) {
    for (int i = c.first_layer; i < c.first_layer + c.layers; ++i)
      a.stored_per_sample += kept_bytes(s, m.layers[static_cast<std::size_t>(i)], w);
    return a;
  }
  const int segment = checkpoint_segment(s, m, c.layers);
  for (int start = c.first_layer; start < c.first_layer + c.layers; start += segment) {
    double seg = 0;
    for (int i = start; i < std::min(c.first_layer + c.layers, start + segment); ++i)
      seg += kept_bytes(s, m.layers[static_cast<std::size_t>(i)], w);
    a.transient_per_sample = std::max(a.transient_per_sample, seg);
    a.stored_per_sample += m.layers[static_cast<std::size_t>(start)].input_elements * w;
  }
  return a;
}

std::int64_t largest_batch(const Scenario& s, const ZooModel& m, const std::vector<Chunk>& chunks) {
  const auto fits = [&](std::int64_t n) {
    for (const StageMemory& mem : mesh_memory(s, m, chunks, n)) {
      if (!mem.fits) return false;
    }
    return true;
  };
  const std::int64_t lo_bound = s.microbatches;
  if (!fits(lo_bound)) return 0;
  // Activations grow linearly with the batch; the cap keeps a model without activations finite.
  const std::int64_t cap = sim::limits::kMaxBatchPerReplica;
  std::int64_t lo = lo_bound;
  std::int64_t hi = lo_bound * 2;
  while (hi < cap && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi >= cap) {
    if (fits(cap)) return cap;
    hi = cap;
  }
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

std::vector<StageMemory> mesh_memory(const Scenario& s, const ZooModel& m,
                                     const std::vector<Chunk>& chunks, std::int64_t batch) {
  const int k_stages = s.pipeline_stages;
  const int v = s.virtual_stages;
  const double micro = static_cast<double>(ceil_div(batch, s.microbatches));
  const double dp = s.data_parallel;
  // ZeRO (Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion
  // Parameter Models", Sec. 5): stage 1 shards the optimizer state (with the fp32 master copy of
  // mixed precision), 2 also the gradients, 3 also the parameters, over the data-parallel group.
  const double weight_w = weight_bytes_per_param(s);
  const double master_w = low_precision(s) && !s.inference &&
                                  s.framework.mixed_precision == sim::MixedPrecision::master_weights
                              ? 4.0
                              : 0.0;
  const double shard1 = s.zero >= 1 ? dp : 1.0;
  const double shard2 = s.zero >= 2 ? dp : 1.0;
  const double shard3 = s.zero >= 3 ? dp : 1.0;
  std::vector<StageMemory> out(static_cast<std::size_t>(k_stages));
  std::vector<double> params(static_cast<std::size_t>(k_stages), 0.0);
  std::vector<double> widest_layer_params(static_cast<std::size_t>(k_stages), 0.0);
  for (const Chunk& c : chunks) {
    params[static_cast<std::size_t>(c.stage)] += static_cast<double>(c.params);
    for (int i = c.first_layer; i < c.first_layer + c.layers; ++i) {
      widest_layer_params[static_cast<std::size_t>(c.stage)] =
          std::max(widest_layer_params[static_cast<std::size_t>(c.stage)],
                   static_cast<double>(m.layers[static_cast<std::size_t>(i)].params));
    }
  }
  for (int k = 0; k < k_stages; ++k) {
    StageMemory& mem = out[static_cast<std::size_t>(k)];
    const double p = params[static_cast<std::size_t>(k)];
    mem.weights_bytes = p * (weight_w - master_w) / shard3;
    if (s.zero >= 3) {
      // FSDP gathers a layer's parameters before using it and prefetches the next one: two
      // layers' worth of full parameters live at once (PyTorch FSDP's limit_all_gathers).
      mem.weights_bytes +=
          2 * widest_layer_params[static_cast<std::size_t>(k)] * activation_bytes_per_element(s);
    }
    mem.gradients_bytes = s.inference ? 0 : p * gradient_bytes_per_param(s) / shard2;
    const double residual =
        s.comm.compression == Compression::none || s.data_parallel < 2 || s.inference ? 0 : p * 4;
    mem.optimizer_state_bytes =
        s.inference ? 0 : p * (optimizer_state_bytes_per_param(s) + master_w) / shard1 + residual;
    // Activations: walk the stage's schedule, holding each forward's stored activations until
    // its backward; the peak adds the working set of the layer being computed and, with full
    // recomputation, the segment being rebuilt.
    std::vector<ChunkActivations> acts(static_cast<std::size_t>(v));
    for (std::size_t ci = 0; ci < chunks.size(); ++ci) {
      if (chunks[ci].stage != k) continue;
      acts[ci / static_cast<std::size_t>(k_stages)] = chunk_activations(s, m, chunks[ci]);
    }
    double live = 0;
    double transient = 0;
    for (const ChunkActivations& a : acts) {
      live = std::max(live, a.live_per_sample);
      transient = std::max(transient, a.transient_per_sample);
    }
    double stored = 0;
    double peak_stored = 0;
    mem.in_flight = 1;  // inference: the micro-batch being computed
    if (!s.inference) {
      int held = 0;
      for (const PipeOp& op :
           stage_schedule(s.schedule, k, k_stages, s.microbatches, s.grad_accum, false, v)) {
        const double bytes = acts[static_cast<std::size_t>(op.chunk)].stored_per_sample * micro;
        stored += op.forward ? bytes : -bytes;
        held += op.forward ? 1 : -1;
        peak_stored = std::max(peak_stored, stored);
        mem.in_flight = std::max(mem.in_flight, held);
      }
    }
    mem.activations_bytes = peak_stored + transient * micro;
    mem.workspace_bytes = s.workspace_bytes + live * micro;
    mem.peak_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_state_bytes +
                     mem.activations_bytes + mem.workspace_bytes;
    mem.capacity_bytes = s.cluster.accelerator.memory_capacity_bytes;
    mem.fits = mem.peak_bytes <= mem.capacity_bytes;
  }
  return out;
}

MeshPlan plan_mesh(const Scenario& s) {
  MeshPlan plan;
  plan.rank_model = rank_model_of(s);
  const ZooModel& m = plan.rank_model;
  plan.microbatches = s.microbatches;
  std::vector<int> balance;
  if (s.batch_max) {
    plan.batch_was_max = true;
    // The balance depends on the micro-batch size and the largest batch on the balance: start
    // from one sample per micro-batch and re-balance at the found size until it settles.
    balance = choose_balance(s, m, 1);
    std::int64_t best = largest_batch(s, m, make_chunks(s, m, balance));
    for (int iter = 0; iter < 4 && s.balance.empty() && best > 0; ++iter) {
      const std::vector<int> next =
          choose_balance(s, m, static_cast<double>(ceil_div(best, s.microbatches)));
      if (next == balance) break;
      balance = next;
      best = largest_batch(s, m, make_chunks(s, m, balance));
    }
    if (best == 0) {
      throw InputError("scenario " + s.name + ": batch_per_replica",
                       "\"max\": not even one sample per micro-batch fits in " +
                           s.cluster.accelerator.name + " memory with " +
                           std::to_string(s.pipeline_stages) + " stages and " +
                           std::to_string(s.microbatches) + " micro-batches");
    }
    plan.batch = best;
    plan.max_batch_that_fits = best;
  } else {
    plan.batch = s.batch_per_replica;
    balance = choose_balance(s, m, static_cast<double>(ceil_div(plan.batch, s.microbatches)));
    plan.max_batch_that_fits = largest_batch(s, m, make_chunks(s, m, balance));
  }
  plan.balance = balance;
  plan.chunks = make_chunks(s, m, balance);
  plan.memory = mesh_memory(s, m, plan.chunks, plan.batch);
  return plan;
}

int group_members_per_node(const sim::ClusterSpec& c, int size, int stride) {
  const int apn = std::max(1, c.accelerators_per_node);
  return stride >= apn ? 1 : std::max(1, std::min(size, apn / std::max(1, stride)));
}

sim::ClusterSpec group_view(const sim::ClusterSpec& c, int size, int stride) {
  sim::ClusterSpec v = c;
  const int apn = std::max(1, c.accelerators_per_node);
  const int per_node = group_members_per_node(c, size, stride);
  if (per_node == apn) return v;
  v.accelerators_per_node = per_node;
  if (v.intra_topology == sim::IntraTopology::torus2d)
    v.intra_topology = sim::IntraTopology::switched;
  v.intra_dims.clear();
  const bool shaped = c.inter_topology == sim::InterTopology::ring ||
                      c.inter_topology == sim::InterTopology::torus2d ||
                      c.inter_topology == sim::InterTopology::torus3d;
  // Torus and ring fabrics are shaped by their node count: keep it (the group uses the first
  // nodes); other fabrics get just the nodes the group spans.
  if (!shaped) v.nodes = std::max(1, (size + per_node - 1) / per_node);
  if (v.inter_link) {
    const double nics = static_cast<double>(c.nics_per_node) * per_node / apn;
    if (nics >= 1) {
      v.nics_per_node = static_cast<int>(std::floor(nics));
    } else {
      v.nics_per_node = 1;
      v.inter_link->bw_bytes_per_s *= nics;
    }
  }
  return v;
}

MeshStrides mesh_strides(const Scenario& s) {
  const int tp = s.tensor_parallel;
  const int dp = s.data_parallel;
  const int pp = s.pipeline_stages;
  switch (s.order) {
    case MeshOrder::tp_dp_pp:
      return {1, tp, tp * dp};
    case MeshOrder::tp_pp_dp:
      return {1, tp * pp, tp};
    case MeshOrder::dp_tp_pp:
      return {dp, 1, dp * tp};
  }
  return {1, tp, tp * dp};
}

StageLink stage_link(const Scenario& s) {
  StageLink link;
  if (s.pipeline_stages < 2) return link;
  const int d = mesh_strides(s).pipeline;
  const sim::ClusterLayout layout(s.cluster);
  std::vector<sim::Hop> hops;
  link.latency_s = layout.route(layout.accelerator(0), layout.accelerator(d), hops);
  link.bw_bytes_per_s = std::numeric_limits<double>::infinity();
  for (const sim::Hop& h : hops)
    link.bw_bytes_per_s = std::min(link.bw_bytes_per_s, layout.link(h.link).bw_bytes_per_s);
  const int apn = s.cluster.accelerators_per_node;
  if (d >= apn && s.cluster.inter_link) {
    // Every rank of the node sends across the boundary at once, over the node's NICs.
    link.bw_bytes_per_s = std::min(
        link.bw_bytes_per_s, s.cluster.inter_link->bw_bytes_per_s * s.cluster.nics_per_node / apn);
  }
  return link;
}

}  // namespace trainsim::models
