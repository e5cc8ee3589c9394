#include "models/zoo/net_builder.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace trainsim::models {

namespace {

// Rough per-element operation counts of the non-matmul ops. They are a few percent of a network's
// FLOPs; those ops are bound by memory traffic, which the byte counts capture.
constexpr double kNormFwdFlops = 5;  // statistics (2), normalize (2), affine (1 fused)
constexpr double kNormBwdInputFlops = 8;
constexpr double kNormBwdWeightFlops = 2;  // gamma and beta reductions
constexpr double kSoftmaxFwdFlops = 5;     // max, subtract, exp, sum, divide
constexpr double kSoftmaxBwdFlops = 4;
constexpr double kDropoutFwdFlops = 2;          // draw and compare, scale
constexpr double kLstmGateFlopsPerHidden = 25;  // 3 sigmoids, 2 tanh, 3 products, 1 sum per unit
// The query and key blocks a fused causal attention kernel skips whole (attention): estimate,
// FlashAttention-2's 128-row blocks for head widths up to 128 (Dao-AILab/flash-attention
// csrc/flash_attn/src/flash_fwd_launch_template.h, run_mha_fwd_hdim64/128: kBlockM 128); 64 in
// PyTorch's fp32 memory-efficient kernels (fmha_cutlassF_f32_aligned_64x64) changes a 1024-long
// sequence's share of blocks from 0.56 to 0.53.
constexpr double kCausalBlock = 128;

struct ActivationCost {
  double fwd_flops;
  double bwd_flops;
  bool saves_output;  // PyTorch keeps the result of relu/sigmoid/tanh, the input of the others
};

ActivationCost activation_cost(Activation kind) {
  switch (kind) {
    case Activation::relu:
      return {1, 1, true};
    case Activation::leaky_relu:
      return {2, 2, false};
    case Activation::gelu:
    case Activation::gelu_new:
      return {8, 12, false};
    case Activation::silu:
      return {5, 7, false};
    case Activation::sigmoid:
      return {4, 2, true};
    case Activation::tanh:
      return {4, 2, true};
  }
  return {1, 1, true};
}

std::int64_t out_dim(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
  const std::int64_t out = (in + 2 * pad - kernel) / stride + 1;
  if (in + 2 * pad < kernel || out <= 0) {
    throw ShapeError("a feature map of size " + std::to_string(in) +
                     " is too small for a kernel of " + std::to_string(kernel) + " (stride " +
                     std::to_string(stride) + ", padding " + std::to_string(pad) + ")");
  }
  return out;
}

double product(const std::vector<std::int64_t>& shape) {
  double p = 1;
  for (const auto d : shape)
    p *= static_cast<double>(d);
  return p;
}

using sim::KernelClass;

// A kernel with a GEMM view (compute classes).
KernelSpec gemm_spec(const char* what, KernelClass cls, double flops, double act_elements,
                     double param_elements, sim::GemmShape g, BatchDim batch_dim) {
  KernelSpec k;
  k.what = what;
  k.cls = cls;
  k.flops = flops;
  k.act_elements = act_elements;
  k.param_elements = param_elements;
  k.gemm = g;
  k.batch_dim = batch_dim;
  return k;
}

// A memory-bound kernel.
KernelSpec mem_spec(const char* what, KernelClass cls, double act_elements,
                    double param_elements = 0, double raw_bytes = 0, double flops = 0) {
  KernelSpec k;
  k.what = what;
  k.cls = cls;
  k.flops = flops;
  k.act_elements = act_elements;
  k.param_elements = param_elements;
  k.raw_bytes = raw_bytes;
  return k;
}

// `k` applying `math` to `elements` elements per sample (KernelSpec::element_math; the
// framework's FrameworkSpec::element_instructions prices it).
KernelSpec with_math(KernelSpec k, sim::ElementMath math, double elements) {
  k.element_math = math;
  k.math_elements = elements;
  return k;
}

// `k` as a row-wise kernel over rows of `row_elements` (KernelSpec::row_elements): one block or
// warp per row, so it lasts at least one row's walk (sim/hw/specs.hpp, row_element_latency_s).
KernelSpec per_row(KernelSpec k, double row_elements) {
  k.row_elements = row_elements;
  return k;
}

// Autograd summing a second gradient of `elements` activation elements into the first
// (torch/csrc/autograd/input_buffer.cpp, InputBuffer::add): an add reading two, writing one.
KernelSpec grad_accumulate_spec(const char* what, double elements) {
  return mem_spec(what, KernelClass::elementwise, 3 * elements, 0, 0, elements);
}

// Depthwise and narrow grouped convolutions take cuDNN's depthwise path; wide groups (ResNeXt,
// AmoebaNet's grouped 1x1s) still run as batched implicit GEMMs.
constexpr std::int64_t kDepthwiseMaxChannelsPerGroup = 4;

}  // namespace

double Tensor::elements() const {
  return product(shape);
}

Conv2d conv_spec(std::int64_t out_channels, std::int64_t kernel, std::int64_t stride,
                 std::int64_t pad, bool bias) {
  const std::int64_t p = pad >= 0 ? pad : (kernel - 1) / 2;
  return Conv2d{out_channels, kernel, kernel, stride, stride, p, p, 1, bias};
}

Tensor NetBuilder::make(std::vector<std::int64_t> shape, bool grad) {
  Tensor t;
  t.id = static_cast<int>(saved_.size());
  t.shape = std::move(shape);
  saved_.push_back(false);
  needs_grad_.push_back(grad);
  return t;
}

Tensor NetBuilder::input(std::vector<std::int64_t> shape, bool needs_grad) {
  return make(std::move(shape), needs_grad);
}

bool NetBuilder::needs_grad(const Tensor& t) const {
  return needs_grad_.at(static_cast<std::size_t>(t.id));
}

Layer& NetBuilder::open() {
  if (!open_) throw std::logic_error("NetBuilder: primitive outside begin()/end()");
  return layers_.back();
}

void NetBuilder::begin(std::string name, OpClass op, double input_elements) {
  if (open_)
    throw std::logic_error("NetBuilder: begin() while layer '" + layers_.back().name + "' is open");
  Layer l;
  l.name = std::move(name);
  l.op = op;
  l.input_elements = input_elements;
  l.fwd_kernels = std::move(pending_fwd_);
  pending_fwd_.clear();
  layers_.push_back(std::move(l));
  open_ = true;
}

void NetBuilder::end(const Tensor& output, double extra_output_elements) {
  Layer& l = open();
  l.output_shape = output.shape;
  l.output_elements = output.elements() + extra_output_elements;
  for (auto g = bwd_groups_.rbegin(); g != bwd_groups_.rend(); ++g)
    l.bwd_kernels.insert(l.bwd_kernels.end(), g->begin(), g->end());
  bwd_groups_.clear();
  for (auto g = tp_bwd_groups_.rbegin(); g != tp_bwd_groups_.rend(); ++g)
    l.tp_bwd.insert(l.tp_bwd.end(), g->begin(), g->end());
  tp_bwd_groups_.clear();
  open_ = false;
}

// Kernels of a primitive applied between two entries (e.g. a concatenation built as the next
// entry's argument) are held and given to the next entry that begins.
void NetBuilder::fwd(const KernelSpec& spec) {
  KernelSpec k = spec;
  k.repeat *= repeat_;
  if (!open_) {
    pending_fwd_.push_back(k);
    return;
  }
  open().fwd_kernels.push_back(k);
}

void NetBuilder::begin_repeat(std::int64_t count) {
  if (repeat_ != 1) throw std::logic_error("NetBuilder: nested repeat()");
  if (count < 1) throw ShapeError("a loop of " + std::to_string(count) + " iterations");
  repeat_ = static_cast<int>(count);
}

void NetBuilder::end_repeat() {
  repeat_ = 1;
}

void NetBuilder::bwd_group() {
  bwd_groups_.emplace_back();
}

void NetBuilder::bwd(const KernelSpec& spec) {
  KernelSpec k = spec;
  k.repeat *= repeat_;
  if (bwd_groups_.empty()) bwd_groups_.emplace_back();
  bwd_groups_.back().push_back(k);
}

void NetBuilder::save(const Tensor& t) {
  if (const auto shard = saved_as_.find(t.id); shard != saved_as_.end()) {
    save(shard->second);
    return;
  }
  auto idx = static_cast<std::size_t>(t.id);
  if (saved_.at(idx)) return;
  saved_[idx] = true;
  open().saved_elements += t.elements() * repeat_;
}

void NetBuilder::add_costs(double fwd_flops, double fwd_macs, double bwd_input_flops,
                           double bwd_weight_flops, std::int64_t params, int param_tensors) {
  Layer& l = open();
  l.param_tensors += param_tensors;
  // Inside repeat(): the work recurs every iteration, the parameters exist once. A weight used in
  // every iteration gets one gradient per use, and autograd sums them as they arrive: one add
  // per parameter tensor and iteration (paper: pytorch/pytorch torch/csrc/autograd/
  // input_buffer.cpp, InputBuffer::add accumulates a second gradient of the same input with an
  // out-of-place add), reading two fp32 gradients and writing one.
  if (repeat_ > 1 && params > 0 && param_tensors > 0) {
    KernelSpec acc = mem_spec("grad accumulate", KernelClass::elementwise, 0,
                              3.0 * static_cast<double>(params) / param_tensors);
    acc.repeat = param_tensors;
    bwd(acc);
  }
  fwd_flops *= repeat_;
  fwd_macs *= repeat_;
  bwd_input_flops *= repeat_;
  bwd_weight_flops *= repeat_;
  l.fwd_flops += fwd_flops;
  l.fwd_macs += fwd_macs;
  l.bwd_input_flops += bwd_input_flops;
  l.bwd_weight_flops += bwd_weight_flops;
  l.params += params;
}

void NetBuilder::autocast_params(std::int64_t params, int tensors) {
  // Inside repeat() too the casts run once: autocast caches a leaf parameter's cast for the rest
  // of the autocast region (autocast_mode.cpp, cached_cast).
  Layer& l = open();
  l.cast_params += params;
  l.cast_param_tensors += tensors;
}

Tensor NetBuilder::conv2d(const Tensor& in, const Conv2d& s) {
  const std::int64_t c_in = in.channels();
  if (s.groups <= 0 || c_in % s.groups != 0 || s.out_channels % s.groups != 0) {
    throw ShapeError("conv with " + std::to_string(c_in) + " input and " +
                     std::to_string(s.out_channels) + " output channels cannot use " +
                     std::to_string(s.groups) + " groups");
  }
  if (s.dilation_h < 1 || s.dilation_w < 1) {
    throw ShapeError("conv dilation " + std::to_string(s.dilation_h) + "x" +
                     std::to_string(s.dilation_w) + " is not at least 1");
  }
  const bool dilated = s.dilation_h > 1 || s.dilation_w > 1;
  // The filter's extent: its taps spread dilation apart.
  const std::int64_t extent_h = s.dilation_h * (s.kernel_h - 1) + 1;
  const std::int64_t extent_w = s.dilation_w * (s.kernel_w - 1) + 1;
  const std::int64_t h = out_dim(in.height(), extent_h, s.stride_h, s.pad_h);
  const std::int64_t w = out_dim(in.width(), extent_w, s.stride_w, s.pad_w);
  Tensor out = make({s.out_channels, h, w}, true);
  const double out_elems = out.elements();
  const double macs = out_elems * static_cast<double>(c_in / s.groups * s.kernel_h * s.kernel_w);
  const double bias_flops = s.bias ? out_elems : 0;
  const std::int64_t params =
      s.out_channels * (c_in / s.groups) * s.kernel_h * s.kernel_w + (s.bias ? s.out_channels : 0);
  add_costs(2 * macs + bias_flops, macs, needs_grad(in) ? 2 * macs : 0, 2 * macs + bias_flops,
            params, s.bias ? 2 : 1);
  autocast_params(params, s.bias ? 2 : 1);
  // Implicit-GEMM views (per sample, rows = output or input positions), one GEMM per group.
  const double g = static_cast<double>(s.groups);
  const double c_in_g = static_cast<double>(c_in / s.groups);
  const double c_out_g = static_cast<double>(s.out_channels / s.groups);
  const double rs = static_cast<double>(s.kernel_h * s.kernel_w);
  const double out_pos = static_cast<double>(h * w);
  const double in_pos = static_cast<double>(in.height() * in.width());
  const double weights = static_cast<double>(params - (s.bias ? s.out_channels : 0));
  const KernelClass cls = c_in / s.groups <= kDepthwiseMaxChannelsPerGroup && s.groups > 1
                              ? KernelClass::depthwise_conv
                              : KernelClass::conv;
  // cuDNN's Winograd algorithms take 3x3 stride-1 undilated ungrouped filters (forward, data-
  // and weight-gradient alike: WINOGRAD and WINOGRAD_NONFUSED in cudnnConvolution*Algo_t), and
  // its nonfused one 5x5 ones too (cudnn::winograd_nonfused::winogradForwardData9x9_5x5).
  const bool square =
      s.groups == 1 && s.kernel_h == s.kernel_w && s.stride_h == 1 && s.stride_w == 1 && !dilated;
  const int winograd =
      square && (s.kernel_h == 3 || s.kernel_h == 5) ? static_cast<int>(s.kernel_h) : 0;
  // A pointwise (1x1 stride-1 unpadded) convolution is a plain GEMM over the channels, per sample
  // over NCHW (W[K x C] X[C x HW]): cuDNN runs it without converting the layout, and on Hopper
  // hands it to cuBLASLt (kernel.hpp, Kernel::pointwise_gemm).
  const bool pointwise_gemm = s.groups == 1 && s.kernel_h == 1 && s.kernel_w == 1 &&
                              s.stride_h == 1 && s.stride_w == 1 && s.pad_h == 0 && s.pad_w == 0;
  const auto conv_spec = [&](const char* what, double act, sim::GemmShape shape,
                             sim::GemmChannels channels, BatchDim bd) {
    KernelSpec k = gemm_spec(what, cls, 2 * macs, act, weights, shape, bd);
    k.channels = channels;
    k.winograd_filter = winograd;
    k.dilated = dilated;
    k.pointwise_gemm = pointwise_gemm;
    k.input_channels = static_cast<double>(c_in);
    return k;
  };
  // What each pass converts under channels-first tensors, activations and parameters: its two
  // operands in, its result out (forward: input and filter, output; data gradient: output
  // gradient and filter, input gradient; weight gradient: input and output gradient, filter
  // gradient).
  const auto transposes = [&](KernelSpec k, double act, double param) {
    k.transpose_act_elements = act;
    k.transpose_param_elements = param;
    return k;
  };
  // The input rows a strided filter shorter than its stride reads (a 1x1 stride-2
  // convolution's every other row; whole rows, as 32-byte sectors along a row hold both the
  // taps it reads and those it skips). Counting the whole input, DeepBench's 1x1 stride-2 weight
  // gradients (C256 56x56 K128, C512 28x28 K256: results/train) came out 1.4-2x too slow on
  // Pascal and Maxwell once weight gradients read x and dy at their share of the bandwidth
  // (sim::KernelEfficiency::conv_weight_gradient_bandwidth).
  const double in_read = in.elements() * std::min(1.0, static_cast<double>(extent_h) /
                                                           static_cast<double>(s.stride_h));
  fwd(transposes(
      conv_spec("conv fwd", in_read + out_elems, {out_pos, c_out_g, c_in_g * rs, g},
                {0, c_out_g, c_in_g, static_cast<double>(h), static_cast<double>(w)}, BatchDim::m),
      in.elements() + out_elems, weights));
  if (s.bias) {
    fwd(mem_spec("conv bias", KernelClass::elementwise, 2 * out_elems,
                 static_cast<double>(s.out_channels), 0, out_elems));
  }
  bwd_group();
  if (s.bias) {
    bwd(mem_spec("conv bias grad", KernelClass::reduction, out_elems,
                 static_cast<double>(s.out_channels), 0, out_elems));
  }
  if (needs_grad(in)) {
    KernelSpec dgrad = conv_spec(
        "conv dgrad", out_elems + in.elements(), {in_pos, c_in_g, c_out_g * rs, g},
        {0, c_in_g, c_out_g, static_cast<double>(in.height()), static_cast<double>(in.width())},
        BatchDim::m);
    dgrad.strided_data_gradient = s.stride_h > 1 || s.stride_w > 1;
    // Its stride phases' taps over the filter's (sim::Kernel::strided_tap_waste); the evidence
    // is ungrouped and undilated convolutions alone, so grouped and dilated ones keep the
    // strided share.
    if (dgrad.strided_data_gradient && s.groups == 1 && !dilated && s.kernel_h >= s.stride_h &&
        s.kernel_w >= s.stride_w) {
      const auto rounded = [](std::int64_t taps, std::int64_t stride) {
        return static_cast<double>((taps + stride - 1) / stride * stride) /
               static_cast<double>(taps);
      };
      dgrad.strided_tap_waste = rounded(s.kernel_h, s.stride_h) * rounded(s.kernel_w, s.stride_w);
    }
    bwd(transposes(dgrad, out_elems + in.elements(), weights));
  }
  KernelSpec wgrad = transposes(
      conv_spec("conv wgrad", in_read + out_elems, {c_out_g, c_in_g * rs, out_pos, g},
                {c_out_g, c_in_g, 0, static_cast<double>(h), static_cast<double>(w)}, BatchDim::k),
      in.elements() + out_elems, weights);
  wgrad.weight_gradient = true;
  // The filter taps over each input element it loads (sim::Kernel::input_tap_reuse).
  wgrad.input_tap_reuse = std::max(1.0, static_cast<double>(s.kernel_h * s.kernel_w) /
                                            static_cast<double>(s.stride_h * s.stride_w));
  bwd(wgrad);
  save(in);
  return out;
}

Tensor NetBuilder::linear(const Tensor& in, std::int64_t out_features, bool bias, bool tied) {
  const std::int64_t in_features = in.features();
  std::vector<std::int64_t> shape = in.shape;
  shape.back() = out_features;
  Tensor out = make(std::move(shape), true);
  const double out_elems = out.elements();
  const double macs = out_elems * static_cast<double>(in_features);
  const double bias_flops = bias ? out_elems : 0;
  add_costs(2 * macs + bias_flops, macs, needs_grad(in) ? 2 * macs : 0, 2 * macs + bias_flops,
            (tied ? 0 : in_features * out_features) + (bias ? out_features : 0),
            (tied ? 0 : 1) + (bias ? 1 : 0));
  // A tied weight is the embedding's, but the linear op casts it all the same.
  autocast_params(in_features * out_features + (bias ? out_features : 0), bias ? 2 : 1);
  // rows = every leading dimension (positions of a sequence); the bias rides in the GEMM's
  // epilogue (cuBLASLt addmm), its gradient is a column reduction.
  const double rows = in.elements() / static_cast<double>(in_features);
  const double n_in = static_cast<double>(in_features);
  const double n_out = static_cast<double>(out_features);
  const double weights = n_in * n_out;
  // Its forward reads the input rows and the weight rows (out x in), both contiguous along the
  // reduction: both operands K-major (cuBLAS's "TN", as torch.nn.functional.linear calls it).
  KernelSpec forward =
      gemm_spec("linear fwd", KernelClass::gemm, 2 * macs + bias_flops, in.elements() + out_elems,
                weights + (bias ? n_out : 0), {rows, n_out, n_in, 1}, BatchDim::m);
  forward.k_major_operands = true;
  fwd(forward);
  bwd_group();
  if (needs_grad(in)) {
    bwd(gemm_spec("linear dgrad", KernelClass::gemm, 2 * macs, out_elems + in.elements(), weights,
                  {rows, n_in, n_out, 1}, BatchDim::m));
  }
  bwd(gemm_spec("linear wgrad", KernelClass::gemm, 2 * macs, in.elements() + out_elems, weights,
                {n_in, n_out, rows, 1}, BatchDim::k));
  if (bias) {
    bwd(mem_spec("linear bias grad", KernelClass::reduction, out_elems, n_out, 0, out_elems));
  }
  save(in);
  return out;
}

Tensor NetBuilder::batch_norm(const Tensor& in) {
  Tensor out = make(in.shape, true);
  const double n = in.elements();
  add_costs(kNormFwdFlops * n, 0, needs_grad(in) ? kNormBwdInputFlops * n : 0,
            kNormBwdWeightFlops * n, 2 * in.channels(), 2);
  // cuDNN's training-mode batch norm: forward reads the input twice (statistics, then normalise)
  // and writes the output; backward reads input and output gradient twice and writes one.
  const double c = static_cast<double>(in.channels());
  const auto cudnn = [](KernelSpec k) {
    k.norm_form = NormForm::cudnn_only;
    return k;
  };
  fwd(cudnn(mem_spec("bn fwd", KernelClass::normalization, 3 * n, 4 * c, 0, kNormFwdFlops * n)));
  // PyTorch's native CUDA batch norm, where it does not call cuDNN (bf16 activations:
  // aten/src/ATen/native/Normalization.cpp, _select_batch_norm_backend), for channels-last
  // activations as NVIDIA's mixed-precision recipes run CNNs (aten/src/ATen/native/cuda/
  // Normalization.cuh): the per-channel statistics as a grid reduction whose semaphores are
  // zeroed first, the running statistics updated with the inverse deviation (one kernel, three
  // outputs), then the normalisation; backward the reduction of the scale and shift gradients
  // (semaphores zeroed again) and the input gradient. The same bytes as cuDNN's, in more
  // kernels; all but the op's first launch from its C++ (measured: the H200's ResNet-50 bf16
  // profile, tests/reference_data/h200_profile_kernels.csv, 4 forward and 3 backward kernels per
  // batch norm, cuDNN's one each way in TF32). Its four big kernels stream at a normalisation's
  // rate, not a pointwise kernel's: they walk channels-last rows one element per thread, not in
  // 16-byte vectors, and reduce per channel. In that profile (batch 64) the normalisation took
  // 1.12 ms and the input gradient 1.49 ms, 2.5 and 2.9 TB/s, against 0.70 and 1.03 ms as
  // pointwise kernels and 1.11 and 1.64 ms as normalisations; the statistics 2.31 ms and the
  // scale and shift gradients 1.58 ms, against 1.33 ms (with Welford's arithmetic) and 1.11 ms.
  const auto native = [](KernelSpec k, bool first) {
    k.norm_form = NormForm::native_only;
    k.library_launch = !first;
    return k;
  };
  const double semaphore_bytes = 4 * c;  // estimate: one int per channel block
  fwd(native(mem_spec("bn semaphores", KernelClass::elementwise, 0, 0, semaphore_bytes), true));
  // The statistics are Welford's running mean and variance per element (Normalization.cuh,
  // batch_norm_collect_statistics*_kernel: WelfordOps::reduce, a division per element), the
  // update layer norm's rows run (sim::ElementMath::layer_norm).
  fwd(native(with_math(mem_spec("bn stats", KernelClass::normalization, n, 0, 0, 2 * n),
                       sim::ElementMath::layer_norm, n),
             false));
  fwd(native(mem_spec("bn update stats", KernelClass::elementwise, 0, 7 * c, 0, 6 * c), false));
  fwd(native(mem_spec("bn normalize", KernelClass::normalization, 2 * n, 4 * c, 0,
                      (kNormFwdFlops - 2) * n),
             false));
  bwd_group();
  bwd(cudnn(mem_spec("bn bwd", KernelClass::normalization, 5 * n, 4 * c, 0,
                     (kNormBwdInputFlops + kNormBwdWeightFlops) * n)));
  bwd(native(mem_spec("bn bwd semaphores", KernelClass::elementwise, 0, 0, semaphore_bytes), true));
  bwd(native(mem_spec("bn bwd reduce", KernelClass::normalization, 2 * n, 4 * c, 0,
                      kNormBwdWeightFlops * n),
             false));
  bwd(native(
      mem_spec("bn bwd input", KernelClass::normalization, 3 * n, 4 * c, 0, kNormBwdInputFlops * n),
      false));
  save(in);
  return out;
}

Tensor NetBuilder::instance_norm(const Tensor& in) {
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(kNormFwdFlops * n, 0, needs_grad(in) ? kNormBwdInputFlops * n : 0, 0, 0);
  fwd(mem_spec("instance norm fwd", KernelClass::normalization, 3 * n, 0, 0, kNormFwdFlops * n));
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("instance norm bwd", KernelClass::normalization, 5 * n, 0, 0,
                 kNormBwdInputFlops * n));
  }
  save(in);
  return out;
}

Tensor NetBuilder::layer_norm(const Tensor& in) {
  Tensor out = make(in.shape, true);
  const double n = in.elements();
  add_costs(kNormFwdFlops * n, 0, needs_grad(in) ? kNormBwdInputFlops * n : 0,
            kNormBwdWeightFlops * n, 2 * in.features(), 2);
  const double f = static_cast<double>(in.features());
  if (tf1_graph_) {
    tf1_layer_norm(n, f, needs_grad(in));
    save(in);
    return out;
  }
  // One row per block forward; backward is PyTorch's two kernels: the input gradient, then the
  // gamma/beta column reductions.
  fwd(per_row(with_math(mem_spec("layernorm fwd", KernelClass::normalization, 2 * n, 2 * f, 0,
                                 kNormFwdFlops * n),
                        sim::ElementMath::layer_norm, n),
              f));
  bwd_group();
  if (needs_grad(in)) {
    bwd(per_row(
        mem_spec("layernorm bwd", KernelClass::normalization, 3 * n, f, 0, kNormBwdInputFlops * n),
        f));
  }
  bwd(mem_spec("layernorm weight grad", KernelClass::reduction, 2 * n, 2 * f, 0,
               kNormBwdWeightFlops * n));
  save(in);
  return out;
}

void NetBuilder::tf1_layer_norm(double n, double f, bool input_grad) {
  // tf.contrib.layers.layer_norm in TF 1.15 is not one kernel: nn.moments (a Mean, a
  // SquaredDifference against the stopped mean, a Mean) and nn.batch_normalization (inv =
  // rsqrt(variance + eps) * gamma, broadcast to every element as gamma is per feature; x * inv;
  // beta - mean * inv; their sum), each its own kernel in the graph executor
  // (tensorflow/contrib/layers/python/layers/layers.py, layer_norm; ops/nn_impl.py, moments and
  // batch_normalization). Backward is what autodiff makes of them: the gradients of the sum, the
  // subtraction (a negation and the beta reduction), the three products (six products and the
  // reductions of the mean's, the rows' inverse deviation's and gamma's gradients), the rsqrt
  // and the add, the two means (broadcasts back to every element) and the squared difference,
  // and an AddN of the input's three gradients. The moments are the normalisation's
  // statistics (their Mean is on TF's AMP deny list, so the graph rewrite keeps them in fp32).
  const double r = n / f;  // rows
  // An element-wise op of TF1's: one operation per element it writes, about a third of the
  // elements a binary op moves (two read, one written).
  const auto ew = [](const char* what, double act, double params = 0) {
    return mem_spec(what, KernelClass::elementwise, act, params, 0, act / 3);
  };
  fwd(mem_spec("layernorm mean", KernelClass::normalization, n + r, 0, 0, n));
  fwd(ew("layernorm squared difference", 2 * n + r));
  fwd(mem_spec("layernorm variance", KernelClass::normalization, n + r, 0, 0, n));
  KernelSpec rsqrt = ew("layernorm rsqrt", 2 * r);
  rsqrt.repeat = 2;  // the epsilon's add, then the rsqrt
  fwd(rsqrt);
  fwd(ew("layernorm scale", n + r, f));
  fwd(ew("layernorm x scale", 3 * n));
  fwd(ew("layernorm mean scale", 2 * n + r));
  fwd(ew("layernorm shift", 2 * n, f));
  fwd(ew("layernorm sum", 3 * n));
  bwd_group();
  bwd(mem_spec("layernorm beta grad", KernelClass::reduction, n, f, 0, n));
  bwd(ew("layernorm shift bwd", 2 * n));
  if (input_grad) {
    bwd(ew("layernorm mean scale bwd", 3 * n));
    bwd(mem_spec("layernorm mean grad", KernelClass::reduction, n + r, 0, 0, n));
  }
  KernelSpec inverse_terms = ew("layernorm inverse grad terms", 3 * n);
  inverse_terms.repeat = 3;  // -dy * mean, dy * x, their sum
  bwd(inverse_terms);
  bwd(ew("layernorm scale bwd", 2 * n, f));
  bwd(mem_spec("layernorm inverse grad", KernelClass::reduction, n + r, 0, 0, n));
  bwd(ew("layernorm gamma grad product", 2 * n + r));
  bwd(mem_spec("layernorm gamma grad", KernelClass::reduction, n, f, 0, n));
  KernelSpec rsqrt_bwd = ew("layernorm rsqrt bwd", 3 * r);
  rsqrt_bwd.repeat = 2;
  bwd(rsqrt_bwd);
  if (input_grad) {
    bwd(ew("layernorm variance bwd", n + r));
    KernelSpec sqdiff = ew("layernorm squared difference bwd", 3 * n);
    sqdiff.repeat = 2;  // x - mean, then 2 * g * (x - mean)
    bwd(sqdiff);
    bwd(ew("layernorm mean bwd", n + r));
    bwd(ew("layernorm x scale bwd", 3 * n));
    bwd(ew("layernorm input grad sum", 4 * n));
  }
}

Tensor NetBuilder::activation(const Tensor& in, Activation kind) {
  const ActivationCost c = activation_cost(kind);
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(c.fwd_flops * n, 0, needs_grad(in) ? c.bwd_flops * n : 0, 0, 0);
  if (kind == Activation::gelu_new) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 pow(x, 3)))), one kernel per op. Its
    // intermediates are fp32 in every precision: autocast runs pow in fp32 (its fp32 list) and
    // type promotion keeps what follows fp32 (measured: the H200's GPT-2 bf16 profile,
    // tests/reference_data/h200_profile_kernels.csv, runs pow, tanh and their neighbours as
    // float kernels). Priced as raw fp32 bytes; x as an activation.
    const double f = 4 * n;  // one fp32 tensor of the activation's size
    const auto op = [&](const char* what, double x_reads, double fp32_tensors, double flops) {
      return mem_spec(what, KernelClass::elementwise, x_reads * n, 0, fp32_tensors * f, flops * n);
    };
    fwd(op("gelu_new pow", 1, 1, 2));
    fwd(op("gelu_new scale", 0, 2, 1));
    fwd(op("gelu_new add x", 1, 2, 1));
    fwd(op("gelu_new scale", 0, 2, 1));
    fwd(op("gelu_new tanh", 0, 2, 4));
    fwd(op("gelu_new add 1", 0, 2, 1));
    fwd(op("gelu_new half x", 2, 0, 1));
    fwd(op("gelu_new mul", 1, 2, 1));
    if (needs_grad(in)) {
      // Autograd's nodes in reverse: the product's two gradients, the half, tanh's, the two
      // scales, pow's (pow(x, 2), times 3, times the gradient), and x's three uses summed.
      bwd_group();
      bwd(op("gelu_new mul grad", 1, 2, 1));
      bwd(op("gelu_new mul grad", 0, 3, 1));
      bwd(op("gelu_new half grad", 1, 1, 1));
      bwd(op("gelu_new tanh grad", 0, 3, 3));
      bwd(op("gelu_new scale grad", 0, 2, 1));
      bwd(op("gelu_new scale grad", 0, 2, 1));
      bwd(op("gelu_new pow grad", 1, 1, 2));
      bwd(op("gelu_new pow grad", 0, 2, 1));
      bwd(op("gelu_new pow grad", 0, 3, 1));
      bwd(op("gelu_new grad sum", 0, 3, 1));
      bwd(op("gelu_new grad sum", 0, 3, 1));
      // Saved for backward besides x: tanh's output and the product's two factors.
      for (int i = 0; i < 3; ++i)
        save(make(in.shape, false));
    }
    save(in);
    return out;
  }
  // GELU's exact form evaluates erf forward and erf and exp backward (PyTorch's GeluCUDAKernelImpl
  // and GeluBackwardCUDAKernelImpl); the other activations' exp and tanh are not priced apart.
  const sim::ElementMath math =
      kind == Activation::gelu ? sim::ElementMath::erf : sim::ElementMath::none;
  fwd(with_math(mem_spec("activation fwd", KernelClass::elementwise, 2 * n, 0, 0, c.fwd_flops * n),
                math, n));
  if (needs_grad(in)) {
    bwd_group();
    bwd(with_math(
        mem_spec("activation bwd", KernelClass::elementwise, 3 * n, 0, 0, c.bwd_flops * n), math,
        n));
  }
  save(c.saves_output ? out : in);
  return out;
}

Tensor NetBuilder::dropout(const Tensor& in) {
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(kDropoutFwdFlops * n, 0, needs_grad(in) ? n : 0, 0, 0);
  open().saved_mask_bytes += n * repeat_;
  if (tf1_graph_) {
    // tf.nn.dropout in TF 1.15 (tensorflow/python/ops/nn_ops.py, dropout_v2): random_uniform,
    // keep_mask = random >= rate (one byte per element), x * scale, cast(keep_mask) and the
    // product, each its own kernel; backward, the two products' gradients.
    fwd(with_math(mem_spec("dropout random", KernelClass::elementwise, n, 0, 0, n),
                  sim::ElementMath::philox, n));
    fwd(mem_spec("dropout keep mask", KernelClass::elementwise, n, 0, n, n));
    fwd(mem_spec("dropout scale", KernelClass::elementwise, 2 * n, 0, 0, n));
    fwd(mem_spec("dropout mask cast", KernelClass::elementwise, n, 0, n, 0));
    fwd(mem_spec("dropout product", KernelClass::elementwise, 3 * n, 0, 0, n));
    if (needs_grad(in)) {
      bwd_group();
      bwd(mem_spec("dropout product bwd", KernelClass::elementwise, 3 * n, 0, 0, n));
      bwd(mem_spec("dropout scale bwd", KernelClass::elementwise, 2 * n, 0, 0, n));
    }
    return out;
  }
  // The mask is one byte per element (PyTorch's fused dropout keeps a bool mask).
  fwd(with_math(
      mem_spec("dropout fwd", KernelClass::elementwise, 2 * n, 0, n, kDropoutFwdFlops * n),
      sim::ElementMath::philox, n));
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("dropout bwd", KernelClass::elementwise, 2 * n, 0, n, n));
  }
  return out;
}

Tensor NetBuilder::dropout2d(const Tensor& in) {
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(n, 0, needs_grad(in) ? n : 0, 0, 0);
  open().saved_mask_bytes += static_cast<double>(in.channels()) * repeat_;
  fwd(mem_spec("dropout2d fwd", KernelClass::elementwise, 2 * n, 0, 0, n));
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("dropout2d bwd", KernelClass::elementwise, 2 * n, 0, 0, n));
  }
  return out;
}

Tensor NetBuilder::add(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape) throw std::logic_error("NetBuilder::add: shapes differ");
  Tensor out = make(a.shape, needs_grad(a) || needs_grad(b));
  add_costs(a.elements(), 0, 0, 0, 0);  // the gradient passes through unchanged
  const double n = a.elements();
  fwd(mem_spec("add", KernelClass::elementwise, 3 * n, 0, 0, n));
  // Backward passes the gradient to both inputs unchanged; autograd then sums the two gradients
  // that reach the tensor that fanned out (the residual's source): one add kernel.
  if (needs_grad(a) && needs_grad(b)) {
    bwd_group();
    bwd(grad_accumulate_spec("add grad accumulate", n));
  }
  return out;
}

Tensor NetBuilder::mul(const Tensor& a, const Tensor& b) {
  Tensor out = make(a.shape, needs_grad(a) || needs_grad(b));
  const double n = a.elements();
  add_costs(n, 0, (needs_grad(a) ? n : 0) + (needs_grad(b) ? n : 0), 0, 0);
  fwd(mem_spec("mul", KernelClass::elementwise, 2 * n + b.elements(), 0, 0, n));
  bwd_group();
  if (needs_grad(a))
    bwd(mem_spec("mul grad a", KernelClass::elementwise, 2 * n + b.elements(), 0, 0, n));
  if (needs_grad(b)) {
    // b broadcasts over a's trailing dimensions: its gradient is a reduction of dy * a.
    const KernelClass cls = b.elements() < n ? KernelClass::reduction : KernelClass::elementwise;
    bwd(mem_spec("mul grad b", cls, 2 * n + b.elements(), 0, 0, n));
  }
  save(a);
  save(b);
  return out;
}

Tensor NetBuilder::max_pool(const Tensor& in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t pad) {
  Tensor out = make({in.channels(), out_dim(in.height(), kernel, stride, pad),
                     out_dim(in.width(), kernel, stride, pad)},
                    needs_grad(in));
  const double n = out.elements();
  add_costs(n * static_cast<double>(kernel * kernel), 0, needs_grad(in) ? n : 0, 0, 0);
  // max_pool2d_with_indices writes int64 argmax indices. Backward gathers: each input element's
  // thread walks the output windows that cover it, reading each one's index and gradient, and
  // writes its own gradient once (aten/src/ATen/native/cuda/DilatedMaxPool2d.cu,
  // max_pool_backward_nchw and max_pool_backward_nhwc: the ph/pw loops from p_start to p_end).
  // A row or column lies in kernel / stride windows on average, so an input element reads
  // (kernel / stride)^2 of both: 2.25 for ResNet's 3x3 stride-2 pool, whose backward took 458 us
  // (bf16, channels-last) and 577 us (fp32, NCHW) of the H200's ResNet-50 steps at batch 64
  // (tests/reference_data/h200_profile_kernels.csv), where one read of the output gradient and
  // indices had priced it at 100-170 us.
  fwd(mem_spec("maxpool fwd", KernelClass::pooling, in.elements() + n, 0, 8 * n,
               n * static_cast<double>(kernel * kernel)));
  if (needs_grad(in)) {
    bwd_group();
    const double windows =
        std::pow(static_cast<double>(kernel) / static_cast<double>(stride), 2.0) * in.elements();
    bwd(mem_spec("maxpool bwd", KernelClass::pooling, windows + in.elements(), 0, 8 * windows,
                 windows));
  }
  save(in);  // PyTorch also keeps the argmax indices; not counted
  return out;
}

Tensor NetBuilder::avg_pool(const Tensor& in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t pad) {
  Tensor out = make({in.channels(), out_dim(in.height(), kernel, stride, pad),
                     out_dim(in.width(), kernel, stride, pad)},
                    needs_grad(in));
  const double work = out.elements() * static_cast<double>(kernel * kernel);
  add_costs(work, 0, needs_grad(in) ? work : 0, 0, 0);
  fwd(mem_spec("avgpool fwd", KernelClass::pooling, in.elements() + out.elements(), 0, 0, work));
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("avgpool bwd", KernelClass::pooling, in.elements() + out.elements(), 0, 0, work));
  }
  return out;
}

Tensor NetBuilder::adaptive_avg_pool(const Tensor& in, std::int64_t out_h, std::int64_t out_w) {
  if (in.height() == out_h && in.width() == out_w) return in;  // PyTorch returns the input as is
  Tensor out = make({in.channels(), out_h, out_w}, needs_grad(in));
  const double n = std::max(in.elements(), out.elements());
  add_costs(n, 0, needs_grad(in) ? n : 0, 0, 0);
  fwd(mem_spec("adaptive avgpool fwd", KernelClass::pooling, in.elements() + out.elements(), 0, 0,
               n));
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("adaptive avgpool bwd", KernelClass::pooling, in.elements() + out.elements(), 0, 0,
                 n));
  }
  return out;
}

Tensor NetBuilder::global_avg_pool(const Tensor& in) {
  Tensor out = make({in.channels()}, needs_grad(in));
  const double n = in.elements();
  add_costs(n, 0, needs_grad(in) ? n : 0, 0, 0);
  fwd(mem_spec("global avgpool fwd", KernelClass::reduction, n + out.elements(), 0, 0, n));
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("global avgpool bwd", KernelClass::elementwise, n + out.elements(), 0, 0, n));
  }
  return out;
}

Tensor NetBuilder::upsample2x(const Tensor& in) {
  Tensor out = make({in.channels(), 2 * in.height(), 2 * in.width()}, needs_grad(in));
  add_costs(0, 0, needs_grad(in) ? out.elements() : 0, 0, 0);  // a copy forward, a sum backward
  fwd(mem_spec("upsample fwd", KernelClass::copy, in.elements() + out.elements()));
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("upsample bwd", KernelClass::pooling, in.elements() + out.elements(), 0, 0,
                 out.elements()));
  }
  return out;
}

Tensor NetBuilder::pad_to(const Tensor& in, std::int64_t h, std::int64_t w) {
  if (in.height() == h && in.width() == w) return in;
  return copy_as(in, {in.channels(), h, w});
}

Tensor NetBuilder::copy_as(const Tensor& in, std::vector<std::int64_t> shape) {
  Tensor out = make(std::move(shape), needs_grad(in));
  // A strided copy (pad, slice) forward and its adjoint backward.
  fwd(mem_spec("copy", KernelClass::copy, in.elements() + out.elements()));
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("copy bwd", KernelClass::copy, in.elements() + out.elements()));
  }
  return out;
}

Tensor NetBuilder::loop_slice(const Tensor& whole, std::vector<std::int64_t> shape) {
  Tensor out = make(std::move(shape), needs_grad(whole));
  if (needs_grad(whole)) {
    // paper: select's backward allocates a zero tensor the size of the whole input and copies the
    // slice's gradient into it (pytorch/pytorch torch/csrc/autograd/FunctionsManual.cpp,
    // select_backward), and autograd adds each iteration's into the whole's gradient
    // (InputBuffer::add): per iteration, a fill and an add over the whole tensor, however small
    // the slice.
    const double n = whole.elements();
    bwd_group();
    bwd(mem_spec("select bwd zeros", KernelClass::elementwise, n));
    bwd(mem_spec("select bwd copy", KernelClass::copy, 2 * out.elements()));
    bwd(grad_accumulate_spec("select grad accumulate", n));
  }
  return out;
}

Tensor NetBuilder::concat(const std::vector<Tensor>& parts) {
  std::vector<std::int64_t> shape = parts.at(0).shape;
  bool grad = false;
  shape[0] = 0;
  for (const auto& p : parts) {
    if (p.shape.size() != shape.size() ||
        !std::equal(p.shape.begin() + 1, p.shape.end(), shape.begin() + 1)) {
      throw std::logic_error("NetBuilder::concat: spatial shapes differ");
    }
    shape[0] += p.shape[0];
    grad = grad || needs_grad(p);
  }
  Tensor out = make(std::move(shape), grad);
  // torch.cat copies every part once; its backward hands each part a view of the gradient.
  fwd(mem_spec("concat", KernelClass::copy, 2 * out.elements()));
  return out;
}

Tensor NetBuilder::reshape(const Tensor& in, std::vector<std::int64_t> shape) {
  if (product(shape) != in.elements())
    throw std::logic_error("NetBuilder::reshape: element count differs");
  Tensor out = in;  // same storage, so it is saved at most once
  out.shape = std::move(shape);
  return out;
}

Tensor NetBuilder::take_rows(const Tensor& in, std::int64_t count) {
  std::vector<std::int64_t> shape = in.shape;
  shape.at(0) = count;
  Tensor out = make(std::move(shape), needs_grad(in));
  // A slice is a view forward; backward materialises a zero gradient of the whole input and
  // copies the slice's gradient into it.
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("slice bwd", KernelClass::copy, in.elements() + out.elements()));
  }
  return out;
}

Tensor NetBuilder::embedding(const Tensor& ids, std::int64_t vocab, std::int64_t dim, bool tied) {
  std::vector<std::int64_t> shape = ids.shape;
  shape.push_back(dim);
  Tensor out = make(std::move(shape), true);
  // A gather forward and a scatter-add of the output gradient into the table backward.
  add_costs(0, 0, 0, out.elements(), tied ? 0 : vocab * dim, tied ? 0 : 1);
  const double n = out.elements();
  const double ids_bytes = 8 * ids.elements();  // int64 indices
  fwd(mem_spec("embedding fwd", KernelClass::gather, 2 * n, 0, ids_bytes));
  // PyTorch's embedding_dense_backward: a zero-filled dense gradient of the whole table, then a
  // sorted segmented sum of the output gradient scattered into it.
  bwd_group();
  bwd(mem_spec("embedding grad zero", KernelClass::copy, 0,
               static_cast<double>(vocab) * static_cast<double>(dim)));
  bwd(mem_spec("embedding bwd", KernelClass::scatter, 2 * n, 0, 2 * ids_bytes, n));
  return out;
}

Tensor NetBuilder::attention(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t heads,
                             bool with_dropout, const std::vector<Tensor>& saved_storage,
                             bool causal) {
  const std::int64_t d = q.features();
  if (heads <= 0 || d % heads != 0) {
    throw ShapeError("a width of " + std::to_string(d) + " cannot be split into " +
                     std::to_string(heads) + " heads");
  }
  const double sq = static_cast<double>(q.shape.at(0));
  const double sk = static_cast<double>(k.shape.at(0));
  const double h = static_cast<double>(heads);
  const double dh = static_cast<double>(d / heads);
  const double scores = h * sq * sk;
  const double macs = 2 * sq * sk * static_cast<double>(d);  // Q K^T and P V
  Tensor out = make(q.shape, true);
  const double dropout_fwd = with_dropout ? kDropoutFwdFlops * scores : 0;
  const double dropout_bwd = with_dropout ? scores : 0;
  add_costs(2 * macs + (kSoftmaxFwdFlops + 1) * scores + dropout_fwd, macs,
            2 * (2 * macs) + kSoftmaxBwdFlops * scores + dropout_bwd, 0, 0);
  for (const auto& t : saved_storage)
    save(t);
  (void)v;
  Layer& l = open();
  l.saved_elements += scores * repeat_;  // softmax output
  l.unfused_saved_elements += scores * repeat_;
  if (with_dropout) {
    l.saved_mask_bytes += scores * repeat_;
    l.unfused_saved_mask_bytes += scores * repeat_;
    l.saved_elements += scores * repeat_;  // dropped-out probabilities, the input of P V
    l.unfused_saved_elements += scores * repeat_;
  }
  l.fused_saved_elements +=
      h * sq * repeat_;  // FlashAttention keeps one fp32 log-sum-exp per row and head

  const double qe = sq * static_cast<double>(d);
  const double ke = sk * static_cast<double>(d);
  const double one = sq * sk * 2 * dh;  // FLOPs of one score-sized GEMM per head
  // Unfused (eager BERT/GPT-2 style): batched GEMMs over heads, with the score matrix written and
  // read by each pointwise step: scale, mask, softmax, dropout.
  auto unfused = [](KernelSpec spec) {
    spec.form = AttentionForm::unfused_only;
    return spec;
  };
  fwd(unfused(gemm_spec("attention QK^T", KernelClass::gemm, h * one, qe + ke + scores, 0,
                        {sq, sk, dh, h}, BatchDim::batch)));
  fwd(unfused(
      mem_spec("attention scale+mask", KernelClass::elementwise, 2 * scores, 0, 0, 2 * scores)));
  fwd(unfused(per_row(with_math(mem_spec("attention softmax", KernelClass::softmax, 2 * scores, 0,
                                         0, kSoftmaxFwdFlops * scores),
                                sim::ElementMath::softmax, scores),
                      sk)));
  if (with_dropout) {
    fwd(unfused(with_math(
        mem_spec("attention dropout", KernelClass::elementwise, 2 * scores, 0, scores, dropout_fwd),
        sim::ElementMath::philox, scores)));
  }
  fwd(unfused(gemm_spec("attention PV", KernelClass::gemm, h * one, scores + ke + qe, 0,
                        {sq, dh, sk, h}, BatchDim::batch)));
  bwd_group();
  bwd(unfused(gemm_spec("attention dV", KernelClass::gemm, h * one, scores + qe + ke, 0,
                        {sk, dh, sq, h}, BatchDim::batch)));
  bwd(unfused(gemm_spec("attention dP", KernelClass::gemm, h * one, qe + ke + scores, 0,
                        {sq, sk, dh, h}, BatchDim::batch)));
  if (with_dropout) {
    bwd(unfused(mem_spec("attention dropout bwd", KernelClass::elementwise, 2 * scores, 0, scores,
                         dropout_bwd)));
  }
  bwd(unfused(per_row(mem_spec("attention softmax bwd", KernelClass::softmax, 3 * scores, 0, 0,
                               kSoftmaxBwdFlops * scores),
                      sk)));
  bwd(unfused(mem_spec("attention scale bwd", KernelClass::elementwise, 2 * scores, 0, 0, scores)));
  bwd(unfused(gemm_spec("attention dQ", KernelClass::gemm, h * one, scores + ke + qe, 0,
                        {sq, dh, sk, h}, BatchDim::batch)));
  bwd(unfused(gemm_spec("attention dK", KernelClass::gemm, h * one, scores + qe + ke, 0,
                        {sk, dh, sq, h}, BatchDim::batch)));
  // Fused (FlashAttention-2): one kernel each way; the scores stay in on-chip memory, dropout
  // masks are regenerated from the RNG state, and backward recomputes the scores: five
  // score-sized GEMMs against the forward's two (Dao, arXiv:2307.08691, section 3.2).
  // Under a causal mask each block of queries skips the key blocks wholly above the diagonal
  // (ibid., section 3.1.1, "Causal masking": "about 1.7-1.8x speedup"; PyTorch's memory-
  // efficient kernels too: mem_eff_attention/kernel_forward.h, CausalFromTopLeft): of n x n
  // blocks, n (n + 1) / 2 run, the diagonal ones masked within. Blocks of kCausalBlock rows.
  const double blocks = std::ceil(sq / kCausalBlock);
  const double computed = causal && sq == sk && blocks > 0 ? (blocks + 1) / (2 * blocks) : 1.0;
  KernelSpec ffwd = gemm_spec("flash attention fwd", KernelClass::attention, 2 * h * one * computed,
                              3 * qe + ke, 0, {sq, dh, sk * computed, h}, BatchDim::batch);
  ffwd.raw_bytes = 4 * h * sq;  // log-sum-exp
  ffwd.form = AttentionForm::fused_only;
  fwd(ffwd);
  KernelSpec fbwd = gemm_spec("flash attention bwd", KernelClass::attention, 5 * h * one * computed,
                              5 * qe + 3 * ke, 0, {sk, dh, sq * computed, h}, BatchDim::batch);
  fbwd.raw_bytes = 4 * h * sq;
  fbwd.form = AttentionForm::fused_only;
  bwd(fbwd);
  return out;
}

Tensor NetBuilder::lstm(const Tensor& in, std::int64_t hidden, LstmInput input) {
  const double seq = static_cast<double>(in.shape.at(0));
  const auto in_features = in.features();
  const bool linear = input == LstmInput::linear;
  if (!linear && in_features != hidden) {
    throw ShapeError(
        "an LSTM that adds its input to the gates (skip input) needs inputs as wide "
        "as its hidden state (" +
        std::to_string(in_features) + " vs " + std::to_string(hidden) + ")");
  }
  const double h = static_cast<double>(hidden);
  const double x = linear ? static_cast<double>(in_features) : 0.0;  // input weight columns
  const double macs_x = seq * 4 * h * x;
  const double macs_h = seq * 4 * h * h;
  const double gate_flops = seq * kLstmGateFlopsPerHidden * h;
  const double bias_flops = seq * 8 * h;
  Tensor out = make({in.shape.at(0), hidden}, true);
  const std::int64_t params = 4 * hidden * (static_cast<std::int64_t>(x) + hidden) + 8 * hidden;
  const int tensors = linear ? 4 : 3;
  add_costs(2 * (macs_x + macs_h) + bias_flops + gate_flops, macs_x + macs_h,
            (needs_grad(in) ? 2 * macs_x : 0) + 2 * macs_h + gate_flops,
            2 * (macs_x + macs_h) + bias_flops, params, tensors);
  autocast_params(params, tensors);
  // cuDNN's LSTM (Appleyard, 'Optimizing Recurrent Neural Networks in cuDNN 5', NVIDIA developer
  // blog, 2016): the input projections of all time steps as one GEMM; then per time step one GEMM
  // h_{t-1} W_hh for the four gates at once and one kernel for all the pointwise gate work
  // (biases, sigmoids, tanh, the cell update). Backward runs the steps in reverse (the pointwise
  // gate gradients, then the GEMM for dh_{t-1}), then the input-gradient and weight-gradient
  // GEMMs over all steps. PyTorch's LSTMCell launches the same per step: two addmm (input and
  // hidden) and one fused cell kernel.
  const double steps = seq;
  const int n_steps = static_cast<int>(steps);
  const double w_ih = 4 * h * x;
  const double w_hh = 4 * h * h;
  // Each kernel below belongs to cuDNN's form, TensorFlow's BlockLSTM form or both; the framework
  // profile's `rnn` picks (models/kernel_plan.cpp). Skip input is a cuDNN mode only.
  const auto cudnn = [&](KernelSpec k) {
    if (linear) k.rnn_form = RnnForm::cudnn_only;
    return k;
  };
  const auto block = [](KernelSpec k) {
    k.rnn_form = RnnForm::tf_block_only;
    return k;
  };
  // The per-step kernels of a whole sequence are launched by the library inside one framework
  // op (cudnnRNNForward*; BlockLSTMOp::Compute loops over the steps in C++). Inside a
  // framework-level loop (begin_repeat: a Python loop of LSTMCell steps, Tacotron 2's decoder)
  // each is an op of its own that the framework dispatches.
  const auto per_step = [&](KernelSpec k, int launches_per_step = 1) {
    k.repeat = n_steps * launches_per_step;
    k.library_launch = repeat_ == 1;
    return k;
  };
  // PyTorch sets each of cuDNN's three calls up on the host before it launches anything: it
  // rebuilds the RNN, dropout and sequence descriptors and queries the temp space sizes in each
  // of _cudnn_rnn, _cudnn_rnn_backward_input and _cudnn_rnn_backward_weight (pytorch/pytorch
  // aten/src/ATen/native/cudnn/RNN.cpp: RNNDescriptors, cudnnGetRNNTempSpaceSizes), once per
  // call whatever the number of steps. The first kernel of each call carries it.
  const auto call = [&](KernelSpec k, bool first = true) {
    k.library_call = first && repeat_ == 1;
    return k;
  };
  if (linear) {
    fwd(call(cudnn(gemm_spec("lstm input projection", KernelClass::gemm, 2 * macs_x,
                             seq * (x + 4 * h), w_ih, {seq, 4 * h, x, 1}, BatchDim::m))));
  }
  // Per step and sample: the GEMM reads h_{t-1} (h) and writes the gate pre-activations (4h); the
  // gate kernel reads those, the input's share (the projection, 4h; or the raw input, h) and
  // c_{t-1}, and writes h_t, c_t and the four gate activations kept for backward.
  // cuDNN's step GEMMs stream the recurrent weights with one thread block per tile of the 4h
  // gate rows, each over its whole panel of W_hh (no split of the reduction): forward, the gates
  // (4h) are the output columns; backward, dh_{t-1} = sum over the four gates of W_g^T dg, the
  // four gates' products as a batch over h output columns each. At the batches of training
  // (N <= 32) these GEMMs read their weights with too few blocks in flight to fill the DRAM pipe
  // (sim/hw/kernel_model.cpp, blocks_bw_bytes_per_s): DeepBench's V100 cells (results/train, N
  // 16-32, fp16 and fp32, forward and backward alike) stream W_hh at 160-175 GB/s at h 512 (16
  // blocks of 128 gate rows), about 300 at h 1024, 500 at h 2048 and 660-700 at h 4096, rising
  // with the block count until the device's rate, where one GEMM of the same bytes in cuBLAS
  // (which splits K to fill the device) streams 400-600 GB/s (deepbench_gemm, M 2048-4096, N 16).
  fwd(call(cudnn(per_step(gemm_spec("lstm cell", KernelClass::recurrent, 2 * macs_h / steps, 5 * h,
                                    w_hh, {1, 4 * h, h, 1}, BatchDim::m))),
           !linear));
  fwd(cudnn(per_step(mem_spec("lstm gates", KernelClass::elementwise, (linear ? 15 : 12) * h, 8 * h,
                              0, (gate_flops + bias_flops) / steps))));
  // TensorFlow's BlockLSTM (tensorflow/core/kernels/rnn/lstm_ops.cc, BlockLSTMOp and
  // LSTMBlockCellFprop; the LSTMBlockFusedCell of NVIDIA DeepLearningExamples' TF GNMT,
  // TensorFlow/Translation/GNMT/block_lstm.py): per step xh = [x_t, h_{t-1}] (a copy), one GEMM
  // xh W over input and recurrent weights together, and the gate kernel.
  const double xh = x + h;
  if (linear) {
    fwd(per_step(block(mem_spec("lstm xh concat", KernelClass::copy, 2 * xh))));
    fwd(per_step(block(gemm_spec("lstm cell gemm", KernelClass::gemm, 2 * 4 * h * xh, xh + 4 * h,
                                 w_ih + w_hh, {1, 4 * h, xh, 1}, BatchDim::m))));
    fwd(per_step(block(mem_spec("lstm block gates", KernelClass::elementwise, 12 * h, 4 * h, 0,
                                (gate_flops + bias_flops) / steps))));
  }
  bwd_group();
  // Backward per step: the gate kernel reads dh (from above and from step t+1), dc, the saved
  // gates and c, and writes the gate gradients (4h), dc_{t-1} (and dx under skip input); the
  // GEMM reads the gate gradients and writes dh_{t-1}.
  bwd(call(cudnn(per_step(mem_spec("lstm gates bwd", KernelClass::elementwise,
                                   (linear ? 13 : 14) * h, 0, 0, gate_flops / steps)))));
  KernelSpec cell_bwd = gemm_spec("lstm cell bwd", KernelClass::recurrent, 2 * macs_h / steps,
                                  5 * h, w_hh, {1, h, h, 4}, BatchDim::m);
  cell_bwd.recurrent_data_gradient = true;
  bwd(cudnn(per_step(cell_bwd)));
  if (linear && needs_grad(in)) {
    bwd(cudnn(gemm_spec("lstm input dgrad", KernelClass::gemm, 2 * macs_x, seq * (x + 4 * h), w_ih,
                        {seq, x, 4 * h, 1}, BatchDim::m)));
  }
  KernelSpec weight_grad =
      gemm_spec("lstm weight grad", KernelClass::gemm, 2 * (macs_x + macs_h),
                seq * (x + 2 * h + 4 * h), w_ih + w_hh, {4 * h, x + h, seq, 1}, BatchDim::k);
  // cuDNN reduces the weight gradient over all samples and steps in one pass per output tile:
  // DeepBench's hidden-256, 150-step cells (16 output tiles of 1024 x 256, N x T deep) take 82,
  // 133 and 241 us on V100 in fp16 at N = 16, 32, 64, growing with the depth as one tile's loop
  // does, where a split reduction filling the 80 SMs would take 39, 52 and 82 us (the model's
  // split-K). Not split, every DeepBench weight-gradient series fits better: V100 fp32 17.2% ->
  // 13.0%, fp16 33.1% -> 31.4%, P100 12.8% -> 11.5%, GTX 1080 Ti 10.5% -> 7.7% (MAPE); the
  // table 28.1% / 27.5% -> 27.3% / 26.7%.
  weight_grad.whole_k = true;
  bwd(call(cudnn(weight_grad)));
  // cudnnRNNBackwardWeights is additive: it computes the gradient in its workspace ("workspace is
  // required for intermediate storage") and adds it to what dw holds (cuDNN API reference:
  // "The mode of operation in this case is additive, the weight gradients calculated will be
  // added to those already existing in dw"; cuDNN 8's cudnnRNNBackwardWeights_v8 makes it a
  // choice, CUDNN_WGRAD_MODE_ADD or _SET). That pass reads the result and dw and writes dw, three
  // weight-sized tensors, after the GEMM. DeepBench's backward-weights times have a part that
  // grows with the weights and not with N x T (results/train, bwd_weights against N at fixed h:
  // 0.27 ms in fp16 and 0.31 ms in fp32 at h 2048, 10-20 bytes per weight at the V100's 900
  // GB/s, whatever the dtype); priced, it took DeepBench's LSTM table from 31.0% / 30.8% to
  // 28.1% / 27.5% (V100 fp16 weight gradients from -52% to -33% mean).
  bwd(cudnn(
      mem_spec("lstm weight grad accumulate", KernelClass::elementwise, 0, 3 * (w_ih + w_hh))));
  // And the bias gradients, which cudnnRNNBackwardWeights writes into dw with the matrices:
  // cuDNN's LSTM has eight bias vectors, an input and a recurrent one per gate (cuDNN API
  // reference, cudnnGetRNNLinLayerBiasParams), both of whose gradients are the gate gradients
  // summed over every sample and step: a column reduction reading the N x T x 4h gate gradients.
  bwd(cudnn(mem_spec("lstm weight grad biases", KernelClass::reduction, seq * 4 * h, 8 * h, 0,
                     seq * 4 * h)));
  // BlockLSTMGradOp / BlockLSTMBprop per step, in reverse: two adds (the c and h gradients from
  // above and from step t+1), the gate gradients, xh again, dxh = dicfo W^T (a GEMM), its split
  // into dx_t and dh_{t-1} (two copies), the weight gradient accumulated in place, W' += xh^T
  // dicfo (a GEMM whose reduction is the batch: it reads and writes all of W' every step), and
  // the bias gradient's column sum.
  if (linear) {
    bwd(per_step(block(mem_spec("lstm state grad add", KernelClass::elementwise, 3 * h)), 2));
    bwd(per_step(block(mem_spec("lstm block gates bwd", KernelClass::elementwise, 13 * h, 0, 0,
                                gate_flops / steps))));
    bwd(per_step(block(mem_spec("lstm xh concat", KernelClass::copy, 2 * xh))));
    bwd(per_step(block(gemm_spec("lstm dxh gemm", KernelClass::gemm, 2 * 4 * h * xh, 4 * h + xh,
                                 w_ih + w_hh, {1, xh, 4 * h, 1}, BatchDim::m))));
    bwd(per_step(block(mem_spec("lstm dxh split", KernelClass::copy, xh)), 2));
    bwd(per_step(block(gemm_spec("lstm weight grad step", KernelClass::gemm, 2 * 4 * h * xh,
                                 xh + 4 * h, 2 * (w_ih + w_hh), {4 * h, xh, 1, 1}, BatchDim::k))));
    bwd(per_step(
        block(mem_spec("lstm bias grad step", KernelClass::reduction, 4 * h, 8 * h, 0, 4 * h))));
  }
  save(in);
  open().saved_elements +=
      seq * 6 * h * repeat_;  // gate activations (4h), cell state and tanh(cell) per step
  save(out);                  // h_{t-1} feeds the recurrent weight gradient
  return out;
}

void NetBuilder::loss(const Tensor& logits) {
  const double n = logits.elements();
  add_costs(kSoftmaxFwdFlops * n, 0, kSoftmaxBwdFlops * n, 0, 0);
  open().saved_elements += n * repeat_;  // the probabilities
  // cross_entropy = log_softmax + nll_loss forward; backward: nll's gradient (zero-filled, one
  // value per row scattered) and log_softmax's.
  const double classes = static_cast<double>(logits.features());
  const double rows = n / classes;
  fwd(per_row(with_math(mem_spec("log_softmax fwd", KernelClass::softmax, 2 * n, 0, 0,
                                 kSoftmaxFwdFlops * n),
                        sim::ElementMath::softmax, n),
              classes));
  fwd(mem_spec("nll_loss fwd", KernelClass::gather, 2 * rows, 0, 8 * rows));
  bwd_group();
  bwd(mem_spec("nll_loss bwd", KernelClass::copy, n, 0, 8 * rows));
  bwd(per_row(mem_spec("log_softmax bwd", KernelClass::softmax, 3 * n, 0, 0, kSoftmaxBwdFlops * n),
              classes));
}

std::vector<Layer> NetBuilder::take_layers() {
  if (open_) throw std::logic_error("NetBuilder: layer '" + layers_.back().name + "' left open");
  return std::move(layers_);
}

Tensor conv_entry(NetBuilder& nb, const std::string& name, const Tensor& in, const Conv2d& spec) {
  return single_entry(nb, name, OpClass::conv, in,
                      [&](const Tensor& x) { return nb.conv2d(x, spec); });
}

Tensor bn_entry(NetBuilder& nb, const std::string& name, const Tensor& in) {
  return single_entry(nb, name, OpClass::normalization, in,
                      [&](const Tensor& x) { return nb.batch_norm(x); });
}

Tensor relu_entry(NetBuilder& nb, const std::string& name, const Tensor& in) {
  return single_entry(nb, name, OpClass::elementwise, in,
                      [&](const Tensor& x) { return nb.activation(x, Activation::relu); });
}

Tensor conv_bn_relu(NetBuilder& nb, const Tensor& in, const Conv2d& spec) {
  return nb.activation(nb.batch_norm(nb.conv2d(in, spec)), Activation::relu);
}

std::vector<Layer> finish_with_linear_head(NetBuilder& nb, const std::string& name,
                                           const Tensor& in, std::int64_t outputs) {
  nb.begin(name, OpClass::matmul, in.elements());
  const Tensor logits = nb.linear(in, outputs, true);
  nb.loss(logits);
  nb.end(logits);
  return nb.take_layers();
}

// ---- added for zoo coverage ----

namespace {

// estimate: RMSNorm per element, by the same counting as kNormFwdFlops: square and sum (2),
// normalize (1), scale (1); backward to the input about 6, the scale's gradient a product and a
// reduction (2).
constexpr double kRmsNormFwdFlops = 4;
constexpr double kRmsNormBwdInputFlops = 6;
constexpr double kRmsNormBwdWeightFlops = 2;
// paper: Su et al. 2021 (RoFormer), Eq. 34: x * cos + rotate_half(x) * sin, 2 products and 1 sum
// per element, the same backward.
constexpr double kRotaryFlops = 3;

}  // namespace

Tensor NetBuilder::rms_norm(const Tensor& in) {
  Tensor out = make(in.shape, true);
  const double n = in.elements();
  add_costs(kRmsNormFwdFlops * n, 0, needs_grad(in) ? kRmsNormBwdInputFlops * n : 0,
            kRmsNormBwdWeightFlops * n, in.features(), 1);
  // As layer_norm: one row kernel forward; the input gradient and the scale's column reduction.
  const double f = static_cast<double>(in.features());
  fwd(per_row(
      mem_spec("rmsnorm fwd", KernelClass::normalization, 2 * n, f, 0, kRmsNormFwdFlops * n), f));
  bwd_group();
  if (needs_grad(in)) {
    bwd(per_row(
        mem_spec("rmsnorm bwd", KernelClass::normalization, 3 * n, f, 0, kRmsNormBwdInputFlops * n),
        f));
  }
  bwd(mem_spec("rmsnorm weight grad", KernelClass::reduction, 2 * n, f, 0,
               kRmsNormBwdWeightFlops * n));
  save(in);
  return out;
}

Tensor NetBuilder::concat_features(const std::vector<Tensor>& parts) {
  std::vector<std::int64_t> shape = parts.at(0).shape;
  bool grad = false;
  shape.back() = 0;
  for (const auto& p : parts) {
    if (p.shape.size() != shape.size() ||
        !std::equal(p.shape.begin(), p.shape.end() - 1, shape.begin())) {
      throw std::logic_error("NetBuilder::concat_features: leading shapes differ");
    }
    shape.back() += p.shape.back();
    grad = grad || needs_grad(p);
  }
  Tensor out = make(std::move(shape), grad);
  fwd(mem_spec("concat", KernelClass::copy, 2 * out.elements()));  // backward: views
  return out;
}

// tf.nn.rnn_cell.LSTMCell.call without projection or peepholes (tensorflow/python/ops/
// rnn_cell_impl.py, TF 1.15): lstm_matrix = matmul(concat([inputs, m_prev], 1), kernel);
// bias_add; split into i, j, f, o; c = sigmoid(f + forget_bias) * c_prev + sigmoid(i) * tanh(j);
// m = sigmoid(o) * tanh(c). Forward: the concat, the GEMM, the bias add, the split and ten
// element-wise ops over the hidden width (an add, four activations, three products, a sum and
// tanh(c)). Backward (the registered gradients of those ops): two products per multiplication
// (8), the activations' gradients (5), AddN where c and m fan out to the next step (2), the
// split's gradient (a concat), BiasAddGrad's column sum, the GEMM's two gradients and the
// concat's gradient (two slices). Inside a loop the weight gradients are summed over the steps
// (add_costs' accumulation).
Tensor NetBuilder::tf_lstm_cell(const Tensor& in, std::int64_t hidden) {
  const double h = static_cast<double>(hidden);
  const double x = static_cast<double>(in.features());
  const double xh = x + h;
  const double macs = 4 * h * xh;
  const double gate_flops = kLstmGateFlopsPerHidden * h;
  Tensor out = make({in.shape.at(0), hidden}, true);
  const std::int64_t params = 4 * hidden * (in.features() + hidden) + 4 * hidden;
  add_costs(2 * macs + 4 * h + gate_flops, macs, (needs_grad(in) ? 2 * macs : 0) + gate_flops,
            2 * macs + 4 * h, params, 2);
  autocast_params(params, 2);
  constexpr int kPointwiseFwd = 10;
  constexpr int kPointwiseBwd = 15;
  fwd(mem_spec("lstm cell concat", KernelClass::copy, 2 * xh));
  fwd(gemm_spec("lstm cell matmul", KernelClass::gemm, 2 * macs, xh + 4 * h, macs,
                {1, 4 * h, xh, 1}, BatchDim::m));
  fwd(mem_spec("lstm cell bias add", KernelClass::elementwise, 8 * h, 4 * h, 0, 4 * h));
  fwd(mem_spec("lstm cell split", KernelClass::copy, 8 * h));
  // Ten ops reading one or two h-wide operands and writing one: 24 h elements in all.
  KernelSpec pointwise = mem_spec("lstm cell pointwise", KernelClass::elementwise, 2.4 * h, 0, 0,
                                  gate_flops / kPointwiseFwd);
  pointwise.repeat = kPointwiseFwd;
  fwd(pointwise);
  bwd_group();
  KernelSpec pointwise_bwd = mem_spec("lstm cell pointwise bwd", KernelClass::elementwise, 3 * h, 0,
                                      0, gate_flops / kPointwiseBwd);
  pointwise_bwd.repeat = kPointwiseBwd;
  bwd(pointwise_bwd);
  bwd(mem_spec("lstm cell split bwd", KernelClass::copy, 8 * h));
  bwd(mem_spec("lstm cell bias grad", KernelClass::reduction, 4 * h, 4 * h));
  if (needs_grad(in)) {
    bwd(gemm_spec("lstm cell matmul dgrad", KernelClass::gemm, 2 * macs, 4 * h + xh, macs,
                  {1, xh, 4 * h, 1}, BatchDim::m));
  }
  bwd(gemm_spec("lstm cell matmul wgrad", KernelClass::gemm, 2 * macs, 4 * h + xh, macs,
                {xh, 4 * h, 1, 1}, BatchDim::k));
  KernelSpec slices = mem_spec("lstm cell concat bwd", KernelClass::copy, xh);
  slices.repeat = 2;
  bwd(slices);
  save(in);
  open().saved_elements += 12 * h * repeat_;  // the gates, their activations, c and tanh(c)
  return out;
}

// rnn.py _dynamic_rnn_loop -> _rnn_step(skip_conditionals=True): _copy_some_through selects
// every state tensor and the output with array_ops.where(time >= sequence_length, old, new); the
// gradient of where is two selects (one per branch).
void NetBuilder::dynamic_rnn_copy_through(const std::vector<Tensor>& state) {
  for (const Tensor& t : state) {
    const double n = t.elements();
    fwd(mem_spec("dynamic_rnn copy-through", KernelClass::elementwise, 3 * n));
    if (needs_grad(t)) {
      bwd_group();
      KernelSpec grad = mem_spec("dynamic_rnn copy-through bwd", KernelClass::elementwise, 2 * n);
      grad.repeat = 2;
      bwd(grad);
    }
  }
}

Tensor NetBuilder::rotary(const Tensor& in) {
  Tensor out = make(in.shape, needs_grad(in));
  const double n = in.elements();
  add_costs(kRotaryFlops * n, 0, needs_grad(in) ? kRotaryFlops * n : 0, 0, 0);
  fwd(mem_spec("rotary fwd", KernelClass::elementwise, 2 * n, 0, 0, kRotaryFlops * n));
  if (needs_grad(in)) {
    bwd_group();
    bwd(mem_spec("rotary bwd", KernelClass::elementwise, 2 * n, 0, 0, kRotaryFlops * n));
  }
  return out;
}

Tensor NetBuilder::conv_transpose1d(const Tensor& in, std::int64_t out_channels,
                                    std::int64_t kernel, std::int64_t stride, bool bias) {
  const std::int64_t c_in = in.channels();
  const std::int64_t length = (in.width() - 1) * stride + kernel;
  Tensor out = make({out_channels, 1, length}, true);
  // Every input element meets every output channel through every kernel tap.
  const double macs = in.elements() * static_cast<double>(out_channels * kernel);
  const double bias_flops = bias ? out.elements() : 0;
  const std::int64_t params = c_in * out_channels * kernel + (bias ? out_channels : 0);
  add_costs(2 * macs + bias_flops, macs, needs_grad(in) ? 2 * macs : 0, 2 * macs + bias_flops,
            params, bias ? 2 : 1);
  autocast_params(params, bias ? 2 : 1);
  // cuDNN runs a transposed convolution as the data gradient of a convolution: GEMM views over
  // the input positions, out_channels x kernel columns, c_in deep.
  const double pos = static_cast<double>(in.width());
  const double cols = static_cast<double>(out_channels * kernel);
  const double ci = static_cast<double>(c_in);
  const double weights = ci * cols;
  const double co = static_cast<double>(out_channels);
  KernelSpec fwd_k =
      gemm_spec("conv_transpose fwd", KernelClass::conv, 2 * macs, in.elements() + out.elements(),
                weights, {pos, cols, ci, 1}, BatchDim::m);
  fwd_k.channels = {0, co, ci};
  fwd(fwd_k);
  bwd_group();
  if (needs_grad(in)) {
    KernelSpec dgrad =
        gemm_spec("conv_transpose dgrad", KernelClass::conv, 2 * macs,
                  out.elements() + in.elements(), weights, {pos, ci, cols, 1}, BatchDim::m);
    dgrad.channels = {0, ci, co};
    bwd(dgrad);
  }
  KernelSpec wgrad =
      gemm_spec("conv_transpose wgrad", KernelClass::conv, 2 * macs, in.elements() + out.elements(),
                weights, {ci, cols, pos, 1}, BatchDim::k);
  wgrad.channels = {ci, co, 0};
  wgrad.weight_gradient = true;  // cuDNN's backward-filter algorithms, roles of x and dy swapped
  // The kernel taps over each loaded element of the operand it gathers (the output gradient
  // here): kernel / stride of them overlap it (sim::Kernel::input_tap_reuse).
  wgrad.input_tap_reuse = std::max(1.0, static_cast<double>(kernel) / static_cast<double>(stride));
  bwd(wgrad);
  save(in);
  return out;
}

void NetBuilder::weight_norm(std::int64_t out_channels) {
  add_costs(0, 0, 0, 0, out_channels, 1);
}

void NetBuilder::attention_score_bias(std::int64_t heads, std::int64_t seq_q, std::int64_t seq_k,
                                      std::int64_t table_rows) {
  const double scores =
      static_cast<double>(heads) * static_cast<double>(seq_q) * static_cast<double>(seq_k);
  // A gather from the table (only where it is computed) and an add to every score; backward the
  // add passes the gradient on, and the table receives a scatter-add of it.
  add_costs(scores, 0, 0, table_rows > 0 ? scores : 0, table_rows > 0 ? table_rows * heads : 0,
            table_rows > 0 ? 1 : 0);
  if (table_rows > 0) fwd(mem_spec("position bias gather", KernelClass::gather, scores, 0, 0, 0));
  fwd(mem_spec("position bias add", KernelClass::elementwise, 3 * scores, 0, 0, scores));
  if (table_rows > 0) {
    bwd_group();
    bwd(mem_spec("position bias grad", KernelClass::scatter, scores,
                 static_cast<double>(table_rows * heads), 0, scores));
  }
}

void NetBuilder::relative_position_scores(const Tensor& q, const Tensor& r_k, std::int64_t heads,
                                          bool owns_biases) {
  const std::int64_t d = q.features();
  const double sq = static_cast<double>(q.shape.at(0));
  const double sk = static_cast<double>(r_k.shape.at(0));
  const double scores = static_cast<double>(heads) * sq * sk;
  const double macs = sq * sk * static_cast<double>(d);  // (q + v) r_k^T
  const double shifts = 2 * q.elements();                // q + u and q + v
  // Forward: the two shifted queries, the position matmul, the relative shift (a copy) and the sum
  // with the content scores. Backward: the matmul's two input gradients and the reductions that
  // give u's and v's gradients.
  add_costs(shifts + 2 * macs + scores, macs, (needs_grad(q) ? 2 * macs : 0) + 2 * macs, shifts,
            owns_biases ? 2 * d : 0, owns_biases ? 2 : 0);
  const double h = static_cast<double>(heads);
  const double dh = static_cast<double>(d) / h;
  const double qe = q.elements();
  const double re = r_k.elements();
  fwd(mem_spec("relative query shifts", KernelClass::elementwise, 4 * qe, 0, 0, shifts));
  fwd(gemm_spec("relative position scores", KernelClass::gemm, 2 * macs, qe + re + scores, 0,
                {sq, sk, dh, h}, BatchDim::batch));
  // DeepLearningExamples' TF script (TensorFlow/LanguageModeling/Transformer-XL/tf/model.py,
  // rel_multihead_attn and rel_shift): einsum('ibnd,jnd->bnij') batches over heads alone, so its
  // matmul output is transposed into bnij (a copy); rel_shift pads and then slices (two copies);
  // and after the scale the mask is applied arithmetically, score * (1 - mask) - 1e30 * mask (a
  // product and a difference over the scores). Backward mirrors each.
  if (tf1_graph_) fwd(mem_spec("relative scores transpose", KernelClass::copy, 2 * scores));
  fwd(mem_spec("relative shift", KernelClass::copy, 2 * scores));
  if (tf1_graph_) fwd(mem_spec("relative shift slice", KernelClass::copy, 2 * scores));
  fwd(mem_spec("relative scores add", KernelClass::elementwise, 3 * scores, 0, 0, scores));
  if (tf1_graph_) {
    KernelSpec mask =
        mem_spec("arithmetic mask", KernelClass::elementwise, 2 * scores, 0, 0, scores);
    mask.repeat = 2;
    fwd(mask);
  }
  bwd_group();
  if (tf1_graph_) {
    KernelSpec mask =
        mem_spec("arithmetic mask bwd", KernelClass::elementwise, 2 * scores, 0, 0, scores);
    mask.repeat = 2;
    bwd(mask);
    bwd(mem_spec("relative shift slice bwd", KernelClass::copy, 2 * scores));
  }
  bwd(mem_spec("relative shift bwd", KernelClass::copy, 2 * scores));
  if (tf1_graph_) bwd(mem_spec("relative scores transpose bwd", KernelClass::copy, 2 * scores));
  if (needs_grad(q)) {
    bwd(gemm_spec("relative scores dq", KernelClass::gemm, 2 * macs, scores + re + qe, 0,
                  {sq, dh, sk, h}, BatchDim::batch));
  }
  bwd(gemm_spec("relative scores dr", KernelClass::gemm, 2 * macs, scores + qe + re, 0,
                {sk, dh, sq, h}, BatchDim::batch));
  bwd(mem_spec("relative bias grads", KernelClass::reduction, 2 * qe, 2 * static_cast<double>(d), 0,
               shifts));
  save(make(q.shape, true));  // q + u, the content matmul's input
  save(make(q.shape, true));  // q + v
  save(r_k);
}

Tensor NetBuilder::additive_attention(const Tensor& query, const Tensor& keys, const Tensor& values,
                                      const Tensor* extra, std::int64_t score_params) {
  const double sq = static_cast<double>(query.shape.at(0));
  const double sk = static_cast<double>(keys.shape.at(0));
  const double n = sq * sk * static_cast<double>(query.features());  // one tanh per pair and unit
  const double probs = sq * sk;
  const double context_macs = probs * static_cast<double>(values.features());
  const ActivationCost tanh = activation_cost(Activation::tanh);
  const double adds = (extra != nullptr ? 2 : 1) * n;
  Tensor out = make({query.shape.at(0), values.features()}, true);
  // Forward: the broadcast sums, tanh, the dot with the score vector (n multiply-adds), softmax
  // over the keys and the context matmul. Backward: tanh's and the dot's gradients, the sums
  // reduced back to the query and the keys (and the extra term), softmax, and the context matmul's
  // two input gradients; the score vector's gradient is one more reduction of n.
  add_costs(adds + tanh.fwd_flops * n + 2 * n + kSoftmaxFwdFlops * probs + 2 * context_macs,
            n + context_macs,
            tanh.bwd_flops * n + 2 * n + adds + kSoftmaxBwdFlops * probs + 4 * context_macs, 2 * n,
            score_params, score_params > 0 ? 1 : 0);
  // Broadcast sums and tanh over seq_q x seq_k x units, the score dot as a reduction over units,
  // softmax over the keys, and the context as a GEMM; backward mirrors them.
  const double dv = static_cast<double>(values.features());
  fwd(mem_spec("additive attention sum", KernelClass::elementwise, 2 * n + adds, 0, 0, adds));
  fwd(mem_spec("additive attention tanh", KernelClass::elementwise, 2 * n, 0, 0,
               tanh.fwd_flops * n));
  fwd(mem_spec("additive attention score", KernelClass::reduction, n + probs, 0, 0, 2 * n));
  fwd(per_row(with_math(mem_spec("additive attention softmax", KernelClass::softmax, 2 * probs, 0,
                                 0, kSoftmaxFwdFlops * probs),
                        sim::ElementMath::softmax, probs),
              sk));
  fwd(gemm_spec("additive attention context", KernelClass::gemm, 2 * context_macs,
                probs + sk * dv + sq * dv, 0, {sq, dv, sk, 1}, BatchDim::m));
  bwd_group();
  bwd(gemm_spec("additive attention context dgrad", KernelClass::gemm, 4 * context_macs,
                2 * (probs + sk * dv + sq * dv), 0, {sq, sk, dv, 1}, BatchDim::m));
  bwd(per_row(mem_spec("additive attention softmax bwd", KernelClass::softmax, 3 * probs, 0, 0,
                       kSoftmaxBwdFlops * probs),
              sk));
  bwd(mem_spec("additive attention score bwd", KernelClass::elementwise, 2 * n + probs, 0, 0,
               2 * n));
  bwd(mem_spec("additive attention tanh bwd", KernelClass::elementwise, 3 * n, 0, 0,
               tanh.bwd_flops * n));
  bwd(mem_spec("additive attention sum bwd", KernelClass::reduction, 2 * n + adds, 0, 0, adds));
  if (repeat_ > 1) {
    // In a loop (Tacotron 2's decoder) the keys and values are made once, before it: every
    // iteration's gradient of each is added to the earlier ones, as for weights in add_costs.
    for (const Tensor* t : {&keys, &values}) {
      if (needs_grad(*t))
        bwd(grad_accumulate_spec("attention input grad accumulate", t->elements()));
    }
  }
  save(make({static_cast<std::int64_t>(n)}, true));  // tanh's output
  open().saved_elements += probs * repeat_;          // the attention probabilities
  save(values);
  return out;
}

void NetBuilder::describe_transformer(const TransformerEntryInfo& info) {
  open().transformer = info;
}

// ---- end of additions for zoo coverage ----

namespace {

// A per-sample tensor with `rows` instead of its first dimension (the sequence).
std::vector<std::int64_t> with_rows(std::vector<std::int64_t> shape, std::int64_t rows) {
  shape.at(0) = rows;
  return shape;
}

}  // namespace

void NetBuilder::tp_record(std::vector<TpCollective>& into, TpCollectiveOp op, double elements,
                           bool at_start, const char* what) {
  TpCollective c;
  c.op = op;
  c.elements_per_sample = elements * repeat_;
  c.at_start = at_start;
  c.what = what;
  into.push_back(c);
}

Tensor NetBuilder::tp_enter(const Tensor& in, const TensorParallelism& p, const char* fwd_what,
                            const char* bwd_what) {
  if (p.tp == 1) return in;
  Layer& l = open();
  tp_bwd_groups_.emplace_back();
  if (!p.sequence_parallel) {
    tp_record(tp_bwd_groups_.back(), TpCollectiveOp::allreduce, in.elements(), false, bwd_what);
    return in;
  }
  Tensor out = make(with_rows(in.shape, in.shape.at(0) * p.tp), needs_grad(in));
  saved_as_[out.id] = in;
  tp_record(l.tp_fwd, TpCollectiveOp::all_gather, out.elements(), true, fwd_what);
  // Backward: the saved shard gathered again for the weight gradient, then the reduce-scatter of
  // the input gradient.
  tp_record(tp_bwd_groups_.back(), TpCollectiveOp::all_gather, out.elements(), false,
            "sp input regather");
  tp_record(tp_bwd_groups_.back(), TpCollectiveOp::reduce_scatter, out.elements(), false, bwd_what);
  return out;
}

Tensor NetBuilder::tp_exit(const Tensor& in, const TensorParallelism& p, const char* fwd_what,
                           const char* bwd_what) {
  if (p.tp == 1) return in;
  Layer& l = open();
  if (!p.sequence_parallel) {
    tp_record(l.tp_fwd, TpCollectiveOp::allreduce, in.elements(), false, fwd_what);
    return in;
  }
  const std::int64_t rows = in.shape.at(0);
  if (rows % p.tp != 0) {
    throw ShapeError("sequence parallelism splits " + std::to_string(rows) +
                     " tokens into tp=" + std::to_string(p.tp) + " shards");
  }
  Tensor out = make(with_rows(in.shape, rows / p.tp), needs_grad(in));
  tp_record(l.tp_fwd, TpCollectiveOp::reduce_scatter, in.elements(), false, fwd_what);
  tp_bwd_groups_.emplace_back();
  tp_record(tp_bwd_groups_.back(), TpCollectiveOp::all_gather, in.elements(), true, bwd_what);
  return out;
}

Tensor NetBuilder::tp_scatter_sequence(const Tensor& in, const TensorParallelism& p,
                                       const char* bwd_what) {
  if (p.tp == 1 || !p.sequence_parallel) return in;
  open();
  const std::int64_t rows = in.shape.at(0);
  if (rows % p.tp != 0) {
    throw ShapeError("sequence parallelism splits " + std::to_string(rows) +
                     " tokens into tp=" + std::to_string(p.tp) + " shards");
  }
  Tensor out = make(with_rows(in.shape, rows / p.tp), needs_grad(in));
  tp_bwd_groups_.emplace_back();
  tp_record(tp_bwd_groups_.back(), TpCollectiveOp::all_gather, in.elements(), true, bwd_what);
  return out;
}

Tensor NetBuilder::tp_gather_sequence(const Tensor& in, const TensorParallelism& p,
                                      const char* fwd_what) {
  if (p.tp == 1 || !p.sequence_parallel) return in;
  Tensor out = make(with_rows(in.shape, in.shape.at(0) * p.tp), needs_grad(in));
  tp_record(open().tp_fwd, TpCollectiveOp::all_gather, out.elements(), true, fwd_what);
  return out;
}

void NetBuilder::tp_allreduce(double elements, const char* what) {
  tp_record(open().tp_fwd, TpCollectiveOp::allreduce, elements, false, what);
}

}  // namespace trainsim::models
