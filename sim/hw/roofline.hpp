#pragma once
// Kernel time on an accelerator: a roofline with achieved efficiencies plus launch overhead,
// max(flops / achieved FLOP/s, bytes / achieved bandwidth) + launch.

#include <stdexcept>
#include <string>

#include "sim/hw/specs.hpp"

namespace trainsim::sim {

inline double kernel_time_s(const AcceleratorSpec& a, Dtype dtype, double flops, double bytes) {
  const auto peak = a.peak(dtype);
  if (!peak) throw std::invalid_argument(a.name + " has no " + dtype_name(dtype) + " compute path");
  const double compute_s = flops / (*peak * a.compute_efficiency);
  const double memory_s = bytes / (a.memory_bw_bytes_per_s * a.memory_efficiency);
  return (compute_s > memory_s ? compute_s : memory_s) + a.kernel_launch_overhead_s;
}

}  // namespace trainsim::sim
