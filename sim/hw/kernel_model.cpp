#include "sim/hw/kernel_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace trainsim::sim {

namespace {

// Split-K factors a library may choose for GEMMs with few output tiles and a long reduction
// (cuBLAS and CUTLASS split K across CTAs and reduce the partial sums).
constexpr double kSplitK[] = {1, 2, 4, 8, 16, 32};

struct TileChoice {
  double efficiency = 0;  // quantisation x tile throughput x main-loop efficiency
  double split = 1;
};

// The best (tile size, split-K) for a GEMM view: the fraction of the device's peak the tiles
// achieve, before the per-class efficiency.
TileChoice best_tiling(const AcceleratorSpec& a, const GemmShape& g) {
  const KernelEfficiency& e = a.kernels;
  const double units = std::max(1, a.compute_units);
  const double useful = g.m * g.n * g.batch;
  TileChoice best;
  // Full tile, half in n, half in both: libraries drop to smaller tiles when the big ones leave
  // SMs idle, at a lower per-tile rate (less operand reuse).
  double tile_throughput = 1;
  for (int halvings = 0; halvings < 3; ++halvings) {
    const double tm = halvings >= 2 ? e.tile_m / 2 : e.tile_m;
    const double tn = halvings >= 1 ? e.tile_n / 2 : e.tile_n;
    const double tiles = std::ceil(g.m / tm) * std::ceil(g.n / tn) * g.batch;
    for (const double split : kSplitK) {
      if (split > 1 && (tiles * split > 2 * units || g.k / split < 2 * e.k_half)) break;
      const double waves = std::ceil(tiles * split / units);
      const double quantisation = useful * split / (waves * units * tm * tn);
      const double k_each = g.k / split;
      const double main_loop = e.k_half > 0 ? k_each / (k_each + e.k_half) : 1.0;
      const double eff = std::min(1.0, quantisation) * tile_throughput * main_loop;
      if (eff > best.efficiency) best = {eff, split};
    }
    tile_throughput *= e.half_tile_throughput;
  }
  return best;
}

double memory_efficiency(const AcceleratorSpec& a, KernelClass c) {
  const auto cls = is_compute_class(c) ? KernelClass::copy : c;
  const double eff = a.kernels.memory[static_cast<std::size_t>(cls)];
  return eff > 0 ? eff : 1.0;
}

}  // namespace

double gemm_quantisation(const AcceleratorSpec& a, KernelClass cls, const GemmShape& g) {
  if (!is_compute_class(cls) || g.m <= 0 || g.n <= 0 || g.k <= 0) return 1.0;
  return best_tiling(a, g).efficiency;
}

double kernel_body_s(const AcceleratorSpec& a, const Kernel& k) {
  double compute_s = 0;
  double bytes = k.bytes;
  if (is_compute_class(k.cls) && k.flops > 0) {
    const auto peak = a.peak(k.dtype);
    const double eff = a.kernels.effective_compute(k.cls, k.dtype);
    if (!peak || eff <= 0) {
      throw std::invalid_argument(a.name + " (kernels " + a.kernels.name + ") has no " +
                                  dtype_name(k.dtype) + " path for " + kernel_class_name(k.cls) +
                                  " kernels");
    }
    double tiling = 1.0;
    if (k.gemm.m > 0 && k.gemm.n > 0 && k.gemm.k > 0) {
      const TileChoice t = best_tiling(a, k.gemm);
      tiling = t.efficiency;
      // Split-K partial sums are written and read back once in fp32.
      if (t.split > 1) bytes += 2 * (t.split - 1) * k.gemm.m * k.gemm.n * k.gemm.batch * 4;
    }
    compute_s = k.flops / (*peak * eff * std::max(tiling, 1e-6));
  }
  const double memory_s =
      bytes > 0 ? bytes / (a.memory_bw_bytes_per_s * memory_efficiency(a, k.cls)) : 0.0;
  return std::max(compute_s, memory_s);
}

double kernel_time_s(const AcceleratorSpec& a, const Kernel& k) {
  return a.kernel_launch_overhead_s + kernel_body_s(a, k);
}

}  // namespace trainsim::sim
