#include "sim/collectives/kernels.hpp"

#include <algorithm>
#include <limits>

#include "sim/hw/roofline.hpp"

namespace trainsim::sim::collectives {

namespace {

// Achieved fraction of the memory roofline of a single-slice GPU top-k (torch.topk's radix
// select over one flattened gradient, as Top-k/gTop-k S-SGD runs it: hclhkbu/gtopkssgd
// compression.py). measured: pytorch/pytorch#22812 (2019), Quadro GP100 (732 GB/s HBM2),
// PyTorch 1.1: torch.rand(2,000,000).topk(1000, sorted=False) takes 2.5576 s / 100 = 25.6 ms,
// 12.8 ns per element (a full sort takes 1.6 ns per element). With this kernel's model of
// 4 radix passes over 4-byte keys (16 bytes per element) that is 16 B / (12.8 ns x 732 GB/s).
// The per-architecture tables of the kernel model (hw_profiles/kernels/) replace this constant.
constexpr double kTopkMemoryEfficiency = 16.0 / (12.8e-9 * 732e9);

double class_efficiency(KernelClass c) {
  return c == KernelClass::topk ? kTopkMemoryEfficiency : 1.0;
}

}  // namespace

double KernelCosts::launch_s() const {
  return enabled ? accelerator.kernel_launch_overhead_s : 0.0;
}

// The kernel's own duration (no launch gap). Until the kernel-time model (sim/hw/kernel_model.hpp)
// is implemented this is the accelerator's roofline with the class's achieved memory fraction.
double KernelCosts::body_s(const Kernel& k) const {
  if (!enabled || (k.flops <= 0 && k.bytes <= 0)) return 0;
  const double roofline =
      kernel_time_s(accelerator, k.dtype, k.flops, k.bytes / class_efficiency(k.cls));
  return roofline - accelerator.kernel_launch_overhead_s;
}

Kernel KernelCosts::reduction(double bytes) const {
  const double elements = bytes / dtype_bytes(dtype);
  return Kernel{KernelClass::reduction, dtype, elements, 3 * bytes, {}};
}

Kernel KernelCosts::topk(double elements, double k) const {
  const int e = dtype_bytes(dtype);
  const double passes = std::max(1, e);  // one 8-bit digit per byte of the key
  return Kernel{KernelClass::topk, dtype, passes * elements, passes * elements * e + 2 * k * e, {}};
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
  return body_s(
      Kernel{KernelClass::elementwise, dtype, elements, 3 * elements * dtype_bytes(dtype), {}});
}

double KernelCosts::topk_select_s(double elements, double k) const {
  return body_s(topk(elements, k));
}

double KernelCosts::topk_compress_s(double elements, double k) const {
  return launch_s() + residual_s(elements) + launch_s() + topk_select_s(elements, k);
}

double KernelCosts::scatter_add_s(double count) const {
  const int e = dtype_bytes(dtype);
  return body_s(Kernel{KernelClass::scatter, dtype, count, count * (2 * e) + 2 * count * e, {}});
}

}  // namespace trainsim::sim::collectives
