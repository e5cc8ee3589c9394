#pragma once
// Builds the message schedule of a collective (see schedule.hpp) for a group of ranks of a
// cluster, the way NCCL/RCCL run it: several channels in parallel (rings entering and leaving
// each node on a NIC rail of their own; on fully connected nodes, rings on disjoint links), the
// protocol's caps on each channel's flows, reductions fused into the arriving data.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/kernels.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/collectives/schedule.hpp"

namespace trainsim::sim::collectives {

// The group's ranks on the cluster: logical rank r is accelerator members[r].
struct RankMap {
  std::vector<int> members;
  std::vector<int> node;     // logical rank -> group node (0..nodes-1, in order of appearance)
  std::vector<int> local;    // logical rank -> index among its node's members
  std::vector<int> node_id;  // group node -> cluster node
  int nodes = 0;
  int per_node = 0;  // members of every node when all nodes have as many, else 0
  int size() const { return static_cast<int>(members.size()); }
  // Logical rank of (group node n, local index i) when per_node > 0.
  int at(int n, int i) const { return n * per_node + i; }
  bool contiguous_nodes = false;  // logical ranks grouped by node in order (at() is valid)
};

// Throws InputError (where "--ranks" / "--group") for members outside the cluster or repeated.
RankMap make_rank_map(const ClusterSpec& cluster, const std::vector<int>& members);

// What extra endpoints (after ranks and hosts) mean.
enum class SwitchKind { none, node_switch, rail_root };

struct Plan {
  Schedule schedule{0};
  RankMap map;
  SwitchKind switches = SwitchKind::none;
  ProtocolParams protocol;  // modeled == false: plain links
  Algorithm algorithm = Algorithm::ring;
  int chunks = 1;
  int channels = 1;
  std::int64_t k = 0;
};

// Throws InputError for an operation the algorithm does not implement. `spec.algorithm` must not
// be automatic (run_collective chooses first); `protocol` is the one to run (ignored without a
// collective library).
Plan build_plan(const ClusterSpec& cluster, const CollectiveSpec& spec, const RankMap& map,
                const KernelCosts& kernels, Protocol protocol);

// NCCL's algorithm family of an algorithm (which tuning rows it uses).
AlgoFamily algorithm_family(Algorithm a);

// Elements selected per rank by the sparsified algorithms: max(1, ceil(density x elements)).
std::int64_t topk_count(double bytes, double density, Dtype dtype);

// Channels the library runs for `map` on `cluster` (the profile's count, else one per NIC rail,
// at least 2; 1 without a library).
int channel_count(const ClusterSpec& cluster, const RankMap& map);

// `cycles` directed Hamiltonian cycles of the complete digraph on n vertices sharing no arc
// (n - 1 of them where such a decomposition exists, found by a deterministic search; fewer from
// the rings of strides coprime with n otherwise): RCCL's rings over all 7 xGMI links of a fully
// connected MI300X node. Each cycle lists the vertices in visiting order.
std::vector<std::vector<int>> disjoint_rings(int n);

}  // namespace trainsim::sim::collectives
