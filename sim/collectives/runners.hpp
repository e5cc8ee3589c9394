#pragma once
// The two ways to run a Schedule on a cluster (see collective.hpp).

#include <cstdint>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/schedule.hpp"

namespace trainsim::sim::collectives {

struct RunOutput {
  double time_s = 0;
  std::uint64_t events = 0;
  std::vector<LinkBytes> link_bytes;  // every link that carried bytes, in topology order
};

// Message level: every transfer is a flow on the FlowNetwork of the whole cluster; each endpoint
// advances through the phases on its own (dataflow), ranks' kernels run serially per accelerator.
RunOutput run_exact(const ClusterSpec& cluster, const Schedule& schedule);

// Phase-aggregated: phases run one after another; each distinct phase is solved once by a fluid
// max-min run of its flows (same sharing as the FlowNetwork). Needs a star (or no) inter-node
// fabric, whose routes are translations of a 2-node template's (aggregation_supported).
RunOutput run_aggregated(const ClusterSpec& cluster, const Schedule& schedule);

}  // namespace trainsim::sim::collectives
