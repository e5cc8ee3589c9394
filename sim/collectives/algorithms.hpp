#pragma once
// Builds the message schedule of a collective (see schedule.hpp) for `ranks` ranks of a cluster.

#include <cstdint>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/kernels.hpp"
#include "sim/collectives/schedule.hpp"

namespace trainsim::sim::collectives {

struct Plan {
  Schedule schedule{0};
  int chunks = 1;
  int channels = 1;
  std::int64_t k = 0;
};

// Throws InputError for an operation the algorithm does not implement.
Plan build_plan(const ClusterSpec& cluster, const CollectiveSpec& spec, int ranks,
                const KernelCosts& kernels);

// Elements selected per rank by the sparsified algorithms: max(1, ceil(density x elements)).
std::int64_t topk_count(double bytes, double density, Dtype dtype);

}  // namespace trainsim::sim::collectives
