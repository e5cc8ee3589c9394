#pragma once
// The accelerator (and host) kernels a collective runs, as sim::Kernel descriptors priced by the
// kernel-time model (sim/hw/kernel_model.hpp). NCCL and RCCL run a collective as one kernel: its
// launch is paid once (launch_s), and the reductions inside it are kernel bodies without a
// launch gap. Top-k S-SGD's selection, merges and scatter-adds are separate kernels.
//
// This is the one model of Top-k / gTop-k costs: the training step's sparse exchange prices its
// selection here too (models/training_step.cpp).

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
  // Rate at which a reduction kernel body consumes incoming bytes (bytes / reduce_s(bytes) for a
  // large buffer): NCCL reduces data as it arrives, so this caps the arriving flow instead of
  // adding a serial kernel. Infinity when kernels are off.
  double reduce_rate_bytes_per_s() const;
  // The same on a parameter-server host (host memory bandwidth).
  double host_reduce_s(double bytes) const;
  // Error feedback: residual += gradient before selection, read 2 write 1 per element.
  double residual_s(double elements) const;
  // Top-k selection over `elements` values: radix select with 8-bit digits, one pass over the
  // values per byte of the key (4 for fp32), plus writing k values and k indices; the `topk`
  // class's achieved memory efficiency (hw_profiles/kernels) carries the measured throughput.
  double topk_select_s(double elements, double k) const;
  // What Top-k S-SGD runs before exchanging: residual accumulation, then selection (two kernels,
  // each with its launch).
  double topk_compress_s(double elements, double k) const;
  // Scatter-add of `count` sparse (value, index) pairs into a dense buffer.
  double scatter_add_s(double count) const;

  // The kernel descriptors.
  Kernel reduction(double bytes) const;
  Kernel topk(double elements, double k) const;

 private:
  double body_s(const Kernel& k) const;
};

}  // namespace trainsim::sim::collectives
