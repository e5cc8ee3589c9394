#pragma once
// Alpha-beta cost of the gradient collectives a training step issues, per algorithm, on the
// cluster's bottleneck path. The training step runs each one as a timed operation on the
// device's communication stream. (The flow-level, message-by-message collectives of
// sim/collectives replace this when they land; until then this is the model, and its
// limitations are stated in README: no contention between concurrent buckets, uniform links.)

#include <string>

#include "models/scenario.hpp"

namespace trainsim::models {

struct PathCost {
  double alpha_s;         // per-message latency
  double bw_bytes_per_s;  // per-rank bandwidth
};

// The path a rank's ring traffic takes: NVLink/PCIe inside a node (through the host without
// peer-to-peer), the NIC share across nodes.
PathCost ring_path(const sim::ClusterSpec& c, int ranks);
// The link that bounds ring_path, for trace labels ("nvlink3", "pcie3-x16 via host", "eth-1g").
std::string ring_path_name(const sim::ClusterSpec& c, int ranks);

// Dense allreduce of `bytes` over `ranks` ranks.
double allreduce_time_s(const sim::ClusterSpec& c, const CommSpec& comm, int ranks, double bytes);
// Sparsified exchange of k = density x elements values (+ k indices), per the gTop-k paper:
// topk: AllGather a*log2P + 2(P-1)k*b; gtopk: a*log2P + 2k*log2P*b (b per element).
double sparse_allreduce_time_s(const sim::ClusterSpec& c, const CommSpec& comm, int ranks,
                               double elements, int value_bytes);

}  // namespace trainsim::models
