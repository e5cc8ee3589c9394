#pragma once
// One device kernel as a framework launches it: its class (which library path runs it), its
// dtype, its arithmetic and its DRAM traffic, plus the GEMM view that wave quantisation needs.
// Device-independent: sim/hw/kernel_model.hpp turns it into time on an accelerator.

#include <array>
#include <utility>

#include "sim/hw/dtype.hpp"

namespace trainsim::sim {

// The library path a kernel takes. Compute classes (gemm .. recurrent) are priced against the
// dtype's peak FLOP/s with a per-class achieved efficiency and wave quantisation of their GEMM
// view; memory classes (elementwise .. topk) against DRAM bandwidth with a per-class efficiency.
enum class KernelClass {
  gemm,            // cuBLAS/cuBLASLt GEMM and batched GEMM (linear layers, attention matmuls)
  conv,            // cuDNN implicit-GEMM convolution (fwd, dgrad, wgrad)
  depthwise_conv,  // depthwise / grouped convolution with few channels per group
  attention,       // fused (FlashAttention-style) attention, fwd or bwd
  recurrent,       // one time step's recurrent GEMM + gates of an RNN/LSTM/GRU cell
  elementwise,     // pointwise ops: activations, dropout, residual add, casts, bias
  normalization,   // batch/layer/group norm (statistics + normalise), fwd or bwd
  softmax,         // row softmax / log-softmax / cross-entropy rows
  reduction,       // column/row sums (bias gradients, norm weight gradients)
  pooling,         // max/avg pooling, upsampling
  gather,          // embedding lookup, index_select (irregular reads)
  scatter,         // embedding gradient, index_add (irregular writes)
  optimizer,       // multi-tensor optimizer update (SGD/momentum/Adam), grad-scaler unscale
  copy,            // memcpy / memset / layout transforms (device to device)
  topk,            // top-k selection over a gradient vector (radix select passes)
};
inline constexpr int kKernelClassCount = 15;
const char* kernel_class_name(KernelClass c);
// True for the classes priced against peak FLOP/s (gemm, conv, depthwise_conv, attention,
// recurrent); false for the memory-bound ones.
bool is_compute_class(KernelClass c);

// How a GEMM's two operands lie in memory against its reduction (K).
enum class GemmOperands {
  // One K-major and one MN-major, or a layout the model prices no differently (cuBLAS's "NN").
  mixed,
  // Both MN-major: it reduces over the dimension that both store strided, as a weight gradient
  // reduces over the rows of activations stored feature-contiguous (dW = dY^T X). Priced at the
  // GEMM efficiency times KernelEfficiency::mn_major_gemm.
  both_mn_major,
  // Both K-major: each stored contiguous along the reduction, as a linear layer's input rows and
  // weight rows are in its forward pass (cuBLAS's "TN" over column-major operands). On SIMT math
  // its operands stream at KernelEfficiency::k_major_simt_bandwidth of the memory rate.
  both_k_major,
};

// The arithmetic a memory-bound kernel does per element where it is heavy enough to bound the
// kernel on the SMs' instruction issue instead of DRAM: PyTorch computes 16-bit pointwise and row
// ops in fp32 (aten/src/ATen/OpMathType.h, opmath_type: float for Half and BFloat16), so such an
// op's instructions per element stay what they are in fp32 while its bytes halve. The H200's
// bf16 GELU, dropout, softmax and layer norm (tests/reference_data/h200_kernels_memory.csv, 2^28
// elements) move 0.59-0.78 G elements per ms where its bf16 copy and ReLU move 1.04, and their
// fp32 kernels run at the copy's rate; FrameworkSpec::element_instructions prices each.
enum class ElementMath {
  none,
  erf,         // GELU's exact form, 0.5 x (1 + erf(x / sqrt 2)), forward and backward
  philox,      // dropout's draw: Philox-4x32-10 counter-based random numbers (curand_philox4x32_10)
  softmax,     // a row's max, exp and sum, then the normalised write (softmax, log_softmax)
  layer_norm,  // a row's Welford mean and variance, then the affine normalisation
};
inline constexpr int kElementMathCount = 5;
inline constexpr std::array<std::pair<const char*, ElementMath>, kElementMathCount - 1>
    kElementMathNames{{
        {"erf", ElementMath::erf},
        {"philox", ElementMath::philox},
        {"softmax", ElementMath::softmax},
        {"layer_norm", ElementMath::layer_norm},
    }};

// A GEMM C[m x n] (+)= A[m x k] B[k x n], `batch` independent ones (batched GEMM, attention
// heads x samples). Convolutions use their implicit-GEMM view. Empty (all 0) for memory kernels.
struct GemmShape {
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;
};

// How many channels each GEMM dimension of a convolution is made of (a multiple of them: the
// forward pass's k = C x R x S holds C), 0 where a dimension holds none (positions, the batch).
// Tensor-core kernels pad these (kernel_model.cpp, channel_padded).
struct GemmChannels {
  double m = 0;
  double n = 0;
  double k = 0;
  // The spatial extent (rows, columns) of one sample's positions in the dimension that holds no
  // channels, 0 where not given: Winograd tiles them in whole m x m output tiles.
  double height = 0;
  double width = 0;
};

struct Kernel {
  KernelClass cls = KernelClass::elementwise;
  Dtype dtype = Dtype::fp32;  // compute dtype (tf32: fp32 storage, tensor-core math)
  double flops = 0;           // multiply-add = 2 FLOPs
  double bytes = 0;           // DRAM bytes read + written
  GemmShape gemm;             // compute classes only
  GemmChannels channels;      // convolutions only
  // The filter size (3 or 5) of a square, stride-1, undilated, ungrouped convolution, 0 for any
  // other kernel: cuDNN may run it with Winograd's minimal filtering algorithm, which needs fewer
  // multiplications (fused for 3x3: KernelEfficiency::winograd_gain; nonfused for 3x3 and 5x5:
  // KernelEfficiency::winograd_nonfused).
  int winograd_filter = 0;
  // A convolution's weight gradient (cuDNN's backward-filter algorithms): priced at the forward
  // convolutions' efficiency times KernelEfficiency::conv_weight_gradient.
  bool weight_gradient = false;
  // The data gradient of a strided convolution (a transposed, fractionally strided convolution):
  // priced at the convolutions' efficiency times KernelEfficiency::conv_strided_data_gradient.
  bool strided_data_gradient = false;
  // Its work split into stride phases over the forward's: each of the stride_h x stride_w phases
  // is a stride-1 convolution over ceil(R / stride_h) x ceil(S / stride_w) of the filter's taps,
  // the taps past the filter's edge zero, so ceil(R / stride_h) stride_h / R x
  // ceil(S / stride_w) stride_w / S (1.44 for 5x5 stride 2, 1.31 for 7x7, 1.78 for 3x3). 0 for a
  // filter shorter than its stride on either axis (a 1x1 stride-2 convolution: three of its
  // four phases have no taps), an unstrided one, and grouped or dilated ones (no evidence for
  // them: models/zoo/net_builder.cpp). Priced by KernelEfficiency::conv_phase_split_data_gradient
  // where the profile gives it and the input has enough channels (kernel_model.cpp,
  // kPhaseSplitMinChannels).
  double strided_tap_waste = 0;
  // A weight gradient's filter taps served by one loaded input element: R x S / (stride_h x
  // stride_w), at least 1 (a 1x1 filter's, or a strided one's whose taps do not overlap). Its
  // output columns are the C x R x S taps; an input element lies under R x S taps of a stride-1
  // filter and R x S / stride^2 of a strided one, so a tile loads that many times fewer input
  // elements per multiply-add than a 1x1 filter's (KernelEfficiency::
  // conv_weight_gradient_input_load). 0 where not given (priced as 1).
  double input_tap_reuse = 0;
  // A GEMM its library runs with one thread block per output tile over the whole reduction, never
  // splitting K across blocks (cuDNN's RNN weight gradient: kernel_model.cpp, kernel_body_s).
  bool whole_k = false;
  // A recurrent step's data-gradient GEMM (cuDNN's dh_{t-1} = W^T dg, the four gates' products
  // as a batch): at the batches where the kernels profile says its library walks the reduction
  // serially (KernelEfficiency::serial_data_gradient_batches), priced at one dependent memory
  // access per reduction element (kernel_model.cpp, serial_data_gradient_s).
  bool recurrent_data_gradient = false;
  // A GEMM with an operand stride (a leading dimension) that is not a whole number of 16-byte
  // vectors of its dtype: priced at the GEMM efficiency times KernelEfficiency::unaligned_gemm.
  bool unaligned = false;
  // Of those, one whose stride is not even a whole number of 4-byte words (an odd number of
  // 16-bit elements): priced at KernelEfficiency::sub_word_aligned_gemm instead, where given.
  bool sub_word_aligned = false;
  // How a GEMM's two operands are stored against its reduction (GemmOperands).
  GemmOperands operands = GemmOperands::mixed;
  // A dilated convolution (dilation > 1): libraries may lack tensor-core algorithms for it
  // (KernelEfficiency::dilated_conv_tensor_cores; kernel_model.cpp, math_dtype).
  bool dilated = false;
  // A convolution's operands as the framework hands them to cuDNN, and what converting them takes:
  // cuDNN's tensor-core kernels compute in NHWC, so given channels-first (NCHW) tensors it
  // transposes the two operands into NHWC before the kernel and the result back after it, one
  // kernel per tensor (kernel_model.cpp, layout_transposes_s). A pointwise (1x1, stride 1,
  // unpadded, ungrouped) convolution (`pointwise_gemm`) is a plain GEMM over NCHW and needs none;
  // where KernelEfficiency::pointwise_conv_gemm says so, its forward and data gradient are priced
  // as the library GEMMs they run.
  bool channels_first = false;
  bool pointwise_gemm = false;
  // The samples a convolution's GEMM view folds into its rows (gemm.m = samples x output or input
  // positions); 0 where none are. Over NCHW a pointwise convolution is one GEMM per sample, W[K x
  // C] X[C x HW] (the samples' planes are C x HW apart, so no single GEMM spans them): where it
  // runs as the library's GEMM it is a batch of `samples` GEMMs of HW rows each
  // (kernel_model.cpp, kernel_body_s): a 7x7 map's 49 rows fill a 64-row tile by 77% at any
  // batch, where one GEMM over batch 16's 784 rows would fill seven 128-row tiles by 88%.
  double samples = 0;
  // The layer's input channels (below one 16-byte vector: NCHW read, and on SIMT kernels where
  // KernelEfficiency::conv_few_channel_simt says so).
  double input_channels = 0;
  double transpose_elements = 0;  // elements of the three tensors transposed
  // The SIMT instructions a memory-bound kernel's per-element arithmetic issues in all
  // (FrameworkSpec::element_instructions times its elements; kernel_model.cpp, element_issue_s).
  double issue_instructions = 0;
  // A row-wise kernel's row (a layer norm's features, a softmax's scores per query), in
  // elements; 0 for any other kernel. One block or warp owns each row, so the kernel runs at least
  // one row's walk (KernelEfficiency::row_element_latency_s).
  double row_elements = 0;
  // A reduction's outputs where PyTorch's TensorIterator reduce kernel runs it (aten/src/ATen/
  // native/cuda/Reduce.cuh), each over row_elements contiguous inputs: its blocks walk their
  // share of a row, and a row long enough is split across blocks that meet in global memory
  // (kernel_model.hpp, tensor_iterator_reduce). 0 for any other kernel.
  double reduce_outputs = 0;
};

}  // namespace trainsim::sim
