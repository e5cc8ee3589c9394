#pragma once
// The one kernel-time model: what a kernel (sim/hw/kernel.hpp) costs on an accelerator.
//
//   time = device gap + max(compute time (+ GEMM latency), memory time), memory-bound kernels
//          at least their class's floor past the gap
//   compute time = flops / (peak[dtype] x clock x eff[class][dtype] x quantisation(m, n, batch)
//                  x k/(k + k_half))
//   memory time  = bytes / (DRAM bandwidth x eff_mem[class])
//
// - clock: the fraction of the rated boost clock the board sustains under its power limit
//   (sustained_clock_fraction below).
//
// - eff[class][dtype] is the achieved fraction of the dtype's peak on large, wave-aligned
//   problems, per library path (cuBLAS GEMM, cuDNN conv, depthwise, fused attention, RNN cells).
// - quantisation(m, n, batch) = useful tile area / launched tile area over whole waves: the output
//   is cut into tiles (the architecture's GEMM tile, or a smaller one when that fills the device
//   better, at a throughput penalty per halving; an operand narrower than 16 gets a tile as
//   narrow as the math allows: one row on SIMT math, 8 on matrix units), tiles run in waves of
//   `compute_units` (one tile per SM or CU at a time), so a GEMM of 1.1 waves costs 2.
//   GEMMs with a long K and few tiles use split-K, as cuBLAS and cuDNN's backward-filter
//   kernels do (not convolutions' forward and data-gradient kernels); of the
//   (tile, split-K) choices the one that finishes first is taken, split-K's fp32 partial sums
//   (written and read back once) counted as DRAM traffic.
// - k/(k + k_half): the main loop's prologue and epilogue, which short reductions cannot hide.
// - convolutions: Winograd-eligible ones need winograd_gain[dtype] times fewer multiplications,
//   in batched GEMMs reducing over the channels alone (fused F(2x2,3x3)), or, where the profile
//   offers nonfused F(4x4,3x3) (winograd_nonfused, CUDA-core math), a quarter of them in 36
//   batched GEMMs at the GEMM efficiency after and before DRAM passes of the tile transforms
//   (weight gradients alone where winograd_nonfused_weight_gradient_only: cuDNN 9 on Hopper);
//   the algorithm that finishes first is taken;
//   weight gradients and strided data gradients run at the profile's shares of eff (its
//   conv_weight_gradient, conv_strided_data_gradient), weight gradients further divided by
//   1 + conv_weight_gradient_input_load / (the filter taps that share each loaded input
//   element: R x S / stride^2, Kernel::input_tap_reuse); dilated ones compute in fp32 where the
//   library has no tensor-core algorithm for them (math_dtype below); on matrix units their
//   channel counts are padded to whole 16-byte vectors (8 fp16, 4 tf32 elements), which a
//   1- or 3-channel first layer pays for in full.
// - layout transposes: on libraries that run tensor-core convolutions in NHWC alone (cuDNN 8 and
//   9: the profile's nchw_tensor_core_transposes), a convolution on channels-first tensors pays
//   one copy-rate kernel per operand converted before it and per result converted after it
//   (layout_transposes_s below).
// - GEMMs on matrix units whose operand strides are not whole 16-byte vectors (Kernel::unaligned)
//   run at the profile's unaligned_gemm share of eff: Hopper's TMA-based cuBLAS kernels need
//   16-byte aligned strides, and the ones without it are slower.
// - recurrent steps: cuDNN's per-step GEMMs stream their weights at what their thread blocks
//   draw (recurrent_block_bandwidth); where the profile says, a data-gradient step at some
//   batches walks its reduction serially (recurrent_serial_data_gradient), and fp32 steps below
//   a batch run small-batch kernels at a FLOP rate per SM (forward) or a share of the fp32 peak
//   (data gradient), whatever the tiles (recurrent_narrow_batch; narrow_batch_step_s).
// - GEMM latency: each library GEMM or convolution on matrix units takes the profile's
//   gemm_latency[dtype] on top of its tiles' work, whatever its size (the pipeline's fill and
//   drain).
// - eff_mem[class]: achieved fraction of DRAM bandwidth per memory-bound class (streaming
//   pointwise, two-pass normalisation, irregular gathers, ...); a launched one runs at least
//   the profile's memory_floor[class] past the gap (its dependent chain of reads, block-wide
//   reductions and writes), which a pointwise op folded into its producer does not pay.
// - the device gap: the time between two back-to-back kernels on one stream (launch latency,
//   ramp-up and tail), which is what makes many small kernels slow even when the host keeps up.
// The tables live in hw_profiles/kernels/ (one per GPU architecture), each value sourced or
// calibrated on a named table; see that folder's README.

#include <span>

#include "sim/hw/kernel.hpp"
#include "sim/hw/specs.hpp"

namespace trainsim::sim {

// Sets a GEMM's stride alignment (Kernel::unaligned, Kernel::sub_word_aligned) from the operand
// strides its library call passes (leading dimensions, in elements of k.dtype): unaligned where
// one is not a whole 16-byte vector (the stride alignment of Hopper's Tensor Memory Accelerator),
// sub-word aligned where one is not even a whole 4-byte word (the least cp.async copies: PTX ISA,
// cp.async, cp-size 4, 8 or 16).
void set_operand_strides(Kernel& k, std::span<const double> strides);

// The elements of its row (Kernel::row_elements) that one warp of a row-wise kernel walks in
// turn: the whole row, but for a softmax row wider than one warp takes, which the warps of one
// block share.
double row_walk_elements(const Kernel& k);

// How PyTorch's TensorIterator reduce kernel lays out a reduction of Kernel::reduce_outputs
// outputs over Kernel::row_elements contiguous inputs each (pytorch/pytorch aten/src/ATen/native/
// cuda/Reduce.cuh, setReduceConfig): blocks of up to 512 threads, 32 lanes across the row and
// as many warps across outputs as the outputs fill; the row splits across a block's warps once
// each thread would sum at least min(16 x warps, 256) values, and across blocks once each would
// still sum 256 or more and the outputs leave the device's blocks idle (grid.x at most SMs x
// 2048 / threads, the resident blocks of an sm_80/sm_90 SM): max(min(those blocks / grid.x,
// values / 16), values / 256) blocks per output, which sum in global memory. `walk_elements`
// is each block's share of a row; `global_reduce` whether blocks meet in global memory, which
// costs a cudaMemsetAsync of the semaphores before the kernel and a pass of the last block to
// finish over the others' partials.
struct TensorIteratorReduce {
  double walk_elements = 0;
  bool global_reduce = false;
};
TensorIteratorReduce tensor_iterator_reduce(const AcceleratorSpec& a, const Kernel& k);

// Seconds `k` takes on `a`, the device gap included, and the layout transposes a convolution on
// channels-first tensors launches around it (layout_transposes_s). Throws std::invalid_argument
// when the accelerator has no path for the kernel's dtype.
double kernel_time_s(const AcceleratorSpec& a, const Kernel& k);

// The transposes cuDNN launches around a tensor-core convolution given channels-first (NCHW)
// tensors (Kernel::channels_first): its tensor-core kernels compute in NHWC, so each operand is
// converted before (nchwToNhwcKernel) and the result after (nhwcToNchwKernel), one kernel per
// tensor. None for SIMT math, a 1x1 stride-1 convolution (a GEMM over NCHW) or a layer of fewer
// channels than one 16-byte vector. The H200's TF32 ResNet-50 step at batch 64 launches 204 of
// them, 3.5 of its 31.6 ms (tests/reference_data/h200_profile_kernels.csv); its bf16 step,
// channels-last, none.
int layout_transpose_launches(const AcceleratorSpec& a, const Kernel& k);
double layout_transposes_s(const AcceleratorSpec& a, const Kernel& k);

// The time a memory-bound kernel's arithmetic takes to issue (Kernel::issue_instructions) at
// one instruction per FP32 lane per clock: half the device's fp32 FMA peak. The kernel takes the
// longer of this and its DRAM time.
double element_issue_s(const AcceleratorSpec& a, const Kernel& k);

// The same without the device gap: the kernel's own duration, for work fused into a larger
// kernel (e.g. the reductions inside one NCCL collective kernel).
double kernel_body_s(const AcceleratorSpec& a, const Kernel& k);

// The fraction of its rated boost clock `a` sustains under dense math: 1, unless its power limit
// cannot feed that clock. The architecture's profile gives one point of its SMs' DVFS curve under
// dense math (at unit_power_w per SM they sustain sustained_clock_hz) and how the clock they can
// sustain grows with the power per SM: as its 1/power_clock_exponent-th power (CMOS dynamic power
// ~ C V^2 f, the voltage rising along the curve). A board sustains that clock at its
// board_power / compute_units, capped at its rated boost clock, the clock its datasheet peaks are
// quoted at; its compute-bound kernels run slower by the ratio (its memory clock, and so
// memory-bound kernels, are not affected). This is what separates boards of one chip at
// different limits: an A10 (GA102, 150 W) from an RTX 3090 (GA102, 350 W), an RTX 6000 Ada
// (300 W) from an RTX 4090 (450 W), a T4 (70 W) from a Quadro RTX 8000 (260 W) (Jia et al.,
// 'Dissecting the NVidia Turing T4 GPU via Microbenchmarking', arXiv:1903.07486, on the T4's
// clock throttling under its power limit). The power per clock follows the math the board issues
// per clock in `math` against the reference's (reference_flops_per_clock): the RTX A6000 runs TF32
// at 512 FLOPs per clock per SM where the RTX 3090 runs 256, and sustains less clock doing so
// (on a TU102 board at 250 W, doubling the FP16 tensor rate per clock raised cuBLAS's throughput
// 1.36-1.64x, not 2x: nlzy/turing-unlock README).
double sustained_clock_fraction(const AcceleratorSpec& a, Dtype math);

// The dtype whose math a kernel runs in: its own, except a dilated convolution in a dtype the
// device computes on matrix units (tensor cores) where the architecture's library has no
// tensor-core algorithm for dilation (KernelEfficiency::dilated_conv_tensor_cores): fp32.
Dtype math_dtype(const AcceleratorSpec& a, const Kernel& k);

}  // namespace trainsim::sim
