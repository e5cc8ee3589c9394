#include "models/collective_cost.hpp"

#include <algorithm>
#include <cmath>

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
  if (comm.algorithm == "tree") {
    return 2 * log2p * path.alpha_s + 2 * bytes / path.bw_bytes_per_s;
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

}  // namespace trainsim::models
