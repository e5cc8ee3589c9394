#pragma once
// One collective operation simulated as a message schedule on the flow-level network of a
// cluster, as NCCL/RCCL run it (channels, protocols, algorithms; see algorithms.hpp and
// protocol.hpp).
//
// Two ways to run a schedule:
// - message level (`exact`): every message is a flow on the FlowNetwork, every rank advances
//   through its phases on its own (process.hpp; also how a training step runs collectives on
//   its own engine and network);
// - phase-aggregated: phases run bulk-synchronously, each distinct phase solved once by a fluid
//   max-min run of its flows, and identical connected groups of flows inside a phase solved once
//   (runners.hpp). It never builds the cluster's graph (routes come from ClusterLayout), so it
//   covers every fabric (stars, fat trees, rail-optimised fabrics, rings, tori) at 65,536 ranks.
// Where every rank is alike in every phase both give the same time; pipelined trees differ by
// under 1% (tests/collectives/reference_test.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collectives/protocol.hpp"
#include "sim/hw/specs.hpp"

namespace trainsim::sim::collectives {

enum class Op { allreduce, allgather, reduce_scatter, broadcast, alltoall };
enum class Algorithm {
  automatic,  // "auto": the fastest of the library's algorithms and protocols (NCCL's tuner)
  ring,
  tree,                // one binary tree over the ranks, pipelined in chunks
  double_binary_tree,  // NCCL's tree: a chain in each node, two mirrored binary trees of nodes
  halving_doubling,
  hierarchical,  // pipelined: intra-node reduce-scatter, inter-node allreduce, intra allgather
  nvls,          // NVLink SHARP: the node's NVSwitch reduces and multicasts (one node)
  collnet,       // IB SHARP: intra reduce-scatter, the fabric's switches reduce, intra allgather
  parameter_server,
  topk,
  gtopk
};

const char* op_name(Op op);
const char* algorithm_name(Algorithm a);
// Throw InputError(where, ...) listing the valid names.
Algorithm parse_algorithm(std::string_view name, std::string_view where);
Op parse_op(std::string_view name, std::string_view where);
Protocol parse_protocol(std::string_view name, std::string_view where);

enum class Model { automatic, exact, aggregated };

struct CollectiveSpec {
  Op op = Op::allreduce;
  Algorithm algorithm = Algorithm::ring;
  std::optional<Protocol> protocol;  // unset: the fastest the library enables for the size
  double bytes = 0;  // dense payload per rank (allgather: the gathered output, nccl-tests style)
  double density = 0.001;  // topk / gtopk: k = density x elements
  Dtype dtype = Dtype::fp32;
  int ranks = 0;  // 0 = all accelerators of the cluster; else the first `ranks` accelerators
  std::vector<int> group;  // explicit members (global accelerator ranks); overrides `ranks`
  bool exact = false;      // force the message-level run, no phase aggregation
  // Extras (defaults are what the training step wants).
  bool charge_kernels = true;     // reduction / top-k / merge kernels on the accelerators
  bool include_selection = true;  // topk/gtopk: the residual + selection kernels before sending
  int chunks = 0;                 // pipeline chunks; 0 = automatic (1, tree-based: by size)
  int servers = 1;  // parameter_server: server hosts (the first `servers` nodes' hosts)
  Model model = Model::automatic;  // `exact` wins over this
};

struct LinkBytes {
  std::string name;
  double bytes = 0;  // both directions
};

struct CollectiveResult {
  double time_s = 0;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;  // nccl-tests: algbw x 2(P-1)/P (allreduce), (P-1)/P (allgather,
                                 // reduce_scatter, alltoall), 1 (broadcast)
  std::uint64_t events = 0;
  double wall_s = 0;
  int ranks = 0;
  std::vector<LinkBytes> link_bytes;  // the 32 busiest links, busiest first
  std::size_t links_used = 0;         // links that carried any byte
  bool aggregated = false;            // phase-aggregated model (else message-level)
  std::uint64_t flows = 0;            // messages of the schedule
  std::size_t phases = 0;
  int chunks = 1;
  int channels = 1;                       // parallel rings/trees
  std::int64_t k = 0;                     // topk / gtopk: selected elements per rank
  Algorithm algorithm = Algorithm::ring;  // the one that ran (auto: the chosen one)
  std::string protocol;                   // "LL", "LL128", "Simple"; "" without a library
};

CollectiveResult run_collective(const ClusterSpec& cluster, const CollectiveSpec& spec);

// nccl-tests bus-bandwidth factor for `op` on `ranks` ranks.
double busbw_factor(Op op, int ranks);

}  // namespace trainsim::sim::collectives
