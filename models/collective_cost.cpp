#include "models/collective_cost.hpp"

#include <algorithm>
#include <cmath>

#include "models/kernel_plan.hpp"
#include "sim/collectives/collective.hpp"

namespace trainsim::models {

PathCost ring_path(const sim::ClusterSpec& c, int ranks) {
  const int per_node = std::min(ranks, c.accelerators_per_node);
  PathCost p{c.intra_link.latency_s, c.intra_link.bw_bytes_per_s};
  if (!c.p2p) {
    // Without peer-to-peer each message is staged through host memory: two PCIe hops in series.
    p.alpha_s = 2 * c.host_link.latency_s;
    p.bw_bytes_per_s = c.host_link.bw_bytes_per_s / 2;
  }
  if (ranks > per_node && c.inter_link) {
    // A node's ranks share its NICs for the inter-node hops of the ring.
    const double nic_share = c.inter_link->bw_bytes_per_s * c.nics_per_node / per_node;
    p.bw_bytes_per_s = std::min(p.bw_bytes_per_s, nic_share);
    p.alpha_s = std::max(p.alpha_s, c.inter_link->latency_s);
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
  if (comm.algorithm == "tree" || comm.algorithm == "double_binary_tree") {
    return 2 * log2p * path.alpha_s + 2 * bytes / path.bw_bytes_per_s;
  }
  if (comm.algorithm == "parameter_server") {
    // One server's link carries every rank's push and pull.
    return 2 * path.alpha_s + 2 * p * bytes / path.bw_bytes_per_s;
  }
  if (comm.algorithm == "halving_doubling") {
    return 2 * log2p * path.alpha_s + 2 * (p - 1) / p * bytes / path.bw_bytes_per_s;
  }
  if (comm.algorithm == "hierarchical" && c.inter_link && ranks > c.accelerators_per_node) {
    const double g = c.accelerators_per_node;
    const double n = p / g;
    const PathCost intra = ring_path(c, c.accelerators_per_node);
    const double inter_bw = c.inter_link->bw_bytes_per_s * c.nics_per_node / g;
    const double intra_s = 2 * (g - 1) * (intra.alpha_s + bytes / g / intra.bw_bytes_per_s);
    const double inter_s = 2 * (n - 1) * (c.inter_link->latency_s + bytes / g / n / inter_bw);
    return intra_s + inter_s;
  }
  return 2 * (p - 1) * path.alpha_s + 2 * (p - 1) / p * bytes / path.bw_bytes_per_s;
}

double sparse_allreduce_time_s(const sim::ClusterSpec& c, const CommSpec& comm, int ranks,
                               double elements, int value_bytes) {
  if (ranks <= 1) return 0;
  const PathCost path = ring_path(c, ranks);
  const double k = std::max(1.0, std::ceil(comm.density * elements));
  const double log2p = std::ceil(std::log2(static_cast<double>(ranks)));
  // b is the time of one element; "2k" counts the k values and their k indices (same width).
  const double b = value_bytes / path.bw_bytes_per_s;
  if (comm.compression == "gtopk") return log2p * path.alpha_s + 2 * k * log2p * b;
  return log2p * path.alpha_s + 2 * (ranks - 1) * k * b;
}

namespace {

// sim/collectives runs up to this many ranks message by message in a fraction of a second per
// distinct size (measured: 256-rank ring of 25 MB); beyond it only fabrics with the
// phase-aggregated model stay fast.
constexpr int kMessageLevelMaxRanks = 256;

sim::collectives::Algorithm dense_algorithm(const std::string& name) {
  return sim::collectives::parse_algorithm(name, "communication.algorithm");
}

// Gradients as the framework keeps them (models/kernel_plan.hpp): fp32 under autocast and in
// fp32/TF32 training, 16-bit with master weights.
sim::Dtype gradient_dtype(const Scenario& s) {
  if (gradient_bytes_per_param(s) >= 4) return sim::Dtype::fp32;
  return s.precision == sim::Dtype::fp8 ? sim::Dtype::bf16 : s.precision;
}

}  // namespace

CollectiveCoster::CollectiveCoster(const Scenario& s, int ranks) : s_(s), ranks_(ranks) {
  const bool aggregated = sim::collectives::aggregation_supported(s.cluster);
  if (ranks_ <= 1 || s.inference) {
    model_name_ = "none";
  } else if (ranks_ > kMessageLevelMaxRanks && !aggregated) {
    flow_level_ = false;
    model_name_ = "alpha-beta (" + std::to_string(ranks_) +
                  " ranks on a fabric without the phase-aggregated flow model)";
  } else {
    model_name_ = ranks_ > kMessageLevelMaxRanks ? "flow-level (phase-aggregated)" : "flow-level";
  }
}

double CollectiveCoster::priced(double bytes, bool sparse) {
  namespace col = sim::collectives;
  col::CollectiveSpec spec;
  spec.op = col::Op::allreduce;
  spec.algorithm =
      sparse ? (s_.comm.compression == "gtopk" ? col::Algorithm::gtopk : col::Algorithm::topk)
             : dense_algorithm(s_.comm.algorithm);
  spec.bytes = bytes;
  spec.density = s_.comm.density;
  spec.dtype = gradient_dtype(s_);
  spec.ranks = ranks_;
  // The step charges top-k selection itself; dense reductions run inside the collective.
  spec.charge_kernels = !sparse;
  const col::CollectiveResult r = col::run_collective(s_.cluster, spec);
  events_ += r.events;
  return r.time_s;
}

double CollectiveCoster::dense_allreduce_s(double bytes) {
  if (ranks_ <= 1 || bytes <= 0) return 0;
  if (!flow_level_) return allreduce_time_s(s_.cluster, s_.comm, ranks_, bytes);
  auto [it, fresh] = dense_memo_.try_emplace(bytes, 0.0);
  if (fresh) it->second = priced(bytes, false);
  return it->second;
}

double CollectiveCoster::sparse_allreduce_s(double elements) {
  if (ranks_ <= 1 || elements <= 0) return 0;
  const int value_bytes = static_cast<int>(sim::dtype_bytes(gradient_dtype(s_)));
  if (!flow_level_)
    return sparse_allreduce_time_s(s_.cluster, s_.comm, ranks_, elements, value_bytes);
  auto [it, fresh] = sparse_memo_.try_emplace(elements, 0.0);
  if (fresh) it->second = priced(elements * value_bytes, true);
  return it->second;
}

}  // namespace trainsim::models
