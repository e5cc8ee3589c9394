#include "sim/hw/kernel_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace trainsim::sim {

namespace {

// Split-K factors a library may choose for GEMMs with few output tiles and a long reduction
// (cuBLAS and CUTLASS split K across CTAs and reduce the partial sums). Library GEMMs stop at
// kGemmMaxSplitK; weight-gradient convolutions go on (fastest_tiling_s, deep_split).
constexpr double kSplitK[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256};
constexpr double kGemmMaxSplitK = 32;

// Tiles narrower than this are kept for operands narrower than it (see fastest_tiling_s).
constexpr double kRegularMinTile = 16;

// The fewest input channels at which a strided convolution's data gradient, its filter at least
// as long as its stride on both axes, runs split into its stride phases, each a stride-1
// convolution over ceil(R / stride) x ceil(S / stride) taps (KernelEfficiency::
// conv_phase_split_data_gradient; Kernel::strided_tap_waste): so its time is the forward's work
// times that rounding, not times the inserted zeros. DeepBench's 5x5 stride-2 data gradients of
// 64-256 channels (C64 80x350 K128, C128 40x175 K256, C256 20x84 K512; results/train) run at
// 0.68-1.2 of the forward convolutions' efficiency once that rounding (1.44x) is counted, on all
// nine boards (cuDNN 5 to 7.6, fp32 and fp16) and on the H200 (cuDNN 9, fp32, TF32 and bf16),
// where one share of all strided data gradients had priced them 1.2-2.1x too slow against the
// rest of their series; those of 1, 3 and 32 channels (C1 161x700 5x20/2, C3 224x224 7x7/2,
// C32 79x341 5x10/2) run at 0.3-0.6 of it, the strided share's rate, on the same boards.
constexpr double kPhaseSplitMinChannels = 64;

// Whether `dtype` computes on matrix units (tensor cores, matrix cores) on `a`: a rate above
// twice fp32's. Packed half2 SIMT math doubles fp32 at most (P100's fp16 is 2x its fp32), while
// V100's tensor cores give 8x.
bool matrix_unit_math(const AcceleratorSpec& a, Dtype dtype) {
  const auto fp32 = a.peak(Dtype::fp32);
  const auto own = a.peak(dtype);
  return fp32 && own && *own > 2 * *fp32;
}

// The DRAM bandwidth that thread blocks of a tm x tn tile draw in a library's recurrent step
// GEMMs (unbounded where the kernels profile gives no recurrent_block_bandwidth). DRAM traffic is
// the loads in flight over the memory latency (Little's law). A block keeps in flight a stage of
// each operand panel, tm rows of A and tn columns of B, so a block of the main tile draws
// recurrent_block_bandwidth; blocks that share a panel (the same rows of A or columns of B) fetch
// it from DRAM once. So the rows and columns streaming at once are the operands' own, m + n per
// batch entry, or fewer where not every block is resident (as many per SM as the main tile's area
// over theirs). At the batches where a step is bound by reading its weights, cuDNN runs it
// without splitting the reduction (models/zoo/net_builder.cpp, lstm), so no slice of K adds rows
// in flight; where a large batch makes it compute-bound, its tiling is priced as any GEMM's.
// Library GEMMs and convolutions split K or keep deeper pipelines: DeepBench's strided 1x1
// convolutions and skinny GEMMs (deepbench_conv, deepbench_gemm) run several times faster than
// this bound, so it prices recurrent steps only.
double blocks_bw_bytes_per_s(const AcceleratorSpec& a, const GemmShape& g, double tm, double tn) {
  const KernelEfficiency& e = a.kernels;
  if (e.recurrent_block_bw_bytes_per_s <= 0) return std::numeric_limits<double>::infinity();
  const double units = std::max(1, a.compute_units);
  const double blocks = std::ceil(g.m / tm) * std::ceil(g.n / tn) * g.batch;
  const double resident = std::min(blocks, units * e.tile_m * e.tile_n / (tm * tn));
  const double panels = std::min((g.m + g.n) * g.batch, resident * (tm + tn));
  return e.recurrent_block_bw_bytes_per_s * panels / (e.tile_m + e.tile_n);
}

// The fastest (tile size, split-K) for a GEMM view: the least of time_s(efficiency, split, tm,
// tn) over the choices, where efficiency is the fraction of the device's peak the tiles achieve
// (before the per-class efficiency), split the split-K factor, whose partial sums cost DRAM
// traffic, and tm x tn the tile.
// Fused attention tiles its query rows only: each tile spans the whole head dimension
// (FlashAttention's blocks), so n is never quantised.
// `library_simt` marks a library GEMM on SIMT math, whose narrow operands run on the tiles
// KernelEfficiency::narrow_operand_tile gives, where the profile gives one; `conv` a convolution.
// `deep_split` marks a convolution's weight gradient, whose reduction runs over every output
// position of every sample (N x P x Q, hundreds of thousands for a first layer) into a filter
// gradient of a few tiles. cuDNN's backward-filter kernels cut that reduction into as many
// slices as fill the device: per sample and segment of positions, the partial filter gradients
// summed apart (reduce_wgrad_nchw_helper, the wgrad_indexed *_segment_k_on_* and *_split_k_*
// kernels in this project's H200 ResNet-50 profiles, tests/reference_data/
// h200_profile_kernels.csv), so its split is bounded by the waves and the slices' length alone,
// not by the GEMMs' 32. Capped at 32, the H200's fp32 first-layer weight gradients (C1 161x700,
// 5x20/2 and 5x5/2: one 32 x 100 output tile over 0.1-0.9 M positions) filled a quarter of its
// 132 SMs and came out 2.1-2.8x too slow (tests/reference_data/h200_kernels_conv.csv); the
// boards of 28-80 SMs, which 32 slices of a tile fill, priced them within 0.6-1.4x.
// A weight gradient on SIMT math keeps one side of every tile at the profile's full tile (128,
// `full_side` below): cuDNN's backward-filter GEMMs on SIMT math come 128 wide and narrow the
// other side only. conv2d_grad under paddle.profiler launches maxwell_scudnn_128x128_, 128x64_
// and 128x32_stridedB(_splitK)_* kernels and, under nonfused Winograd, maxwell_sgemm_128x64_nt
// between its winogradWgrad* transforms (PaddlePaddle/docs
// docs/guides/performance_improving/profiling_model.md); PyTorch's V100 steps run
// volta_scudnn_128x128_stridedB_splitK_interior_nn_v1 and wgrad_alg0_engine<float, 128, ...>
// (pytorch/pytorch issue #13412). So a gradient of 64 filters over 32-64 channels (Winograd's
// per-element GEMMs of K x C, or a 1x1 filter's) wastes half its tile or more where the GEMMs'
// 64 x 64 tiles waste none. With every tile allowed, DeepBench's 3x3 weight gradients of 64
// filters (C64 56x56 K64, C64 54x54 K64, C32 12x120 K64) came out 1.5-1.9x too fast on the
// V100, GTX 1080 Ti, TITAN Xp and M40 alike; kept so, they come out within 0.78-1.09x
// (0.66-0.67 for C32 12x120 on the two TITAN X), and deepbench_conv went from 20.0% / 21.6%
// (shape 23.0% / 23.1%) to 19.7% / 21.3% (22.8% / 22.8%), the held-out GPUs' rows from 23.1% /
// 25.0% to 22.9% / 24.7%, with no value refitted (Pascal's, Volta's, Turing's and Hopper's fp32
// shares, refitted, moved within about one stderr, Turing's weight gradient share two).
// Forward and data-gradient convolutions on SIMT math keep the pixel side (M: samples x output
// positions, or input positions for the data gradient) at the full tile, `full_pixels`, and
// narrow the filters' side alone: cuDNN's SIMT implicit-GEMM kernels are
// maxwell_scudnn_128x{128,64,32}_relu_{small,medium,large,interior}_nn (volta_scudnn_128x32_relu_
// small_nn_v1 in MXNet's V100 ResNet profile, apache/mxnet issue #9774). So a small map at a small
// batch (ResNet-50's 7x7 layers at batch 8: 392 pixels, four tiles) leaves SMs idle where 64 x 64
// tiles had filled them: the GTX 1080 Ti's C2048 7x7 K512 1x1 forward takes 0.207 ms at batch 8
// and 0.213 at 16 (DeepBench), where those tiles priced batch 8 at 0.117 ms. Kept so,
// deepbench_conv went from 19.7% / 21.3% (shape 22.8% / 22.8%) to 18.9% / 21.0% (22.1% / 22.5%),
// the held-out GPUs' rows from 22.9% / 24.7% (24.7% / 23.5%) to 22.5% / 24.5% (24.3% / 23.3%) and
// MXNet's K80 and M60 steps from 7.0% / 6.8% to 6.3% / 6.6%, with no value refitted (Pascal's and
// Volta's fp32 conv values, refitted, moved within one stderr). Narrowing the pixel side alone
// instead took deepbench_conv to 45.9% on its validation half.
template <typename TimeOf>
double fastest_tiling_s(const AcceleratorSpec& a, const GemmShape& g, bool attention,
                        bool matrix_units, bool split_k, bool library_simt, bool conv,
                        bool deep_split, TimeOf time_s) {
  const KernelEfficiency& e = a.kernels;
  const double units = std::max(1, a.compute_units);
  const double useful = g.m * g.n * g.batch;
  // The narrowest tile the math allows: one row or column for SIMT math (a GEMV-like strip, as
  // libraries run for a convolution's one or three input channels), 8 on matrix units, the
  // narrowest operand of their MMA instructions (Volta's m8n8k4, Turing's and Ampere's m16n8k8:
  // CUDA C++ Programming Guide, "Warp Matrix Functions"; PTX ISA, "Matrix shape").
  const double narrowest = matrix_units ? 8 : 1;
  double best_s = time_s(1e-6, 1.0, e.tile_m, e.tile_n);
  // The architecture's main tile and the narrower ones libraries fall back to when the big ones
  // leave SMs idle or waste a skinny operand (each dimension halved: 128 -> 64 -> 32 -> 16, and
  // further, down to `narrowest`, only for an operand narrower than 16), at a lower per-tile
  // rate for every halving of the tile's area (less operand reuse).
  // Where the library has no kernel for an operand that narrow (cuBLAS 7.5-8: N = 8 and 16 run
  // at one time, longer than N = 32; KernelEfficiency::narrow_operand_below), it runs on the
  // profile's fallback tile: a 64-wide tile at N = 16 computes 4x the useful columns.
  const bool fallback = library_simt && e.narrow_operand_below > 0;
  const bool full_side = deep_split && !matrix_units;
  const bool full_pixels = conv && !deep_split && !matrix_units;  // see above
  // Each halving costs the profile's half_tile_throughput, or for a convolution its
  // conv_half_tile_throughput where given: DeepBench's Pascal convolutions of 32-48 output
  // channels (C192 28x28 K32 and C512 14x14 K48, 5x5: forward and weight gradient) ran 1.5-2.4x
  // faster than two halvings at the GEMMs' 0.733 priced them.
  // The halvings that cost throughput. A convolution's halvings below 16 cost none: the operand
  // opposite its few channels (a first layer's 1 or 3 input channels, the data gradient's output
  // columns) is the implicit im2col of a feature map, whose every pixel serves each filter tap
  // that covers it (R x S / stride^2 of them), so the kernel keeps reusing it from registers
  // where a GEMM's one-column strip reads each operand element once. DeepBench's first-layer
  // data gradients (C1 161x700 5x5/2 and 5x20/2, C3 224x224 7x7/2: P100, GTX 1080 Ti, TITAN Xp)
  // and the H200's fp32 and tf32 ones ran 2-3.5x faster than every halving priced them; with
  // the halvings stopped at 16 and the strided data gradients' shares refitted (they had been
  // held at their bound 1 by these rows), deepbench_conv went from 24.2% / 23.4% (shape 32.1% /
  // 29.5%) to 22.6% / 23.3% (30.3% / 29.2%), h200_kernels from 25.5% / 24.6% (27.6% / 26.2%)
  // to 24.3% / 24.0% (26.6% / 25.5%) and the held-out GPUs' rows from 27.1% / 29.4% (31.9% /
  // 32.5%) to 25.4% / 28.1% (27.1% / 27.2%), Maxwell taking Pascal's refitted shares; MXNet's
  // M60 and K80 steps went from 6.0% / 5.7% to 6.7% / 6.5%.
  const auto penalised = [&](int halvings, double tile) {
    if (!conv) return halvings;
    int counted = 0;
    while (counted < halvings && tile / (2 << counted) >= kRegularMinTile)
      ++counted;
    return counted;
  };
  const auto allowed = [&](double tile, double dim) {
    if (fallback && dim < e.narrow_operand_below) return tile >= e.narrow_operand_tile;
    return tile >= narrowest && (tile >= kRegularMinTile || dim < kRegularMinTile);
  };
  for (int hm = 0; e.tile_m / (1 << hm) >= narrowest; ++hm) {
    for (int hn = 0; attention ? hn == 0 : e.tile_n / (1 << hn) >= narrowest; ++hn) {
      const double tm = e.tile_m / (1 << hm);
      const double tn = attention ? std::max(g.n, 1.0) : e.tile_n / (1 << hn);
      if (!allowed(tm, g.m) || (!attention && !allowed(tn, g.n))) continue;
      // A convolution's tile on matrix units whose instruction fixes its GEMM_M
      // (KernelEfficiency::conv_matrix_unit_min_tile_m): the H200's bf16 weight gradients of 32
      // filters (C32 79x341 K32 5x10/2, C16 24x240 K32 3x3) took 2.5-3.4x the time tiles of 8
      // or 16 filters priced (tests/reference_data/h200_kernels_conv.csv).
      if (conv && matrix_units && tm < e.conv_matrix_unit_min_tile_m) continue;
      if (full_side && tm < e.tile_m && tn < e.tile_n) continue;
      if (full_pixels && tm < e.tile_m) continue;
      const double tile_throughput =
          std::pow(conv && e.conv_half_tile_throughput > 0 ? e.conv_half_tile_throughput
                                                           : e.half_tile_throughput,
                   penalised(hm, e.tile_m) + (attention ? 0 : penalised(hn, e.tile_n)));
      const double tiles = std::ceil(g.m / tm) * std::ceil(g.n / tn) * g.batch;
      for (const double split : kSplitK) {
        if (split > 1 && (!split_k || tiles * split > 8 * units || g.k / split < 2 * e.k_half ||
                          (!deep_split && split > kGemmMaxSplitK)))
          break;
        const double waves = std::ceil(tiles * split / units);
        const double quantisation = useful * split / (waves * units * tm * tn);
        const double k_each = g.k / split;
        const double main_loop = e.k_half > 0 ? k_each / (k_each + e.k_half) : 1.0;
        const double eff = std::min(1.0, quantisation) * tile_throughput * main_loop;
        best_s = std::min(best_s, time_s(eff, split, tm, tn));
      }
    }
  }
  return best_s;
}

// A convolution's GEMM view as tensor-core kernels run it, and the factor by which padding
// multiplies its multiply-adds (the padded channels cost math like real ones).
// - Channels are loaded in 16-byte vectors (8 fp16 or bf16, 4 tf32, 16 int8 or fp8 elements), so
//   cuDNN pads a channel count that is not a multiple of that with zeros (cuDNN Developer Guide,
//   "Tensor Core Operations": input and output feature maps a multiple of 8 for fp16, else "the
//   cuDNN library may use padding"; DeepBench's conv_bench pads C to 8 itself for its
//   tensor-core training runs: baidu-research/DeepBench code/nvidia/conv_bench.cu, 'Tensor cores
//   need channels to be a multiple of 8').
// - Libraries without few-channel kernels (KernelEfficiency::conv_few_channel_kernels) walk the
//   reduction one filter tap at a time: "each threadblock tile [is assigned] to one filter
//   position and an interval of channels" (NVIDIA/cutlass
//   media/docs/implicit_gemm_convolution.md, "Loading Activations and Filters"), the interval
//   being the tile's depth, 64 bytes in the tensor-core tiles (128x128x32 for fp16, x16 for
//   tf32, x64 for int8). So the channels reduced over (C forward, K for the data gradient) pad to
//   that depth at every tap: a 1- or 3-channel first layer computes 32 fp16 channels forward.
//   DeepBench's V100 fp16 first layers (cuDNN 7.6) run 7-8x slower than its fp32 ones (C1
//   161x700 5x20/2); priced at 8 channels they came out 80% too fast, and at the tile's depth
//   the forward fp16 series' shape went from 79% to 29%. Later libraries pack several taps into
//   one tile's depth for such layers (CUTLASS's kFewChannels and kFixedChannels iterators), and
//   keep the vector's padding only.
// - The weight gradient reduces over positions; the filter's taps sit in its output columns
//   (N = C x R x S), and there the per-tap libraries pad its input channels the same way: they
//   load the activations one tap and one 64-byte interval of channels at a time in every pass.
//   DeepBench's V100 fp16 first layers (C1 161x700 5x20/2, cuDNN 7.6) take 7.1-8.7x their fp32
//   time in the weight gradient as in the forward (7.5-8.3x), the T4's C1 and C3 ones 1.4-5.4x;
//   priced with the vector's padding alone they came out 2-6x too fast, and with the tile's
//   depth deepbench_conv's shape went from 30.3% / 29.2% to 25.0% / 24.7%. Its output filters
//   (M) keep the vector's padding.
// - Libraries with few-channel kernels have them for the forward alone: CUTLASS's kFewChannels
//   and kFixedChannels iterators are fprop ones (include/cutlass/conv/threadblock/
//   conv2d_fprop_activation_tile_access_iterator_few_channels.h and _fixed_channels.h), its
//   wgrad iterators analytic and optimized only. So a weight gradient pads its input channels to
//   the tile's depth on every library. cuDNN 9 on the H200 runs a bf16 ResNet-50's first-layer
//   weight gradient (C3, 7x7/2) as CUTLASS's Conv2dWgrad tensor-op kernel of 64x128x32 tiles
//   (its activation iterator 32 bf16 channels, 64 bytes, deep), once per step, 225.8 us at batch
//   64 (tests/reference_data/h200_profile_kernels.csv): priced so, 323 us, where the fp32 SIMT
//   kernels had priced 1.07 ms (math_dtype).
double channel_padded(GemmShape& g, const GemmChannels& c, Dtype math, bool per_tap,
                      bool weight_gradient) {
  const double vector = 16.0 / dtype_bytes(math);
  const double tile_depth = 64.0 / dtype_bytes(math);
  double factor = 1;
  const auto pad = [&](double& dim, double channels, double multiple) {
    if (channels <= 0) return;
    const double padded = std::ceil(channels / multiple) * multiple;
    dim *= padded / channels;
    factor *= padded / channels;
  };
  pad(g.m, c.m, vector);
  pad(g.n, c.n, weight_gradient ? tile_depth : vector);
  pad(g.k, c.k, per_tap ? tile_depth : vector);
  return factor;
}

// The batched GEMM of Winograd's F(m x m, r x r) (Lavin and Gray, arXiv:1509.09308) in place of
// an r x r convolution's implicit GEMM: one GEMM per element of the (m + r - 1)^2 transformed
// tile (batch x (m + r - 1)^2), over one m x m output tile per m^2 positions (whole tiles over
// each sample's rows and columns where the kernel gives them: a 7x7 map takes 2x2 tiles of 4x4),
// reducing over the channels alone (the r x r taps leave the reduction). cuDNN's fused algorithm
// runs F(2x2, 3x3), its nonfused one F(4x4, 3x3) and F(5x5, 5x5). `waste` is set to the tiles'
// positions over the useful ones.
GemmShape winograd_view(const GemmShape& g, const GemmChannels& c, double tile, double filter,
                        double& waste) {
  GemmShape w = g;
  waste = 1;
  const double taps = filter * filter;
  const auto fold = [&](double& dim, double channels) {
    if (channels > 0) {
      if (dim >= taps * channels) dim /= taps;  // channels x the filter's taps
      return;
    }
    // Positions.
    if (c.height > 0 && c.width > 0) {
      const double tiles = std::ceil(c.height / tile) * std::ceil(c.width / tile);
      waste = tiles * tile * tile / (c.height * c.width);
      dim = std::max(1.0, dim / (c.height * c.width) * tiles);
    } else {
      dim = std::max(1.0, dim / (tile * tile));
    }
  };
  fold(w.m, c.m);
  fold(w.n, c.n);
  fold(w.k, c.k);
  const double transformed = tile + filter - 1;
  w.batch *= transformed * transformed;
  return w;
}

double memory_efficiency(const AcceleratorSpec& a, KernelClass c) {
  const auto fraction = [&](KernelClass cls) {
    const double eff = a.kernels.memory[static_cast<std::size_t>(cls)];
    return eff > 0 ? eff : 1.0;
  };
  const double eff = fraction(is_compute_class(c) ? KernelClass::copy : c);
  // A board's measured streaming bandwidth replaces the architecture's copy fraction; each class
  // keeps its share of a copy's.
  if (a.streaming_bw_bytes_per_s && a.memory_bw_bytes_per_s > 0) {
    return eff / fraction(KernelClass::copy) * *a.streaming_bw_bytes_per_s /
           a.memory_bw_bytes_per_s;
  }
  return eff;
}

}  // namespace

double element_issue_s(const AcceleratorSpec& a, const Kernel& k) {
  const auto fp32 = a.peak(Dtype::fp32);
  if (k.issue_instructions <= 0 || !fp32) return 0;
  // One lane operation per FP32 lane per clock: half the FMA peak at the rated clock (a
  // memory-bound kernel draws too little power to throttle it: sustained_clock_fraction is for
  // dense math).
  const double lane_ops_per_s = *fp32 / 2;
  return k.issue_instructions / lane_ops_per_s;
}

double sustained_clock_fraction(const AcceleratorSpec& a, Dtype math) {
  const KernelEfficiency& e = a.kernels;
  if (!a.board_power_w || !a.boost_clock_hz || e.sustained_clock_hz <= 0 || e.unit_power_w <= 0 ||
      e.power_clock_exponent <= 0) {
    return 1;
  }
  const double units = std::max(1, a.compute_units);
  // Power per clock grows with the math issued per clock: a board running the reference's rate
  // twice over has, for the clock, half the power per unit.
  double rate_ratio = 1;
  const double reference = e.reference_flops_per_clock[static_cast<std::size_t>(math)];
  if (const auto peak = a.peak(math); peak && reference > 0)
    rate_ratio = *peak / (units * *a.boost_clock_hz) / reference;
  const double unit_power_w = *a.board_power_w / units / rate_ratio;
  const double sustained_hz =
      e.sustained_clock_hz * std::pow(unit_power_w / e.unit_power_w, 1 / e.power_clock_exponent);
  return std::min(1.0, sustained_hz / *a.boost_clock_hz);
}

Dtype math_dtype(const AcceleratorSpec& a, const Kernel& k) {
  if (k.cls != KernelClass::conv || k.dtype == Dtype::fp32) return k.dtype;
  // Inputs of fewer channels than one 16-byte vector (a first layer's 1 or 3) run the library's
  // fp32 SIMT kernels where the kernels profile says so (KernelEfficiency::conv_few_channel_simt),
  // but for 16-bit weight gradients, which stay on tensor cores, their channels padded to the
  // tile's depth (channel_padded): cuDNN 9's bf16 ones on the H200 take 0.41-0.49x their fp32
  // time for 3 channels (C3 224x224 3x3/1 and 7x7/2) and 1.6-2.3x for 1 (C1 48x480 3x3, C1
  // 161x700 5x20/2; 3.0x for its 5x5/2), as 64-byte tiles of 3 or 1 useful channels in 32 would
  // (tests/reference_data/h200_kernels_conv.csv), where its TF32 ones take their fp32 time (9 of
  // 10 rows within 1%).
  if (a.kernels.conv_few_channel_simt && k.input_channels > 0 &&
      k.input_channels * dtype_bytes(k.dtype) < 16 && matrix_unit_math(a, k.dtype) &&
      !(k.weight_gradient && dtype_bytes(k.dtype) == 2)) {
    return Dtype::fp32;
  }
  if (!k.dilated || a.kernels.dilated_conv_tensor_cores) return k.dtype;
  // Without a tensor-core algorithm the convolution computes in fp32: TF32 is fp32 storage, and
  // PyTorch asks cuDNN for fp32 math on half data (pytorch/pytorch
  // aten/src/ATen/cudnn/Descriptors.h, ConvolutionDescriptor::set: 'if (dataType ==
  // CUDNN_DATA_HALF) mathType = CUDNN_DATA_FLOAT').
  return matrix_unit_math(a, k.dtype) ? Dtype::fp32 : k.dtype;
}

// The time of a recurrent data-gradient step (Kernel::recurrent_data_gradient) at a batch where
// its library walks the reduction serially (KernelEfficiency::serial_data_gradient_batches): one
// dependent memory access, serial_data_gradient_cycles_per_element at the rated clock, per
// element of the 4h-long reduction (the four gates' products). 0 elsewhere.
// DeepBench's cuDNN 5-6 backward-data LSTM cells on Pascal at N = 32 (results/train) take per
// step 4h x 131-145 ns on the P100 and 4h x 97-119 ns on the GP102 boards (GTX 1080 Ti, TITAN Xp,
// TITAN X Pascal) at every h from 256 to 4096: 200 and 150-165 cycles at their rated clocks, the
// order of an L2 round trip on these GPUs (pointer-chase latencies: Jia et al., 'Dissecting the
// NVIDIA Volta GPU Architecture via Microbenchmarking', arXiv:1804.06826). No tiled GEMM's time is
// linear in h; these steps' weights (4h x h) and multiply-adds grow as h^2, and the same cells at N
// = 16 and 64 take a third to a quarter of the time until h = 4096, where all three stream their
// weights. cuDNN 7.6 on the V100 shows no such batch.
double serial_data_gradient_s(const AcceleratorSpec& a, const Kernel& k) {
  const KernelEfficiency& e = a.kernels;
  if (!k.recurrent_data_gradient || k.cls != KernelClass::recurrent || !a.boost_clock_hz ||
      e.serial_data_gradient_cycles_per_element <= 0) {
    return 0;
  }
  const auto& batches = e.serial_data_gradient_batches;
  if (std::find(batches.begin(), batches.end(), k.gemm.m) == batches.end()) return 0;
  return k.gemm.k * k.gemm.batch * e.serial_data_gradient_cycles_per_element / *a.boost_clock_hz;
}

// The time of a recurrent step (cuDNN's RNN) on the library's small-batch kernels, where the
// kernels profile gives them (KernelEfficiency::narrow_batch_below) and the step's batch (the
// GEMM's M) is below it: its FLOPs at a fixed rate per compute unit and clock, whatever the
// tiles. fp32 steps only, the rows' dtype (P100's half2 steps keep their tiles). 0 elsewhere.
// DeepBench's cuDNN 5-6 LSTM steps on Pascal at N = 8 and 16 (results/train) take time in
// proportion to N h^2: forward, 0.96-1.10 TFLOP/s on the P100 (56 SMs) and 0.63-0.69 on the
// GTX 1080 Ti, TITAN Xp and TITAN X Pascal (28-30 SMs, more FP32 lanes each) from h = 1536 to
// 4096, the N = 8 step taking 0.57x the N = 16 one at h = 1536. That is 13-16 FLOP per cycle per
// SM on both chips, which have 64 and 128 FP32 lanes per SM: a rate per SM, not per lane (nor a
// DRAM rate, which N would not change). The data-gradient steps (the transposed weights, as
// cuBLAS's TN GEMMs, which DeepBench's GEMM rows of N = 16 run at 1.2-1.5 TFLOP/s on both chips
// where their NN ones run 0.8-0.9 on GP102) run at 1.1-1.6 TFLOP/s on the P100 and 1.3-1.4 on
// the GTX 1080 Ti from h = 1024 to 2048: 10-15% of the fp32 peak on both, where per SM they
// differ by 1.6x. So their rate is a share of the peak, a rate per lane.
// A 64-wide fallback tile (gemm_tile.narrow_operand) had priced the forward steps from 1.7x too
// slow (h = 256) to 2.1x too fast (h = 2048-4096 on the GP102 boards). The same cells at N = 32
// run 3-5 TFLOP/s on ordinary tiles. Fitted on the P100 and GTX 1080 Ti calibration rows,
// deepbench_lstm went from 15.0% / 15.5% (shape 14.9% / 16.4%) to 14.4% / 12.6% (13.5% /
// 11.5%), and the held-out TITAN Xp's and TITAN X Pascal's series (both halves) from 24% and 23%
// to 10% and 13% MAPE forward, from 23% and 26% to 20% and 21% in the data gradient (22% and 25%
// with a rate per SM there too).
double narrow_batch_step_s(const AcceleratorSpec& a, const Kernel& k) {
  const KernelEfficiency& e = a.kernels;
  if (k.cls != KernelClass::recurrent || k.dtype != Dtype::fp32 || e.narrow_batch_below <= 0 ||
      !a.boost_clock_hz || k.gemm.m >= e.narrow_batch_below) {
    return 0;
  }
  if (k.recurrent_data_gradient) {
    const auto peak = a.peak(Dtype::fp32);
    if (!peak || e.narrow_batch_data_gradient_peak_fraction <= 0) return 0;
    return k.flops / (e.narrow_batch_data_gradient_peak_fraction * *peak *
                      sustained_clock_fraction(a, Dtype::fp32));
  }
  if (e.narrow_batch_forward_flops_per_cycle <= 0) return 0;
  return k.flops / (e.narrow_batch_forward_flops_per_cycle * std::max(1, a.compute_units) *
                    *a.boost_clock_hz);
}

// Whether the library runs convolution `k` as a plain GEMM: a pointwise convolution's pass on
// matrix units where the kernels profile says its convolution library hands those to the BLAS
// library (KernelEfficiency::pointwise_conv_gemm). It is then priced as any GEMM: the GEMM
// efficiency, split-K summed within the kernel, the fill and drain (gemm_latency_s), no channel
// padding. The forward and data gradient are one GEMM in either layout. The weight gradient is
// one only over channels-last tensors: dW[K x C] = dY^T X reduces over every row of the N x P x
// Q by K and N x P x Q by C matrices, both MN-major, as a linear layer's weight gradient does
// (GemmOperands::both_mn_major). Over NCHW each sample's [K x PQ] and [C x PQ] planes are a GEMM of
// their own, and cuDNN sums the samples' partial filter gradients in its own wgrad kernels
// (reduce_wgrad_nchw_helper, 27 launches in this project's H200 TF32 ResNet-50 step). Its bf16
// step, channels-last, runs 26 of its 53 weight gradients in cuDNN's wgrad kernels and launches
// 74 cuBLAS GEMMs, 19 of them split-K ones (nvjet_sm90_*_splitK_NT*), which only a weight
// gradient's reduction, far longer than its output, calls for
// (tests/reference_data/h200_profile_kernels.csv). cuDNN offers both, so the faster is priced
// (kernel_body_s).
bool runs_as_gemm(const AcceleratorSpec& a, const Kernel& k) {
  return a.kernels.pointwise_conv_gemm && k.cls == KernelClass::conv && k.pointwise_gemm &&
         (!k.weight_gradient || !k.channels_first) && matrix_unit_math(a, math_dtype(a, k));
}

// Whether the library offers its Winograd algorithms to convolution `k`: not below the kernels
// profile's winograd_min_channels input channels (KernelEfficiency::winograd_min_channels).
// DeepBench's first layers (C1 48x480 K16, C3 224x224 K64, 3x3 stride 1) take 2.1-3.8x their
// forward time in the data and weight gradients on the P100, GTX 1080 Ti, TITAN Xp, M40 and
// V100, where Winograd's batched GEMMs, whose narrow channel side costs no tile throughput, had
// priced them below it (results/train).
bool winograd_offered(const AcceleratorSpec& a, const Kernel& k) {
  const double floor = a.kernels.winograd_min_channels;
  return floor <= 0 || k.input_channels <= 0 || k.input_channels >= floor;
}

namespace {

// Kernel `k`'s body as its library runs it as a kernel of class `cls` (its own, or the GEMM
// runs_as_gemm hands it to).
double body_as_s(const AcceleratorSpec& a, const Kernel& k, KernelClass cls) {
  double compute_s = 0;
  double winograd_s = 0;   // the compute time on Winograd's algorithm, where it applies
  double flops_per_s = 0;  // the math's peak at the sustained clock
  Dtype math = k.dtype;
  GemmShape gemm = k.gemm;
  double flops = k.flops;
  // cuDNN's backward-filter convolutions: their own efficiency share, bandwidth share and
  // split-K sum (below).
  const bool conv_weight_gradient = cls == KernelClass::conv && k.weight_gradient;
  if (is_compute_class(cls) && k.flops > 0) {
    math = math_dtype(a, k);
    if (cls == KernelClass::conv && matrix_unit_math(a, math)) {
      flops *= channel_padded(gemm, k.channels, math, !a.kernels.conv_few_channel_kernels,
                              k.weight_gradient);
    }
    const auto peak = a.peak(math);
    double eff = a.kernels.effective_compute(cls, math);
    const double wgrad = a.kernels.conv_weight_gradient[static_cast<std::size_t>(math)];
    if (conv_weight_gradient && wgrad > 0) eff *= wgrad;
    // Its input operand's loads, shared by the filter taps that cover each input element
    // (KernelEfficiency::conv_weight_gradient_input_load, Kernel::input_tap_reuse): a 1x1
    // filter's cost the most, a 5x5 one's a 25th of that.
    const double load = a.kernels.conv_weight_gradient_input_load[static_cast<std::size_t>(math)];
    if (conv_weight_gradient && load > 0) eff /= 1 + load / std::max(1.0, k.input_tap_reuse);
    const double strided = a.kernels.conv_strided_data_gradient[static_cast<std::size_t>(math)];
    const double phases = a.kernels.conv_phase_split_data_gradient[static_cast<std::size_t>(math)];
    if (k.strided_data_gradient && cls == KernelClass::conv) {
      if (phases > 0 && k.strided_tap_waste > 0 && k.input_channels >= kPhaseSplitMinChannels)
        eff *= phases / k.strided_tap_waste;
      else if (strided > 0)
        eff *= strided;
    }
    const auto d = static_cast<std::size_t>(math);
    const double unaligned = k.sub_word_aligned && a.kernels.sub_word_aligned_gemm[d] > 0
                                 ? a.kernels.sub_word_aligned_gemm[d]
                                 : a.kernels.unaligned_gemm[d];
    if (cls == KernelClass::gemm && k.unaligned && unaligned > 0 && matrix_unit_math(a, math))
      eff *= unaligned;
    const double mn_major = a.kernels.mn_major_gemm[d];
    if (cls == KernelClass::gemm && k.operands == GemmOperands::both_mn_major && mn_major > 0 &&
        matrix_unit_math(a, math))
      eff *= mn_major;
    if (!peak || eff <= 0) {
      throw std::invalid_argument(a.name + " (kernels " + a.kernels.name + ") has no " +
                                  dtype_name(math) + " path for " + kernel_class_name(cls) +
                                  " kernels");
    }
    flops_per_s = *peak * sustained_clock_fraction(a, math);
    compute_s = flops / (flops_per_s * eff);
    const double gain = k.winograd_filter == 3 && winograd_offered(a, k)
                            ? a.kernels.winograd_gain[static_cast<std::size_t>(math)]
                            : 0.0;
    if (gain > 1) winograd_s = compute_s / gain;
  }
  const double bw_bytes_per_s = a.memory_bw_bytes_per_s * memory_efficiency(a, cls);
  double memory_s = k.bytes > 0 ? k.bytes / bw_bytes_per_s : 0.0;
  // A SIMT GEMM of two K-major operands streams them at a share of that
  // (KernelEfficiency::k_major_simt_bandwidth): its tiles' loads are short runs, one per row.
  if (const double share = a.kernels.k_major_simt_bandwidth[static_cast<std::size_t>(math)];
      cls == KernelClass::gemm && k.operands == GemmOperands::both_k_major && share > 0 &&
      !matrix_unit_math(a, math)) {
    memory_s /= share;
  }
  // A weight gradient's blocks stream x and dy at a share of that
  // (KernelEfficiency::conv_weight_gradient_bandwidth), on every algorithm: Winograd's batched
  // GEMMs for it are as few output tiles over as long a reduction. Its split-K partial sums are
  // priced at the full rate below.
  if (const double share = a.kernels.conv_weight_gradient_bandwidth[static_cast<std::size_t>(math)];
      conv_weight_gradient && share > 0) {
    memory_s /= share;
  }
  if (compute_s > 0 && gemm.m > 0 && gemm.n > 0 && gemm.k > 0) {
    // The library picks the tiling that finishes first. Split-K fills idle SMs, but its partial
    // sums are written and read back once in fp32, which costs more than it saves where the
    // output is large against the reduction.
    const bool matrix_units = matrix_unit_math(a, math);
    // Convolutions' forward and data-gradient kernels do not split their reduction: cuDNN's
    // split-K kernels are backward-filter ones (their names carry it, e.g.
    // maxwell_scudnn_128x64_stridedB_splitK_medium_nn_v0 under TensorFlow's
    // Conv2DBackpropFilter, where its Conv2D and Conv2DBackpropInput run *_relu_interior_nn and
    // implicit_convolve_sgemm kernels). Without split-K, DeepBench conv fits 28.1% / 27.5% ->
    // 27.6% / 27.1%, its small-M forward layers (7x7 maps) no longer priced as if they filled
    // the device. Nor do GEMMs marked whole_k (cuDNN's RNN weight gradient: net_builder.cpp,
    // lstm).
    const bool split_k = (cls != KernelClass::conv || k.weight_gradient) && !k.whole_k;
    // A split GEMM's slices of K each produce a partial output in fp32. GEMMs sum them within
    // the kernel (their partials priced as DRAM traffic under its compute). cuDNN's
    // backward-filter algorithms sum them outside it: ALGO_0 and ALGO_3 add each slice into the
    // filter gradient with atomic adds (cuDNN API reference, cudnnConvolutionBwdFilterAlgo_t:
    // "The sum is done using atomic adds operation, thus the results are non-deterministic"),
    // after a kernel that zeroes it, and the deterministic *_splitK_* kernels through a
    // workspace; that is one more launch and (split + 1) passes over the fp32 filter gradient
    // after the GEMM. It took DeepBench conv from 25.7% / 25.4% to 24.9% / 24.6% (24.7% / 24.4%
    // with the conv values refitted). Priced the same for every GEMM (cuBLAS's
    // splitKreduce_kernel runs after its split-K GEMMs), DeepBench's GEMM table rose from 11.5% /
    // 14.8% to 13.1% / 15.8%: its small split GEMMs (M 512-1024, N 16-32, K 512) came out 40-80%
    // too slow, so cuBLAS's are taken to sum within the kernel.
    const bool reduce_apart = conv_weight_gradient;
    // cuBLAS's GEMMs and cuDNN's recurrent steps (cuDNN's RNN calls cuBLAS's kernels; its
    // convolutions have kernels of their own).
    const bool library_simt =
        !matrix_units && (cls == KernelClass::gemm || cls == KernelClass::recurrent);
    const auto tiled_s = [&](const GemmShape& view, double view_compute_s, double view_memory_s,
                             bool view_split_k) {
      const double partial_bytes = view.m * view.n * view.batch * 4;
      const auto time_s = [&](double tiling, double split, double tm, double tn) {
        // Each slice beyond the first writes its partials; summed within the kernel they are
        // read back there too, summed apart the second kernel reads them.
        const bool apart = reduce_apart && split > 1;
        const double partials_s = (apart ? 1 : 2) * (split - 1) * partial_bytes / bw_bytes_per_s;
        // Memory time at the device's bandwidth, or, in a recurrent step, at what its blocks draw.
        const double slower =
            cls == KernelClass::recurrent
                ? std::max(1.0, bw_bytes_per_s / blocks_bw_bytes_per_s(a, view, tm, tn))
                : 1.0;
        const double gemm_s =
            std::max(view_compute_s / tiling, (view_memory_s + partials_s) * slower);
        if (!apart) return gemm_s;
        return gemm_s + a.kernel_launch_overhead_s + (split + 1) * partial_bytes / bw_bytes_per_s;
      };
      return fastest_tiling_s(a, view, cls == KernelClass::attention, matrix_units, view_split_k,
                              library_simt, cls == KernelClass::conv, conv_weight_gradient, time_s);
    };
    if (const double narrow_s = narrow_batch_step_s(a, k); narrow_s > 0)
      return std::max({narrow_s, memory_s, serial_data_gradient_s(a, k)});
    double best_s = tiled_s(gemm, compute_s, memory_s, split_k);
    // And the algorithm: cuDNN's autotuner (cudnnFind*, PyTorch's benchmark mode) keeps the
    // fastest. Winograd's multiplications are a batched GEMM per transformed tile element whose
    // reduction is the channels alone, so few channels (a first layer's 1 or 3) leave it slower
    // than the implicit GEMM, as DeepBench's recorded algorithms show: cuDNN took an implicit GEMM
    // for its 3x3 stride-1 rows of 1-32 input channels (results/train, fwd_algo). (A kernel that
    // does not name its channels keeps the implicit GEMM's view.)
    const GemmChannels& c = k.channels;
    const bool named = c.m > 0 || c.n > 0 || c.k > 0;
    // Fused F(2x2, 3x3): one kernel at the profile's net gain.
    if (winograd_s > 0) {
      double waste = 1;
      const GemmShape view = named ? winograd_view(gemm, c, 2, 3, waste) : gemm;
      best_s = std::min(best_s, tiled_s(view, winograd_s * waste, memory_s, split_k));
    }
    // Nonfused F(4x4, 3x3) or F(5x5, 5x5): (m + r - 1)^2 batched GEMMs at the library's GEMM
    // efficiency on m^2 r^2 / (m + r - 1)^2 times fewer multiplications (4x for 3x3, 7.7x for
    // 5x5), reading and writing the tiles expanded (m + r - 1)^2 / m^2 times (2.25x, 3.24x),
    // between a data (and filter) transform and an output transform that each pass over their
    // tensors in DRAM: the input read and its tiles written, the output's tiles read and the
    // output written, 1 + expansion times the convolution's own traffic; four kernels where the
    // direct one launches one (cuDNN's winogradForwardData4x4 or winogradForwardData9x9_5x5,
    // winogradForwardFilter4x4, an SGEMM such as volta_sgemm_128x64_nn, winogradForwardOutput4x4,
    // as nvprof and TensorFlow traces name them).
    // On matrix units the model does not offer it, although cuDNN lists it among its tensor-core
    // algorithms: DeepBench's V100 fp16 rows of 256-512 channels run at 70-90 TFLOP/s, the
    // implicit GEMM's rate, where F(4x4)'s GEMMs at the tensor cores' rate would finish about
    // twice as soon.
    const bool nonfused = winograd_offered(a, k) &&
                          ((k.winograd_filter == 3 && a.kernels.winograd_nonfused_3x3) ||
                           (k.winograd_filter == 5 && a.kernels.winograd_nonfused_5x5)) &&
                          (k.weight_gradient || !a.kernels.winograd_nonfused_weight_gradient_only);
    const double gemm_eff = nonfused && named && !matrix_units
                                ? a.kernels.effective_compute(KernelClass::gemm, math)
                                : 0.0;
    if (gemm_eff > 0) {
      const double r = k.winograd_filter;
      const double tile = r == 3 ? 4 : 5;
      const double transformed = tile + r - 1;
      const double expansion = transformed * transformed / (tile * tile);
      const double fewer = tile * tile * r * r / (transformed * transformed);
      const double transforms_s =
          (1 + expansion) * k.bytes /
              (a.memory_bw_bytes_per_s * memory_efficiency(a, KernelClass::elementwise)) +
          3 * a.kernel_launch_overhead_s;
      double waste = 1;
      const GemmShape view = winograd_view(gemm, c, tile, r, waste);
      best_s = std::min(
          best_s, transforms_s + tiled_s(view, waste * flops / fewer / (flops_per_s * gemm_eff),
                                         expansion * memory_s, true));
    }
    // The library kernel's fill and drain on matrix units (KernelEfficiency::gemm_latency_s):
    // cuBLAS's GEMMs and cuDNN's implicit-GEMM convolutions alike, except where the profile gives
    // cuDNN's convolutions a latency of their own (KernelEfficiency::conv_latency_s).
    const auto d = static_cast<std::size_t>(math);
    double latency_s = (cls == KernelClass::gemm || cls == KernelClass::conv) && matrix_units
                           ? a.kernels.gemm_latency_s[d]
                           : 0.0;
    if (cls == KernelClass::conv && a.kernels.conv_latency_s[d] > 0)
      latency_s = a.kernels.conv_latency_s[d];
    return std::max(best_s, serial_data_gradient_s(a, k)) + latency_s;
  }
  return std::max({winograd_s > 0 ? winograd_s : compute_s, memory_s, element_issue_s(a, k)});
}

}  // namespace

double kernel_body_s(const AcceleratorSpec& a, const Kernel& k) {
  if (!runs_as_gemm(a, k)) return body_as_s(a, k, k.cls);
  double gemm_s = 0;
  if (k.channels_first && k.samples > 1 && !k.weight_gradient) {
    Kernel per_sample = k;  // one GEMM per sample over NCHW (Kernel::samples)
    per_sample.gemm.m /= k.samples;
    per_sample.gemm.batch *= k.samples;
    gemm_s = body_as_s(a, per_sample, KernelClass::gemm);
  } else {
    gemm_s = body_as_s(a, k, KernelClass::gemm);
  }
  // cuDNN offers both for a pointwise weight gradient, and its heuristics and PyTorch's
  // autotuner keep the faster (runs_as_gemm).
  return k.weight_gradient ? std::min(gemm_s, body_as_s(a, k, k.cls)) : gemm_s;
}

int layout_transpose_launches(const AcceleratorSpec& a, const Kernel& k) {
  if (k.cls != KernelClass::conv || !k.channels_first || k.pointwise_gemm ||
      !a.kernels.nchw_tensor_core_transposes) {
    return 0;
  }
  const Dtype math = math_dtype(a, k);
  if (!matrix_unit_math(a, math)) return 0;  // SIMT kernels read NCHW as it is
  // Layers of fewer channels than one 16-byte vector (a first layer's 1 or 3) run kernels that
  // read NCHW too: the H200's TF32 first layers (C1 161x700, C3 224x224 3x3) take as long as
  // its fp32 ones, 31-286 us alike (tests/reference_data/h200_kernels_conv.csv), where its
  // larger TF32 layers take their bf16 time twice over plus the transposes.
  if (k.input_channels > 0 && k.input_channels < 16.0 / dtype_bytes(math)) return 0;
  // Every pass converts two operands before its kernel and one result after it.
  return 3;
}

double layout_transposes_s(const AcceleratorSpec& a, const Kernel& k) {
  const int launches = layout_transpose_launches(a, k);
  if (launches == 0) return 0;
  // Each transpose reads its tensor and writes it in the other layout, at a copy's rate; each
  // is a launch of its own that runs at least a copy's floor.
  const double bytes = 2 * k.transpose_elements * dtype_bytes(k.dtype);
  const double stream_s =
      bytes / (a.memory_bw_bytes_per_s * memory_efficiency(a, KernelClass::copy));
  const double floor_s = a.kernels.memory_floor_s[static_cast<std::size_t>(KernelClass::copy)];
  return launches * a.kernel_launch_overhead_s + std::max(stream_s, launches * floor_s);
}

void set_operand_strides(Kernel& k, std::span<const double> strides) {
  const double bytes = dtype_bytes(k.dtype);
  const auto any_not_whole = [&](double unit_bytes) {
    return std::any_of(strides.begin(), strides.end(),
                       [&](double s) { return std::fmod(s * bytes, unit_bytes) != 0; });
  };
  k.unaligned = any_not_whole(16);
  k.sub_word_aligned = any_not_whole(4);
}

double row_walk_elements(const Kernel& k) {
  // PyTorch gives a softmax row of up to 1024 elements and 4 KiB to one warp (pytorch/pytorch
  // aten/src/ATen/native/cuda/SoftMax.cu, host_softmax: dispatch_softmax_forward, the kernel the
  // H200's 128- and 1024-wide rows ran) and a wider one to a block of up to 1024 threads that
  // load 16 bytes each (cunn_SoftMaxForward; SoftMaxForward_getBlockSize), whose warps share it.
  // A layer norm's block walks its whole row: its 4096-wide rows took the 1024-wide ones' time
  // plus three times their walk.
  const double bytes = dtype_bytes(k.dtype);
  if (k.cls != KernelClass::softmax || (k.row_elements <= 1024 && k.row_elements * bytes <= 4096)) {
    return k.row_elements;
  }
  const double warps = std::clamp(k.row_elements / (32 * 16 / bytes), 1.0, 32.0);
  return k.row_elements / warps;
}

TensorIteratorReduce tensor_iterator_reduce(const AcceleratorSpec& a, const Kernel& k) {
  TensorIteratorReduce out;
  if (k.reduce_outputs <= 0 || k.row_elements <= 0) return out;
  const auto pow2_at_most = [](double n, double cap) {
    return n >= cap ? cap : std::exp2(std::floor(std::log2(std::max(1.0, n))));
  };
  constexpr double kMaxThreads = 512, kWarp = 32;
  const double rows = k.reduce_outputs, row = k.row_elements;
  // set_block_dimension(dim0 = the row, dim1 = the outputs).
  double width = std::min(pow2_at_most(row, kMaxThreads), kWarp);
  const double height = std::min(pow2_at_most(rows, kMaxThreads), kMaxThreads / width);
  width = std::min(pow2_at_most(row, kMaxThreads), kMaxThreads / height);
  double values = std::ceil(row / width);  // per thread, the lanes across the row
  double grid = std::ceil(rows / height);
  const bool across_warps = values >= std::min(height * 16, 256.0);
  if (across_warps) {
    values = std::ceil(values / height);
    grid = rows;
  }
  double blocks = 1;
  const double target = std::max(1, a.compute_units) * (2048 / (width * height));
  if (across_warps && values >= 256 && grid <= target) {
    blocks = std::max(std::min(std::ceil(target / grid), std::ceil(values / 16)),
                      std::ceil(values / 256));
  }
  out.walk_elements = row / blocks;
  out.global_reduce = blocks > 1;
  return out;
}

double kernel_time_s(const AcceleratorSpec& a, const Kernel& k) {
  // A launched memory-bound kernel runs at least its class's floor (KernelEfficiency::
  // memory_floor_s), and a row-wise one at least one row's walk on top; a pointwise op folded into
  // its producer (models/kernel_plan.cpp) adds its body alone.
  // A TensorIterator reduction walks each block's share of a row; blocks that meet in global
  // memory take a semaphore memset launched before the kernel (a copy-class op of its own) and
  // the last block's pass over their partials, a reduction of its own at the class's floor.
  // The H200's sums of one output (tests/reference_data/h200_kernels_memory.csv) take 2.2-3.7
  // us up to 2^14 elements, 5.6-7.8 us at 2^16 (one block of 512 threads walking the whole row),
  // and 6.6-7.0 us from 2^18 to 2^20, split over 32-128 blocks.
  const auto cls = static_cast<std::size_t>(k.cls);
  const double class_floor_s = a.kernels.memory_floor_s[cls];
  const TensorIteratorReduce reduce = tensor_iterator_reduce(a, k);
  const double walk = reduce.walk_elements > 0 ? reduce.walk_elements : row_walk_elements(k);
  const double floor_s =
      is_compute_class(k.cls) ? 0.0 : class_floor_s + walk * a.kernels.row_element_latency_s[cls];
  const double global_s =
      reduce.global_reduce
          ? a.kernel_launch_overhead_s +
                a.kernels.memory_floor_s[static_cast<std::size_t>(KernelClass::copy)] +
                class_floor_s
          : 0.0;
  return a.kernel_launch_overhead_s + std::max(kernel_body_s(a, k), floor_s) + global_s +
         layout_transposes_s(a, k);
}

}  // namespace trainsim::sim
