#pragma once
// The two ways to run a Plan on a cluster (see collective.hpp), and what a message of a plan
// costs on its route.

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/collectives/algorithms.hpp"
#include "sim/net/cluster_layout.hpp"

namespace trainsim::sim::collectives {

struct RunOutput {
  double time_s = 0;
  std::uint64_t events = 0;
  std::uint64_t messages = 0;                         // the schedule's messages
  std::vector<std::pair<LinkId, double>> link_bytes;  // links that carried bytes (both ways)
};

// Endpoint e of the plan's schedule as a vertex of the cluster (ranks, server hosts, switches).
VertexId endpoint_vertex(const ClusterLayout& layout, const Plan& plan, int e);

// A message's latency and wire bytes per payload byte on its route: the protocol's step latency
// for the route's transport class (network if any hop is, else NVLink if any hop is, else PCIe)
// or the route's own latency where larger; wire bytes = payload / (protocol wire efficiency x the
// route's lowest link efficiency). A plain schedule pays the route latency.
struct MessageCost {
  double latency_s = 0;
  double wire_per_byte = 1;
};
MessageCost message_cost(const ClusterLayout& layout, const ProtocolParams& protocol,
                         const std::vector<Hop>& hops, double route_latency_s);

// Message level: a CollectiveProcess on a private engine and a FlowNetwork over the materialized
// cluster topology.
RunOutput run_exact(const ClusterLayout& layout, const Plan& plan);

// Phase-aggregated: phases run one after another; each distinct phase is solved once by a fluid
// max-min run of its flows (same sharing as the FlowNetwork), and inside a phase each distinct
// connected group of flows (the same links' capacities, flows and sizes, in the same pattern,
// e.g. every node's NVLink traffic of a ring step) is solved once.
RunOutput run_aggregated(const ClusterLayout& layout, const Plan& plan);

}  // namespace trainsim::sim::collectives
