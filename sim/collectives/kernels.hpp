#pragma once
// Accelerator (and host) kernel times a collective charges, from the kernel-time model
// (sim/hw/kernel_model.hpp).
// Reductions inside a collective run in the collective's own kernel (NCCL/RCCL launch one kernel
// per collective), so their per-step cost has no launch overhead; the launch is charged once.

#include <cstdint>

#include "sim/hw/kernel.hpp"
#include "sim/hw/specs.hpp"

namespace trainsim::sim::collectives {

struct KernelCosts {
  AcceleratorSpec accelerator;
  HostSpec host;
  Dtype dtype = Dtype::fp32;
  bool enabled = true;

  double launch_s() const;
  // Elementwise sum of a received buffer into the local one: read 2, write 1 per element.
  double reduce_s(double bytes) const;
  // The same on a parameter-server host (host memory bandwidth).
  double host_reduce_s(double bytes) const;
  // Error feedback: residual += gradient before selection, read 2 write 1 per element.
  double residual_s(double elements) const;
  // Top-k selection over `elements` values. Estimate: radix select with 8-bit digits, one pass
  // over the values per digit (4 for fp32), plus writing k values and k indices.
  double topk_select_s(double elements, double k) const;
  // Scatter-add of `count` sparse (value, index) pairs into a dense buffer.
  double scatter_add_s(double count) const;

 private:
  double memory_bound_s(KernelClass cls, double flops, double bytes) const;
};

}  // namespace trainsim::sim::collectives
