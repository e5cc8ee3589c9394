#include "sim/collectives/kernels.hpp"

#include <algorithm>

#include "sim/hw/kernel_model.hpp"

namespace trainsim::sim::collectives {

double KernelCosts::launch_s() const {
  return enabled ? accelerator.kernel_launch_overhead_s : 0.0;
}

double KernelCosts::memory_bound_s(KernelClass cls, double flops, double bytes) const {
  if (!enabled || (flops <= 0 && bytes <= 0)) return 0;
  Kernel k;
  k.cls = cls;
  k.dtype = dtype;
  k.flops = flops;
  k.bytes = bytes;
  return kernel_body_s(accelerator, k);
}

double KernelCosts::reduce_s(double bytes) const {
  const double elements = bytes / dtype_bytes(dtype);
  return memory_bound_s(KernelClass::elementwise, elements, 3 * bytes);
}

double KernelCosts::host_reduce_s(double bytes) const {
  if (!enabled || host.memory_bw_bytes_per_s <= 0) return 0;
  return 3 * bytes / host.memory_bw_bytes_per_s;
}

double KernelCosts::residual_s(double elements) const {
  return memory_bound_s(KernelClass::elementwise, elements, 3 * elements * dtype_bytes(dtype));
}

double KernelCosts::topk_select_s(double elements, double k) const {
  const int e = dtype_bytes(dtype);
  const double passes = std::max(1, e);  // one 8-bit digit per byte of the key
  return memory_bound_s(KernelClass::topk, passes * elements, passes * elements * e + 2 * k * e);
}

double KernelCosts::scatter_add_s(double count) const {
  const int e = dtype_bytes(dtype);
  return memory_bound_s(KernelClass::scatter, count, count * (2 * e) + 2 * count * e);
}

}  // namespace trainsim::sim::collectives
