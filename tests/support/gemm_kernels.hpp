#pragma once
// One GEMM as a library runs it, for the kernel-model tests.
#include "sim/hw/dtype.hpp"
#include "sim/hw/kernel.hpp"

namespace trainsim::test {

// An m x n x k GEMM of class `cls`: its FLOPs and GEMM view, and the DRAM bytes of its three
// matrices at the dtype's width unless `compute_only` (a compute-bound kernel with no bytes).
inline sim::Kernel gemm_kernel(double m, double n, double k, sim::Dtype dtype,
                               sim::KernelClass cls = sim::KernelClass::gemm,
                               bool compute_only = false) {
  sim::Kernel g;
  g.cls = cls;
  g.dtype = dtype;
  g.flops = 2 * m * n * k;
  if (!compute_only) g.bytes = (m * k + k * n + m * n) * sim::dtype_bytes(dtype);
  g.gemm = {m, n, k, 1};
  return g;
}

}  // namespace trainsim::test
