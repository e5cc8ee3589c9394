#include "sim/collectives/kernels.hpp"

#include <algorithm>
#include <limits>

#include "sim/hw/kernel_model.hpp"

namespace trainsim::sim::collectives {

double KernelCosts::launch_s() const {
  return enabled ? accelerator.kernel_launch_overhead_s : 0.0;
}

double KernelCosts::body_s(const Kernel& k) const {
  if (!enabled || (k.flops <= 0 && k.bytes <= 0)) return 0;
  return kernel_body_s(accelerator, k);
}

Kernel KernelCosts::reduction(double bytes) const {
  Kernel k;
  k.cls = KernelClass::elementwise;
  k.dtype = dtype;
  k.flops = bytes / dtype_bytes(dtype);
  k.bytes = 3 * bytes;
  return k;
}

Kernel KernelCosts::topk(double elements, double count) const {
  const int e = dtype_bytes(dtype);
  const double passes = std::max(1, e);  // one 8-bit digit per byte of the key
  Kernel k;
  k.cls = KernelClass::topk;
  k.dtype = dtype;
  k.flops = passes * elements;
  k.bytes = passes * elements * e + 2 * count * e;
  return k;
}

double KernelCosts::reduce_s(double bytes) const {
  return body_s(reduction(bytes));
}

double KernelCosts::reduce_rate_bytes_per_s() const {
  if (!enabled) return std::numeric_limits<double>::infinity();
  const double probe = 256.0 * 1024 * 1024;
  const double t = reduce_s(probe);
  return t > 0 ? probe / t : std::numeric_limits<double>::infinity();
}

double KernelCosts::host_reduce_s(double bytes) const {
  if (!enabled || host.memory_bw_bytes_per_s <= 0) return 0;
  return 3 * bytes / host.memory_bw_bytes_per_s;
}

double KernelCosts::residual_s(double elements) const {
  Kernel k;
  k.cls = KernelClass::elementwise;
  k.dtype = dtype;
  k.flops = elements;
  k.bytes = 3 * elements * dtype_bytes(dtype);
  return body_s(k);
}

double KernelCosts::topk_select_s(double elements, double k) const {
  return body_s(topk(elements, k));
}

double KernelCosts::topk_compress_s(double elements, double k) const {
  return launch_s() + residual_s(elements) + launch_s() + topk_select_s(elements, k);
}

double KernelCosts::scatter_add_s(double count) const {
  const int e = dtype_bytes(dtype);
  Kernel k;
  k.cls = KernelClass::scatter;
  k.dtype = dtype;
  k.flops = count;
  k.bytes = count * (2 * e) + 2 * count * e;
  return body_s(k);
}

}  // namespace trainsim::sim::collectives
