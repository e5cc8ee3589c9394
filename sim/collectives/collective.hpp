#pragma once
// One collective operation simulated as a message schedule on the flow-level network of a cluster.
//
// Two ways to run a schedule: `exact` (every message is a flow on the FlowNetwork, every rank
// advances through its phases on its own, contention and routing as in the network model), and
// phase-aggregated (the schedule's phases run bulk-synchronously; a phase's flows share links by
// the same weighted max-min model, and identical phases, e.g. the 2(P-1) steps of a ring, are
// solved once). On a star fabric the aggregated model never builds the P-rank topology: a route
// is a 2-node template route translated to the real nodes, so 65,536 ranks take seconds. Where
// every rank is alike in every phase (ring, halving-doubling, hierarchical, Bruck allgather on a
// star) both give the same times; see doc_drafts/coll.md for where they differ.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/hw/specs.hpp"

namespace trainsim::sim::collectives {

enum class Op { allreduce, allgather, reduce_scatter, broadcast };
enum class Algorithm {
  ring,
  tree,
  double_binary_tree,
  halving_doubling,
  hierarchical,
  parameter_server,
  topk,
  gtopk
};

const char* op_name(Op op);
const char* algorithm_name(Algorithm a);
// Throw InputError(where, ...) listing the valid names.
Algorithm parse_algorithm(std::string_view name, std::string_view where);
Op parse_op(std::string_view name, std::string_view where);

enum class Model { automatic, exact, aggregated };

struct CollectiveSpec {
  Op op = Op::allreduce;
  Algorithm algorithm = Algorithm::ring;
  double bytes = 0;  // dense payload per rank (allgather: the gathered output, nccl-tests style)
  double density = 0.001;  // topk / gtopk: k = density x elements
  Dtype dtype = Dtype::fp32;
  int ranks = 0;       // 0 = all accelerators of the cluster; else the first `ranks` accelerators
  bool exact = false;  // force the message-level run, no phase aggregation
  // Extras (defaults are what the training step wants).
  bool charge_kernels = true;  // reduction / top-k / merge kernels on the accelerators
  int chunks = 0;              // pipeline chunks; 0 = automatic (1, tree-based: by size)
  int servers = 1;             // parameter_server: server hosts (the first `servers` nodes' hosts)
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
                                 // reduce_scatter), 1 (broadcast)
  std::uint64_t events = 0;
  double wall_s = 0;
  int ranks = 0;
  std::vector<LinkBytes> link_bytes;  // the 32 busiest links, busiest first
  std::size_t links_used = 0;         // links that carried any byte
  bool aggregated = false;            // phase-aggregated model (else message-level)
  std::uint64_t flows = 0;            // messages of the schedule
  std::size_t phases = 0;
  int chunks = 1;
  int channels = 1;    // parallel rings (fully connected nodes use several)
  std::int64_t k = 0;  // topk / gtopk: selected elements per rank
};

CollectiveResult run_collective(const ClusterSpec& cluster, const CollectiveSpec& spec);

// Whether the phase-aggregated model covers `cluster` (a star or no inter-node fabric); others
// run message by message, whose cost grows with P x phases.
bool aggregation_supported(const ClusterSpec& cluster);

// nccl-tests bus-bandwidth factor for `op` on `ranks` ranks.
double busbw_factor(Op op, int ranks);

}  // namespace trainsim::sim::collectives
