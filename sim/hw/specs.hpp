#pragma once
// Plain, validated descriptions of hardware, as loaded from hw_profiles/ (see
// sim/config/profile_library.hpp). Simulated components take these structs; they never read
// files. All quantities are SI base units carried in the member's name.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/hw/dtype.hpp"
#include "sim/hw/kernel.hpp"

namespace trainsim::sim {

// Achieved efficiencies of one GPU architecture's kernel libraries (a hw_profiles/kernels/
// profile), used by the kernel-time model (sim/hw/kernel_model.hpp).
struct KernelEfficiency {
  std::string name;
  std::string description;
  // Achieved fraction of the dtype's peak FLOP/s on large, wave-aligned problems, per compute
  // class and dtype; 0 where the profile gives none (see effective_compute()).
  std::array<std::array<double, kDtypeCount>, kKernelClassCount> compute{};
  // Achieved fraction of DRAM bandwidth per memory-bound class (compute classes use copy's).
  std::array<double, kKernelClassCount> memory{};
  // The shortest a launched kernel of a memory-bound class runs past the device gap, per class (0
  // where the profile gives none): its dependent chain of DRAM reads, block-wide reductions and
  // writes, which no amount of bandwidth shortens (a layer norm's two passes over a row, a
  // softmax's max and sum, dropout's random-number setup). Measured on the H200 at 2^10-2^16
  // elements: 0.3-0.4 us for a copy or an add, 2-5 us for a layer norm, a softmax or a sum
  // (tests/reference_data/h200_kernels_memory.csv).
  std::array<double, kKernelClassCount> memory_floor_s{};
  // What each element of a row adds to that floor for a row-wise kernel (a layer norm's or a
  // softmax's row: sim::Kernel::row_elements), per class (0 where the profile gives none). Such a
  // kernel gives each row to one block or warp, whose threads walk the row in turns through its
  // passes; however few the rows, the kernel lasts as long as one row does (per element one warp
  // walks: kernel_model.hpp, row_walk_elements). Measured on the H200
  // at 2^10-2^18 elements: layer norms of 4096-wide rows take 6.5-7 us where 1024-wide ones take
  // 3.3-3.5, softmaxes of 1024-wide rows 4.1-4.9 us where 128-wide ones take 2.3-2.4
  // (tests/reference_data/h200_kernels_memory.csv). For a reduction PyTorch's TensorIterator
  // runs (Kernel::reduce_outputs), per element of one block's share of its row
  // (kernel_model.hpp, tensor_iterator_reduce).
  std::array<double, kKernelClassCount> row_element_latency_s{};
  double tile_m = 128;  // output tile of the architecture's main GEMM kernels
  double tile_n = 128;
  double half_tile_throughput = 1;  // a tile of half the area runs at this fraction of the rate
  // The same for the convolution library's implicit-GEMM kernels, where the profile gives it (0:
  // half_tile_throughput). They are a kernel family of their own, whose narrower tiles keep more
  // of their rate: the im2col operand they gather serves every filter tap that covers a pixel, so
  // a tile with fewer output channels still reuses it (cuDNN's scudnn_128x32 and 128x64 kernels
  // beside its 128x128 ones; sim/hw/kernel_model.cpp, fastest_tiling_s).
  double conv_half_tile_throughput = 0;
  // Library GEMMs on SIMT math (cuBLAS, and cuDNN's recurrent steps, which call its kernels): an
  // operand narrower than narrow_operand_below columns (or rows) runs on tiles at least
  // narrow_operand_tile wide, where the library has no narrow kernel for it; 0: none (tiles
  // down to the operand's own width). cuBLAS 7.5-8 on Maxwell and Pascal: DeepBench's GEMMs of
  // N = 8 and 16 take the same time, and longer than those of N = 32 with the same M and K
  // (results/train: P100 M4096 K4096 N16 404 us, N32 172 us), where cuBLAS 10 on Volta and
  // Turing runs N = 16 in less time than N = 32 (sim/hw/kernel_model.cpp, fastest_tiling_s).
  double narrow_operand_below = 0;
  double narrow_operand_tile = 0;
  // The least GEMM_M of a convolution's tile on matrix units, where their MMA instruction fixes
  // it; 0: none (down to the narrowest the math allows). Hopper's wgmma is m64nNk16 (m64nNk8 for
  // TF32): a warpgroup computes 64 rows of GEMM_M at a time (PTX ISA, "Asynchronous Warpgroup
  // Level Matrix Multiply-Accumulate Instructions", wgmma.mma_async shapes), and cuDNN's
  // implicit-GEMM convolutions put the filters on GEMM_M in the weight gradient (GEMM_M = K,
  // GEMM_N = C x R x S, GEMM_K = N x P x Q; pixels on GEMM_M in the forward and data-gradient
  // passes: NVIDIA/cutlass media/docs/implicit_gemm_convolution.md), so a weight gradient of 16
  // or 32 filters fills a quarter or half of each tile (sim/hw/kernel_model.cpp,
  // fastest_tiling_s).
  double conv_matrix_unit_min_tile_m = 0;
  double k_half = 0;  // K at which a GEMM's main loop reaches half its efficiency
  // The DRAM bandwidth one thread block of the main tile draws in the library's recurrent step
  // GEMMs (cuDNN's RNN): its loads in flight over the memory latency (Little's law). Those GEMMs,
  // narrow and never split, stream their weights at what their blocks draw (sim/hw/
  // kernel_model.cpp, blocks_bw_bytes_per_s); 0 where the profile gives none (the device's rate).
  double recurrent_block_bw_bytes_per_s = 0;
  // The batches at which the library's recurrent data-gradient step (cuDNN's dh_{t-1} = W^T dg)
  // runs a kernel that walks its reduction serially, one dependent memory access per element,
  // and the cycles (at the board's boost_clock) each element takes. cuDNN 5-6 on Pascal at a
  // batch of 32: DeepBench's backward-data LSTM steps there take 4h x 97-145 ns at every hidden
  // size h from 256 to 4096 (results/train: P100, GTX 1080 Ti, TITAN Xp, TITAN X Pascal), linear
  // in h where every tiled GEMM grows as h^2, and 3-4.5x the time of the same cells at batches 16
  // and 64 (sim/hw/kernel_model.cpp, serial_data_gradient_s). Empty: no such batch.
  std::vector<double> serial_data_gradient_batches;
  double serial_data_gradient_cycles_per_element = 0;
  // Recurrent steps (cuDNN's RNN) of a batch below narrow_batch_below run the library's
  // small-batch kernels, whose time is their FLOPs at a fixed rate per compute unit and clock
  // (the board's boost_clock), in fp32: narrow_batch_forward_flops_per_cycle for the forward
  // step's h_{t-1} W_hh; the data gradient's W_hh^T dg at narrow_batch_data_gradient_peak_fraction
  // of the fp32 peak (a rate per lane).
  // cuDNN 5-6 on Pascal: DeepBench's LSTM forward steps at batches 8 and 16 run at 0.96-1.10
  // TFLOP/s on the P100 and 0.63-0.69 on the GTX 1080 Ti, TITAN Xp and TITAN X Pascal from h =
  // 1536 to 4096, 13-16 FLOP per cycle per SM on both chips (sim/hw/kernel_model.cpp,
  // narrow_batch_step_s). 0: none (tiled like any GEMM).
  double narrow_batch_below = 0;
  double narrow_batch_forward_flops_per_cycle = 0;
  double narrow_batch_data_gradient_peak_fraction = 0;
  // Per dtype: how many times fewer multiplications the library's Winograd convolutions need
  // for 3x3 stride-1 filters, net of their transforms (Lavin and Gray, 'Fast Algorithms for
  // Convolutional Neural Networks', arXiv:1509.09308: F(2x2,3x3) needs 2.25x fewer, F(4x4,3x3)
  // 4x fewer); 0 where the profile gives none (no Winograd path: implicit GEMM).
  std::array<double, kDtypeCount> winograd_gain{};
  // The fewest input channels for which the library takes a Winograd algorithm (fused or
  // nonfused) in any pass; 0: no floor. DeepBench records cuDNN 5-7.6's forward choice
  // (results/train, fwd_algo): an implicit GEMM for every 3x3 stride-1 layer of 1-16 input
  // channels on all six of its GPUs, and of 32 on the Maxwell and Pascal ones.
  double winograd_min_channels = 0;
  // Whether the library also offers nonfused Winograd for 3x3 (F(4x4,3x3)) and 5x5
  // (F(5x5,5x5)) stride-1 filters (cuDNN's *_ALGO_WINOGRAD_NONFUSED, forward, data and filter
  // gradients): a transform kernel expands the input into 6x6 or 9x9 tiles
  // (winogradForwardData4x4, winogradForwardData9x9_5x5), batched GEMMs (the library's own
  // SGEMM) multiply the tiles by the transformed filters over the channels, and an output
  // transform folds them back: 4x or 7.7x fewer multiplications than the direct convolution,
  // paid for in DRAM passes over 2.25x or 3.24x expanded tiles (sim/hw/kernel_model.cpp).
  bool winograd_nonfused_3x3 = false;
  bool winograd_nonfused_5x5 = false;
  // Whether the library offers nonfused Winograd to weight gradients only. cuDNN 9.19 on the H200
  // (tests/reference_data/h200_kernels_conv.csv, PyTorch's autotuner on): fp32 3x3 weight
  // gradients run at up to twice the fp32 peak's rate (C256 28x28 K512 N16: 29.6 GFLOP in 0.226
  // ms, 131 TFLOP/s against a 67 TFLOP/s peak), which only fewer multiplications explain, while
  // the forward pass of the same layer takes 0.911 ms (32 TFLOP/s), where Winograd would have
  // been the faster algorithm.
  bool winograd_nonfused_weight_gradient_only = false;
  // Per dtype: the fraction of the forward convolutions' efficiency that the library's
  // weight-gradient (backward-filter) convolutions reach. Their reduction runs over every
  // sample and output position and their output is the small filter tensor, so they tile and
  // split worse than forward and data-gradient ones; 0 where the profile gives none (priced as
  // forward).
  std::array<double, kDtypeCount> conv_weight_gradient{};
  // Per dtype: what loading the input operand costs a weight-gradient kernel of a 1x1 filter,
  // relative to its math. The backward-filter GEMM's columns are the filter's C x R x S taps,
  // and one loaded input element serves the R x S taps that cover it
  // (Kernel::input_tap_reuse), so the cost per multiply-add falls as the filter grows: the
  // efficiency is divided by 1 + this / input_tap_reuse (kernel_model.cpp, body_as_s).
  // DeepBench's SIMT weight gradients of 5x5 filters run at the forward's efficiency while 1x1
  // ones run at 0.55-0.75 of it on every board. 0 where the profile gives none.
  std::array<double, kDtypeCount> conv_weight_gradient_input_load{};
  // Per dtype: the fraction of a convolution's streaming bandwidth (the copy-class DRAM
  // bandwidth) that the library's weight-gradient kernels draw while they read the input and the
  // output gradient. A backward-filter kernel's output is the small filter tensor, so its blocks
  // are few slices of one long reduction over N x P x Q, each streaming its two operands panel by
  // panel. DeepBench's fp32 weight gradients of few filters and long reductions (C64 112x112 K64,
  // C256 56x56 K64, C192 28x28 K64, 1x1: results/train) take the time of reading both operands at
  // 17-24% of DRAM bandwidth on the P100, GTX 1080 Ti, TITAN Xp, M40, T4 and V100 alike (HBM2,
  // GDDR5X, GDDR5, GDDR6): C64 112x112 K64 N16 takes 0.64-1.67 ms where its math at peak takes
  // 0.13-0.24 ms, and 1.7x as long on the GTX 1080 Ti as on the P100, whose FLOP rate is lower
  // and bandwidth 1.5x higher. 0 where the profile gives none (a convolution's streaming
  // bandwidth). Tensor-core weight gradients read faster (V100 fp16: 54-70% on the same layer).
  std::array<double, kDtypeCount> conv_weight_gradient_bandwidth{};
  // Per dtype: the fraction of the convolutions' efficiency that the library's data gradients of
  // strided convolutions reach. That gradient is the transposed convolution, which spreads each
  // output gradient over stride_h x stride_w input positions (Dumoulin and Visin, 'A guide to
  // convolution arithmetic for deep learning', arXiv:1603.07285, Sec. 4.5: equivalent to a
  // convolution over the input with stride - 1 zeros inserted between units); the library's
  // kernels do part of that zero work. 0 where the profile gives none (priced as any
  // convolution).
  std::array<double, kDtypeCount> conv_strided_data_gradient{};
  // Per dtype: the fraction of the convolutions' efficiency that the library's data gradients of
  // strided convolutions reach where they skip the inserted zeros: a filter at least as long as
  // its stride on both axes and at least kPhaseSplitMinChannels input channels
  // (kernel_model.cpp). Such a gradient splits into stride_h x stride_w phases, each a stride-1
  // convolution with ceil(R / stride) x ceil(S / stride) of the filter's taps, the missing ones
  // zero (Kernel::strided_tap_waste). 0 where the profile gives none (conv_strided_data_gradient
  // prices them all).
  std::array<double, kDtypeCount> conv_phase_split_data_gradient{};
  // Per dtype: the fraction of the GEMM efficiency that the library's GEMMs reach on matrix
  // units when an operand's stride (Kernel::unaligned: for a linear layer its input or output
  // features, never its rows) is not a whole number of 16-byte vectors. Hopper's cuBLAS kernels
  // load their tiles with the Tensor Memory Accelerator, whose tensor maps need 16-byte aligned
  // strides (CUDA Driver API, cuTensorMapEncodeTiled: 'globalStrides ... must be a multiple of
  // 16'); a misaligned GEMM runs kernels without it. 0 where the profile gives none (aligned or
  // not, one efficiency).
  std::array<double, kDtypeCount> unaligned_gemm{};
  // Per dtype: the same share for a GEMM an operand stride of which is not even a whole number
  // of 4-byte words (Kernel::sub_word_aligned: an odd number of 16-bit elements, as GPT-2's
  // 50,257-word vocabulary). Ampere's and Hopper's non-TMA GEMM kernels stage their tiles with
  // cp.async, which copies 4, 8 or 16 bytes (PTX ISA, cp.async), so such an operand is loaded
  // through registers, element by element (CUTLASS's align1 kernels). 0 where the profile gives
  // none (priced at unaligned_gemm).
  std::array<double, kDtypeCount> sub_word_aligned_gemm{};
  // Per dtype: the fraction of the GEMM efficiency that the library's GEMMs on matrix units reach
  // when both operands are MN-major (GemmOperands::both_mn_major). Hopper's wgmma reads its B
  // operand from shared memory and, for TF32 (as for 8-bit types), only K-major: the transpose
  // qualifiers are for 16-bit types alone (PTX ISA, wgmma.mma_async, imm-trans-a and
  // imm-trans-b). One MN-major operand can be made the A operand, which may come from registers;
  // with two, one of them must be transposed on its way through shared memory. 0 where the
  // profile gives none (one efficiency whatever the layout).
  std::array<double, kDtypeCount> mn_major_gemm{};
  // Per dtype: the share of DRAM bandwidth at which the library's SIMT GEMMs (not on matrix
  // units) stream their operands when both are K-major (GemmOperands::both_k_major: cuBLAS's "TN",
  // a linear layer's forward). SIMT GEMM kernels stage a tile of each operand that spans the
  // output side (M or N) and a few steps of K: a 128 x 8 tile of an M-major operand is eight
  // runs of 512 contiguous bytes, of a K-major one 128 runs of 32 bytes, each in a different
  // DRAM page. Where a narrow N leaves the GEMM streaming its large operand, that costs its
  // bandwidth; where the math bounds it, it costs nothing. 0 where the profile gives none.
  std::array<double, kDtypeCount> k_major_simt_bandwidth{};
  // Per dtype: what each of the library's GEMMs on matrix units (KernelClass::gemm) takes on top
  // of its tiles' work, whatever its size: the pipeline's fill and drain (Hopper's cuBLAS
  // kernels set up TMA descriptors and barriers, then wait a DRAM round trip before the first
  // wgmma). 0 where the profile gives none. The H200's bf16 and TF32 GEMMs under 20 us ran 2-4
  // us longer than their tiles' work (tests/reference_data/h200_kernels_gemm.csv), its fp32
  // (SIMT) ones did not. The library's convolutions on matrix units (cuDNN 9's sm90_xmma
  // implicit-GEMM kernels, the same TMA and wgmma pipeline) take it too: the H200's small bf16
  // and TF32 convolutions (3-30 us) ran 1-4 us longer than their tiles' work. Charged to them,
  // h200_kernels went from 20.6% / 21.5% (shape 21.9% / 22.0%) to 19.9% / 20.7% (21.1% /
  // 21.1%) before the conv values were refitted; while first layers were priced on tensor cores,
  // 2-8x fast, it had made that table's shape worse (25.3% / 24.8% from 24.4% / 23.9%).
  std::array<double, kDtypeCount> gemm_latency_s{};
  // Per dtype: the same for the library's convolutions (cuDNN's implicit-GEMM kernels), on matrix
  // units or not, where the profile gives it; else convolutions on matrix units take
  // gemm_latency_s. The H200's bf16 C256 14x14 K1024 1x1/2 N8 forward, a cuDNN convolution,
  // takes 5.22 us where the cuBLAS GEMM of the same multiply-adds over the same 392 output
  // positions (C512 7x7 K512 1x1/1 N8, pointwise_conv_gemm) takes 3.56 us
  // (tests/reference_data/h200_kernels_conv.csv).
  std::array<double, kDtypeCount> conv_latency_s{};
  // The clock the architecture's SMs sustain under a power cap (sim/hw/kernel_model.hpp,
  // sustained_clock_fraction): a board that can give each compute unit unit_power_w sustains
  // sustained_clock_hz under dense math, and the clock it can sustain grows as the power per unit
  // to the 1/power_clock_exponent (dynamic power ~ C V^2 f, the voltage rising with the clock).
  // 0: the profile gives none (every board holds its rated boost clock).
  double sustained_clock_hz = 0;
  double unit_power_w = 0;
  double power_clock_exponent = 0;
  // Per dtype: the FLOPs per clock per compute unit of the math that unit_power_w was stated for
  // (the reference board's). A board whose math runs r per clock draws r / this times the power
  // per clock (its datapaths switch that much more): workstation and data-center GA102/AD102
  // boards run tensor math with FP32 accumulation at twice the GeForce boards' rate per clock.
  // 0 where the profile gives none (the board's rate is taken as the reference's).
  std::array<double, kDtypeCount> reference_flops_per_clock{};
  // Whether the architecture's convolution library has tensor-core algorithms for dilated
  // convolutions; where not, they compute in fp32 (sim/hw/kernel_model.hpp, math_dtype). A
  // scenario's dilated_conv_tensor_cores overrides it for the library build it ran on.
  bool dilated_conv_tensor_cores = true;
  // Whether the convolution library runs its tensor-core convolutions on NHWC alone, transposing
  // channels-first operands around them (sim/hw/kernel_model.hpp, layout_transposes_s): cuDNN 8
  // and 9 (nchwToNhwcKernel and nhwcToNchwKernel in cudnn::engines_precompiled). cuDNN 7's
  // NCHW tensor-core kernels read NCHW themselves.
  bool nchw_tensor_core_transposes = false;
  // Whether the convolution library has tensor-core forward kernels for inputs of few channels
  // that fill a tile's depth with several filter taps (CUTLASS's kFewChannels and kFixedChannels
  // iterators for first layers of 1-8 channels). Where not, the channels a convolution reduces
  // over pad to the tile's depth at every tap (sim/hw/kernel_model.cpp, channel_padded).
  bool conv_few_channel_kernels = true;
  // Whether the convolution library runs convolutions whose input has fewer channels than one
  // 16-byte vector (a first layer's 1 or 3: Kernel::input_channels) on its fp32 SIMT kernels
  // whatever the dtype, TF32 and 16-bit ones alike but for 16-bit weight gradients (below;
  // sim/hw/kernel_model.hpp, math_dtype).
  // cuDNN 9.19 on the H200 does: its TF32 first layers (C1 161x700 5x20/2 and 5x5/2, C1 48x480
  // and C3 224x224 3x3, C3 108x108 3x3/2) take their fp32 time in 27 of 30 passes, within 5%, and
  // its bf16 forward passes 0.6-1.2x of it (tests/reference_data/h200_kernels_conv.csv), where
  // tensor cores at any padding would have run them several times faster. cuDNN 7's tensor-core
  // kernels run them padded (conv_few_channel_kernels above: Volta, Turing). Its 16-bit weight
  // gradients stay on tensor cores, padded to the tile's depth (sim/hw/kernel_model.cpp,
  // math_dtype and channel_padded).
  bool conv_few_channel_simt = false;
  // Whether the convolution library hands a pointwise convolution's forward and data gradient
  // (1x1, stride 1, unpadded, ungrouped: Kernel::pointwise_gemm, a plain GEMM over the channels)
  // on matrix units to the BLAS library's GEMM kernels, which are priced as GEMMs
  // (sim/hw/kernel_model.cpp, kernel_body_s).
  bool pointwise_conv_gemm = false;

  // The efficiency for (class, dtype): the given value, else bf16 <-> fp16 share one (same tensor
  // cores, same libraries), else 0 (no path).
  double effective_compute(KernelClass c, Dtype d) const;
};

struct AcceleratorSpec {
  std::string name;
  std::string description;
  // Peak dense FLOP/s per dtype; nullopt where the device has no such path.
  std::array<std::optional<double>, kDtypeCount> peak_flops_per_s{};
  double memory_bw_bytes_per_s = 0;
  // What a streaming copy measures on the board (CUDA's bandwidthTest device to device), where a
  // measurement is published; it stands in for the kernels profile's copy fraction of
  // memory_bw_bytes_per_s, and the other memory-bound classes keep their share of it. GDDR5
  // Tesla boards keep ECC check bits in the same DRAM, so they stream well below the fraction an
  // architecture's HBM or ECC-off boards reach.
  std::optional<double> streaming_bw_bytes_per_s;
  double memory_capacity_bytes = 0;
  // Device-side time between two back-to-back kernels on one stream (launch latency, ramp-up,
  // tail): paid once per kernel even when the host keeps the queue full.
  double kernel_launch_overhead_s = 0;
  int compute_units = 1;  // SMs (NVIDIA), CUs (AMD), cores (TPU/IPU): GEMM tiles run in waves
  // The board's power limit (datasheet TDP / maximum board power) and the rated boost clock its
  // datasheet peaks are quoted at; nullopt where the profile gives none (the rated clock is held).
  std::optional<double> board_power_w;
  std::optional<double> boost_clock_hz;
  KernelEfficiency kernels;
  std::optional<double> peak(Dtype d) const { return peak_flops_per_s[static_cast<int>(d)]; }
};

// How a training framework drives the device (a hw_profiles/frameworks/ profile): what the host
// thread spends per kernel it launches and per step, where it waits for the device, which kernels
// it fuses, and how it keeps weights and runs the optimizer. The dispatching host thread runs
// ahead of the device stream, so small models and small batches come out host-bound.
enum class Fusion {
  none,       // every kernel launched as written (eager)
  pointwise,  // pointwise kernels fused into their producer (XLA, torch.compile/Inductor)
};
enum class MixedPrecision {
  autocast,        // fp32 weights and gradients, 16-bit copies cast per step (torch.amp, TF/Keras)
  master_weights,  // 16-bit weights and gradients plus an fp32 master copy (apex O2, MXNet)
};
// Which memory-bound ops a mixed-precision step runs in fp32.
enum class AmpFp32Ops {
  // The framework's fp32 list (softmax, layer norm, losses) and nothing else: torch.amp casts
  // the listed ops' inputs up and the next GEMM casts their outputs back down.
  listed,
  // TensorFlow's automatic mixed precision graph rewrite (grappler): an op runs in 16 bits only
  // if it lies between two allow-list ops (MatMul, BatchMatMul, Conv2D, cuDNN RNNs) with no
  // deny-list op (Softmax, Mean, Sum, Exp, Log, Pow) upstream of it on the way: everything
  // downstream of a softmax or a layer norm's Mean stays fp32 until the next MatMul
  // (tensorflow/core/grappler/optimizers/auto_mixed_precision.cc,
  // PropagateBlackFwdThroughClearAndGray and AddClearAndGrayToWhiteIfBetweenWhite).
  graph_rewrite,
};
// Where a 16-bit autocast step's weight casts are issued from, which sets their host cost.
enum class AmpWeightCasts {
  // A framework op of their own, dispatched as the forward's other ops: NVIDIA Apex O1's Python
  // wrappers call .half() on each argument (apex/amp/utils.py, cached_cast); TensorFlow's AMP
  // graph rewrite inserts Cast nodes that its executor runs as any other node.
  framework_op,
  // From C++, inside the dispatch of the op that takes the weight: torch.amp's Autocast key calls
  // at::_to_copy (aten/src/ATen/autocast_mode.cpp, cached_cast). No Python runs for it, so the
  // host pays what an op the C++ autograd engine dispatches costs (host_backward_per_kernel_s).
  dispatcher,
};
// Which kernels an LSTM layer launches (the zoo's lstm() has both forms).
enum class RnnKernels {
  cudnn,          // cuDNN's RNN: all steps' input projections as one GEMM, then per step one
                  // recurrent GEMM and one gate kernel; weight gradients as one GEMM at the end
  tf_block_lstm,  // TensorFlow's BlockLSTM op (LSTMBlockFusedCell): per step concat [x, h], one
                  // GEMM over both, the gate kernel; backward per step also accumulates the weight
                  // gradient with a GEMM of its own
};
// Which kernels a training-mode batch norm launches.
enum class BatchNormKernels {
  cudnn,  // cuDNN's, one kernel each way, whatever the dtype (TensorFlow, MXNet)
  // PyTorch's choice: cuDNN's, except for bf16 activations, which run its native kernels
  // (aten/src/ATen/native/Normalization.cpp, _select_batch_norm_backend)
  native_for_bf16,
};
// The layout of the activations a framework hands to its convolutions.
enum class MemoryFormat {
  // NCHW: PyTorch's default (torch.contiguous_format); cuDNN's tensor-core kernels transpose it
  // (sim/hw/kernel_model.hpp, layout_transposes_s)
  channels_first,
  channels_last,  // NHWC: PyTorch's torch.channels_last, TensorFlow's and JAX's convolutions
};
// The names the framework profiles and scenarios give them.
inline constexpr std::array<std::pair<const char*, MemoryFormat>, 2> kMemoryFormatNames{{
    {"channels_first", MemoryFormat::channels_first},
    {"channels_last", MemoryFormat::channels_last},
}};
enum class OptimizerKernels {
  per_tensor,    // a few kernels per parameter tensor (PyTorch for-loop optimizers, MXNet)
  multi_tensor,  // foreach / multi-tensor apply: kernels over groups of tensors
  fused,         // one fused kernel per group of tensors (apex FusedAdam, torch fused=True, XLA)
};

struct FrameworkSpec {
  std::string name;
  std::string description;
  double host_forward_per_kernel_s = 0;    // Python op + dispatcher + launch, forward
  double host_backward_per_kernel_s = 0;   // autograd engine + launch, backward
  double host_optimizer_per_kernel_s = 0;  // optimizer step, per kernel launched
  double host_per_step_s = 0;  // data-loader hand-off, zero_grad, loop and logging per step
  // A kernel launched from a library's C++ inside one framework op (cuDNN's RNN steps): the
  // launch and the library's own host work per kernel, with no framework dispatch.
  double host_library_launch_s = 0;
  // A library API call that launches kernels from its own C++ (cudnnRNNForward,
  // cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8): the host work the framework does once
  // per call before any launch (PyTorch rebuilds the RNN, dropout and data descriptors and queries
  // the temp space sizes in every _cudnn_rnn* function), whatever the number of steps.
  double host_library_call_s = 0;
  // What the mixed-precision layer adds per forward kernel in 16-bit training under
  // MixedPrecision::autocast: the host's cast decision per op (NVIDIA Apex's O1 runs it in
  // Python, as a wrapper around every patched torch function; torch.amp in the C++ dispatcher).
  double host_amp_cast_per_kernel_s = 0;
  int host_syncs_per_step = 0;  // 1: the host waits for the device after backward (grad-scaler
                                // inf check); 2: also at the step's end (loss.item())
  bool graph_launch = false;    // the step is one captured graph (CUDA graphs): no per-kernel
                                // host cost, host_per_step_s covers the graph launch
  Fusion fusion = Fusion::none;
  MixedPrecision mixed_precision = MixedPrecision::autocast;
  AmpFp32Ops amp_fp32_ops = AmpFp32Ops::listed;
  AmpWeightCasts amp_weight_casts = AmpWeightCasts::framework_op;
  BatchNormKernels batch_norm = BatchNormKernels::cudnn;
  MemoryFormat memory_format = MemoryFormat::channels_last;
  RnnKernels rnn = RnnKernels::cudnn;
  OptimizerKernels optimizer_kernels = OptimizerKernels::multi_tensor;
  int tensors_per_optimizer_kernel = 1;  // multi_tensor / fused: tensors per launch
  // Per ElementMath: the SIMT instructions (FP32-lane operations) the framework's memory-bound
  // kernels issue per element for that arithmetic, loads, conversions and reductions included;
  // a property of the kernels' code, not of the device. 0 where the profile gives none (its
  // kernels priced on DRAM alone). At the device's FP32 lane rate they bound a kernel from below
  // (sim/hw/kernel_model.hpp, element_issue_s).
  std::array<double, kElementMathCount> element_instructions{};

  // What this framework's kernels issue for `math` over `elements` elements (0 for none, or where
  // the profile gives no count): sim::Kernel::issue_instructions.
  double issue_instructions(ElementMath math, double elements) const {
    return elements * element_instructions[static_cast<std::size_t>(math)];
  }
};

struct HostSpec {
  std::string name;
  std::string description;
  int cpu_cores = 0;
  // How fast one core runs a framework's single dispatching thread (Python, the op dispatcher,
  // the autograd engine, kernel launches) relative to the reference core the framework profiles'
  // host times are given for: one Zen 2 core at the EPYC 7742's 3.4 GHz boost = 1.
  double single_thread_speed = 1;
  double memory_bw_bytes_per_s = 0;
  double memory_capacity_bytes = 0;
  double storage_read_bw_bytes_per_s = 0;
};

enum class Duplex { full, half };

// --- collectives (issue 14): how NCCL/RCCL see a link and a cluster ---------------------------
// The hardware class NCCL's tuning model keys its per-step protocol latencies on
// (NVIDIA/nccl src/graph/tuning.cc hwLatencies: NVLINK, PCI, NET).
enum class LinkTransport { nvlink, pcie, network };

struct LinkSpec {
  std::string name;
  std::string description;
  double bw_bytes_per_s = 0;  // per direction
  double latency_s = 0;
  Duplex duplex = Duplex::full;
};

// What collectives see of a link profile ("transport" and "efficiency" keys): its transport class
// (unset: by the link's role in the cluster) and the achieved fraction of its bandwidth for
// GPU-driven bulk copies (packet and flow-control overhead), which inflates a collective's wire
// bytes.
struct LinkCollectiveTraits {
  std::optional<LinkTransport> transport;
  double efficiency = 1.0;
};

// none: plain message schedules on the links (their latencies, no protocol overheads).
enum class CollectiveLibrary { none, nccl, rccl };
// GPU generation, which selects NCCL's per-channel protocol bandwidth caps (tuning.cc).
enum class GpuGeneration { volta, ampere, hopper, blackwell, cdna3 };

// How the cluster's collective library runs (profile "collectives" block).
struct CollectiveFabricSpec {
  CollectiveLibrary library = CollectiveLibrary::none;
  GpuGeneration generation = GpuGeneration::ampere;
  int channels = 0;                      // parallel rings/trees; 0: one per NIC rail (at least 2)
  bool nvls = false;                     // NVLink SHARP: the NVSwitch reduces (H100 NVSwitch gen 3)
  double nvls_efficiency = 1.0;          // achieved fraction of the NVLink bandwidth with NVLS
  bool sharp = false;                    // IB SHARP: the inter-node switches reduce (CollNet)
  std::optional<double> base_latency_s;  // per-collective fixed cost; unset: the library's table
  // Per-step latency overrides [transport][protocol] (nvlink, pcie, network x LL, LL128, Simple)
  // for ring and tree steps; unset: the library's table.
  std::array<std::array<std::optional<double>, 3>, 3> step_latency_s{};
  // Protocols the library may use here (LL, LL128, Simple), as NCCL_PROTO restricts them.
  std::array<bool, 3> protocols{true, true, true};
  // The traits of the node's intra link, host link and inter-node link profiles.
  LinkCollectiveTraits intra_link, host_link, inter_link;
};
// ------------------------------------------------------------------------------------------

// How the accelerators of one node are wired together.
enum class IntraTopology {
  switched,  // each accelerator has one link to a non-blocking switch (NVSwitch, PCIe switch)
  ring,      // accelerators in a ring (e.g. IPU-Links, NVLink rings)
  fully_connected,  // one link between every pair (e.g. MI300X Infinity Fabric)
  torus2d,          // dims give the shape
};
// How nodes are wired together.
enum class InterTopology {
  none,      // one node
  star,      // one non-blocking switch
  fat_tree,  // two-level leaf-spine, non-blocking unless oversubscribed
  ring,
  torus2d,
  torus3d,
};

struct ClusterSpec {
  std::string name;
  std::string description;
  int nodes = 1;
  HostSpec host;
  AcceleratorSpec accelerator;
  int accelerators_per_node = 1;
  IntraTopology intra_topology = IntraTopology::switched;
  LinkSpec intra_link;
  std::vector<int> intra_dims;  // torus2d shape
  LinkSpec host_link;           // accelerator <-> host (PCIe)
  bool p2p = true;              // false: accelerator-to-accelerator traffic crosses the host
  InterTopology inter_topology = InterTopology::none;
  std::optional<LinkSpec> inter_link;
  int nics_per_node = 1;
  std::vector<int> inter_dims;       // torus shapes
  int leaf_switch_ports = 0;         // fat_tree: nodes per leaf switch
  double oversubscription = 1.0;     // fat_tree: leaf downlink / uplink bandwidth ratio
  CollectiveFabricSpec collectives;  // issue 14: the collective library on this cluster
  int total_accelerators() const { return nodes * accelerators_per_node; }
};

}  // namespace trainsim::sim
