#pragma once
// Builds the network of a cluster (ClusterSpec) as a Topology, and names its endpoints.
//
// Per node: one host; accelerators linked to it by host_link (PCIe). With p2p the accelerators
// also form the intra-node fabric (intra_link): a non-blocking switch, a ring, all pairs, or a 2-D
// torus; the host then forwards no accelerator traffic. Without p2p there is no usable intra-node
// fabric: accelerator -> host -> accelerator. Between nodes (inter_link), each node has
// nics_per_node NICs forming "rails": NIC k of every node joins the same star switch, fat tree,
// ring or torus. A NIC hangs off the host by a host_link (without p2p), or off accelerators by a
// host_link (with p2p, GPUDirect-style: accelerator i uses NIC i % nics_per_node).
// A fat tree is leaves of leaf_switch_ports nodes under one logical spine; each leaf's uplink
// carries (its downlink bandwidth) / oversubscription, so it is non-blocking at 1.

#include <vector>

#include "sim/hw/specs.hpp"
#include "sim/net/topology.hpp"

namespace trainsim::sim {

struct ClusterTopology {
  Topology topology;
  std::vector<VertexId> accelerators;       // by global rank: node * accelerators_per_node + local
  std::vector<VertexId> hosts;              // by node
  std::vector<std::vector<VertexId>> nics;  // [node][k]; empty without an inter-node fabric
  int accelerators_per_node = 1;

  VertexId accelerator(int rank) const { return accelerators.at(static_cast<std::size_t>(rank)); }
  VertexId host(int node) const { return hosts.at(static_cast<std::size_t>(node)); }
  int node_of_rank(int rank) const { return rank / accelerators_per_node; }
};

// Throws std::invalid_argument when the spec is inconsistent (e.g. torus dims that do not multiply
// to the count, several nodes without an inter-node fabric, a missing inter_link).
ClusterTopology build_cluster_topology(const ClusterSpec& spec);

}  // namespace trainsim::sim
