#include "models/collective_cost.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/kernel_plan.hpp"
#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_forms.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/kernels.hpp"
#include "sim/net/cluster_layout.hpp"

namespace trainsim::models {

namespace col = sim::collectives;

namespace {

// Gradients as the framework keeps them (models/kernel_plan.hpp): fp32 under autocast and in
// fp32/TF32 training, 16-bit with master weights.
sim::Dtype gradient_dtype(const Scenario& s) {
  if (gradient_bytes_per_param(s) >= 4) return sim::Dtype::fp32;
  return storage_dtype(s);
}

// Above this many ranks sim/collectives aggregates phases (message level below).
constexpr int kMessageLevelMaxRanks = 64;

// Latency of the route between two accelerators of the cluster (all of its links).
double route_latency_s(const sim::ClusterSpec& c, int from, int to) {
  sim::ClusterSpec two = c;
  two.nodes = std::min(c.nodes, std::max(from, to) / c.accelerators_per_node + 1);
  if (two.inter_topology == sim::InterTopology::ring ||
      two.inter_topology == sim::InterTopology::torus2d ||
      two.inter_topology == sim::InterTopology::torus3d) {
    two = c;  // their shape depends on the node count
  }
  const sim::ClusterLayout layout(two);
  std::vector<sim::Hop> hops;
  return layout.route(layout.accelerator(from), layout.accelerator(to), hops);
}

}  // namespace

PathCost ring_path(const sim::ClusterSpec& c, int ranks) {
  const int per_node = std::min(ranks, c.accelerators_per_node);
  PathCost p{0, c.intra_link.bw_bytes_per_s};
  if (per_node > 1) p.alpha_s = route_latency_s(c, 0, 1);
  if (!c.p2p) {
    // Without peer-to-peer each message is staged through host memory: two PCIe hops in series
    // (the route acc -> host -> acc), half the bandwidth each way.
    p.bw_bytes_per_s = c.host_link.bw_bytes_per_s / 2;
  }
  if (ranks > per_node && c.inter_link) {
    // A node's ranks share its NICs for the inter-node hops of the ring.
    const double nic_share = c.inter_link->bw_bytes_per_s * c.nics_per_node / per_node;
    p.bw_bytes_per_s = std::min(p.bw_bytes_per_s, nic_share);
    p.alpha_s = std::max(p.alpha_s, route_latency_s(c, per_node - 1, per_node));
  }
  return p;
}

std::string ring_path_name(const sim::ClusterSpec& c, int ranks) {
  const int per_node = std::min(ranks, c.accelerators_per_node);
  std::string name = c.p2p ? c.intra_link.name : c.host_link.name + " via host";
  if (ranks > per_node && c.inter_link) {
    const PathCost intra = ring_path(c, per_node);
    const double nic_share = c.inter_link->bw_bytes_per_s * c.nics_per_node / per_node;
    if (nic_share <= intra.bw_bytes_per_s) name = c.inter_link->name;
  }
  return name;
}

double allreduce_time_s(const sim::ClusterSpec& c, const CommSpec& comm, int ranks, double bytes) {
  if (ranks <= 1) return 0;
  const double p = ranks;
  const PathCost path = ring_path(c, ranks);
  const double log2p = std::ceil(std::log2(p));
  // Each rank reduces (P-1)/P of the data (ring, halving-doubling, hierarchical), a tree's inner
  // ranks twice the data: at the accelerator's reduction rate (sim/collectives/kernels.hpp).
  const sim::collectives::KernelCosts kernels{c.accelerator, c.host, sim::Dtype::fp32, true};
  const double reduce_s = kernels.reduce_s((p - 1) / p * bytes);
  if (comm.algorithm == col::Algorithm::tree ||
      comm.algorithm == col::Algorithm::double_binary_tree) {
    return 2 * log2p * path.alpha_s + 2 * bytes / path.bw_bytes_per_s + kernels.reduce_s(2 * bytes);
  }
  if (comm.algorithm == col::Algorithm::parameter_server) {
    // One server's link carries every rank's push and pull.
    return 2 * path.alpha_s + 2 * p * bytes / path.bw_bytes_per_s;
  }
  if (comm.algorithm == col::Algorithm::halving_doubling) {
    return 2 * log2p * path.alpha_s + 2 * (p - 1) / p * bytes / path.bw_bytes_per_s + reduce_s;
  }
  if (comm.algorithm == col::Algorithm::hierarchical && c.inter_link &&
      ranks > c.accelerators_per_node) {
    const double g = c.accelerators_per_node;
    const double n = p / g;
    const PathCost intra = ring_path(c, c.accelerators_per_node);
    const PathCost inter = ring_path(c, ranks);
    const double inter_bw = c.inter_link->bw_bytes_per_s * c.nics_per_node / g;
    const double intra_s = 2 * (g - 1) * (intra.alpha_s + bytes / g / intra.bw_bytes_per_s);
    const double inter_s = 2 * (n - 1) * (inter.alpha_s + bytes / g / n / inter_bw);
    return intra_s + inter_s + reduce_s;
  }
  return sim::collectives::closed_form::ring_allreduce_s(ranks, bytes, path.alpha_s,
                                                         1 / path.bw_bytes_per_s) +
         reduce_s;
}

double sparse_allreduce_time_s(const sim::ClusterSpec& c, const CommSpec& comm, int ranks,
                               double elements, int value_bytes) {
  if (ranks <= 1) return 0;
  const PathCost path = ring_path(c, ranks);
  const double k = std::max(1.0, std::ceil(comm.density * elements));
  // b is the time of one byte; "2k" counts the k values and their k indices (same width).
  const double b = 1 / path.bw_bytes_per_s;
  if (comm.compression == Compression::gtopk)
    return sim::collectives::closed_form::gtopk_allreduce_s(ranks, k, value_bytes, path.alpha_s, b);
  return sim::collectives::closed_form::topk_allgather_s(ranks, k, value_bytes, path.alpha_s, b);
}

CollectiveCoster::CollectiveCoster(const Scenario& s, int ranks, std::optional<sim::Dtype> dtype)
    : s_(s), ranks_(ranks), dtype_(dtype) {
  if (ranks_ <= 1 || s.inference) {
    model_name_ = "none";
  } else if (s.comm.model == CommModel::alpha_beta) {
    flow_level_ = false;
    model_name_ = "alpha-beta (communication.model)";
  } else {
    model_name_ = ranks_ > kMessageLevelMaxRanks ? "flow-level (phase-aggregated)" : "flow-level";
  }
}

CollectiveCoster::Priced CollectiveCoster::priced(double bytes, bool sparse,
                                                  sim::collectives::Op op) {
  col::CollectiveSpec spec;
  spec.op = op;
  spec.algorithm = sparse ? (s_.comm.compression == Compression::gtopk ? col::Algorithm::gtopk
                                                                       : col::Algorithm::topk)
                          : s_.comm.algorithm;
  spec.bytes = bytes;
  spec.density = s_.comm.density;
  spec.dtype = gradient_dtype();
  spec.ranks = ranks_;
  // The step charges the top-k selection as compute before the exchange (topk_selection_s).
  spec.include_selection = false;
  const col::CollectiveResult r = col::run_collective(s_.cluster, spec);
  events_ += r.events;
  return {r.time_s, r.channels};
}

const CollectiveCoster::Priced& CollectiveCoster::dense(double bytes) {
  auto [it, fresh] = dense_memo_.try_emplace(bytes);
  if (!fresh) return it->second;
  if (flow_level_) {
    it->second = priced(bytes, false);
  } else {
    std::vector<int> members(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r)
      members[static_cast<std::size_t>(r)] = r;
    it->second = {allreduce_time_s(s_.cluster, s_.comm, ranks_, bytes),
                  sim::collectives::channel_count(
                      s_.cluster, sim::collectives::make_rank_map(s_.cluster, members))};
  }
  return it->second;
}

sim::Dtype CollectiveCoster::gradient_dtype() const {
  return dtype_ ? *dtype_ : models::gradient_dtype(s_);
}

double CollectiveCoster::dense_s(sim::collectives::Op op, double bytes) {
  if (ranks_ <= 1 || bytes <= 0) return 0;
  if (op == sim::collectives::Op::allreduce) return dense_allreduce_s(bytes);
  auto [it, fresh] = op_memo_.try_emplace({static_cast<int>(op), bytes}, 0.0);
  if (!fresh) return it->second;
  if (flow_level_) {
    it->second = priced(bytes, false, op).time_s;
  } else {
    // A ring reduce-scatter or all-gather is one of the allreduce's two halves.
    it->second = allreduce_time_s(s_.cluster, s_.comm, ranks_, bytes) / 2;
  }
  return it->second;
}

double CollectiveCoster::dense_allreduce_s(double bytes) {
  if (ranks_ <= 1 || bytes <= 0) return 0;
  return dense(bytes).time_s;
}

int CollectiveCoster::dense_allreduce_channels(double bytes) {
  if (ranks_ <= 1 || bytes <= 0) return 0;
  return dense(bytes).channels;
}

double CollectiveCoster::sparse_allreduce_s(double elements) {
  if (ranks_ <= 1 || elements <= 0) return 0;
  const int value_bytes = static_cast<int>(sim::dtype_bytes(gradient_dtype()));
  if (!flow_level_)
    return sparse_allreduce_time_s(s_.cluster, s_.comm, ranks_, elements, value_bytes);
  auto [it, fresh] = sparse_memo_.try_emplace(elements, 0.0);
  if (fresh) it->second = priced(elements * value_bytes, true).time_s;
  return it->second;
}

}  // namespace trainsim::models
