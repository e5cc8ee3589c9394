#include "models/kernel_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string_view>

#include "sim/hw/kernel_model.hpp"

namespace trainsim::models {

// fp8 runs the GEMMs in fp8 (Transformer Engine's FP8 linear layers) and everything else,
// activations included, in bf16.
sim::Dtype storage_dtype(const Scenario& s) {
  return s.precision == sim::Dtype::fp8 ? sim::Dtype::bf16 : s.precision;
}

double activation_bytes_per_element(const Scenario& s) {
  return sim::dtype_bytes(storage_dtype(s));
}

namespace {

// Autocast's fp32 list as the zoo's kernels show it: softmax and the normalizations other than
// batch norm (TensorFlow's deny list holds their Softmax and Mean).
bool fp32_listed(const KernelSpec& k) {
  return k.cls == sim::KernelClass::softmax ||
         (k.cls == sim::KernelClass::normalization &&
          std::string_view(k.what).find("bn ") == std::string_view::npos &&
          std::string_view(k.what).find("batch") == std::string_view::npos);
}

// A 16-bit step whose framework keeps fp32 weights and casts per op (torch.amp, TF's AMP).
bool autocast_16bit(const Scenario& s) {
  return s.precision != sim::Dtype::fp32 && s.precision != sim::Dtype::tf32 &&
         s.framework.mixed_precision == sim::MixedPrecision::autocast;
}

// A 16-bit step under TensorFlow's AMP graph rewrite (framework amp_fp32_ops: graph_rewrite).
bool graph_rewrite_16bit(const Scenario& s) {
  return autocast_16bit(s) && s.framework.amp_fp32_ops == sim::AmpFp32Ops::graph_rewrite;
}

sim::Dtype compute_dtype(sim::Dtype precision, sim::KernelClass cls) {
  if (precision == sim::Dtype::fp8)
    return cls == sim::KernelClass::gemm ? sim::Dtype::fp8 : sim::Dtype::bf16;
  // A fused attention kernel on fp32 data computes in fp32 whatever the TF32 switches say:
  // FlashAttention and cuDNN's fused attention take only 16-bit (and fp8) inputs, so PyTorch's
  // SDPA falls back to its memory-efficient CUTLASS kernels, whose fp32 build ignores allow_tf32.
  // This project's H200 profile of a BERT-large TF32 step (tests/reference_data/
  // h200_profile_kernels.csv) runs fmha_cutlassF_f32_aligned_64x64_rf_sm80 at 64 us and
  // fmha_cutlassB_f32 at 105 us per layer (17 and 26 TFLOP/s, a quarter to a third of the fp32
  // peak), where the bf16 step's cuDNN flash kernels take 14 and 19 us.
  if (precision == sim::Dtype::tf32 && cls == sim::KernelClass::attention) return sim::Dtype::fp32;
  return precision;
}

sim::Dtype compute_dtype(const Scenario& s, sim::KernelClass cls) {
  return compute_dtype(s.precision, cls);
}

// An imported workload's kernel (models/zoo/imported_workload.hpp) on the scenario's device for
// `batch` samples: its measured duration times the kernel model's time ratio between that
// device and the measuring one for the kernel's class, dtype, work and GEMM view (the one model,
// sim/hw/kernel_model.hpp), plus the measured device gap times the ratio of the two devices'
// gaps. Where the trace had no shapes, the work is what the measured time buys on the measuring
// device at full rate (peak FLOP/s or DRAM bandwidth), so the ratio still follows the class's
// rates on both devices. The host time stays as measured, times `host_share`.
Launch measured_launch(const Scenario& s, const KernelSpec& k, double batch, double host_share) {
  const MeasuredOrigin& m = *s.model.measured;
  const sim::AcceleratorSpec& here = s.cluster.accelerator;
  KernelSpec work = k;
  const sim::Dtype there_dtype = compute_dtype(m.precision, k.cls);
  if (work.flops <= 0 && work.raw_bytes <= 0 && k.measured_s > 0) {
    const auto peak = m.accelerator.peak(there_dtype);
    if (sim::is_compute_class(k.cls) && peak) {
      work.flops = k.measured_s * *peak / m.batch;
    } else {
      work.raw_bytes = k.measured_s * m.accelerator.memory_bw_bytes_per_s / m.batch;
    }
  }
  sim::Kernel there = instantiate(work, m.batch, there_dtype);
  // One tensor-parallel rank's share of the kernel (models/zoo/tensor_parallel.hpp).
  work.flops *= k.measured_flops_share;
  work.raw_bytes *= k.measured_bytes_share;
  if (k.measured_rank_gemm.m > 0) work.gemm = k.measured_rank_gemm;
  sim::Kernel target = instantiate(work, batch, compute_dtype(s, k.cls));
  const double there_s = sim::kernel_body_s(m.accelerator, there);
  const double ratio = there_s > 0 ? sim::kernel_body_s(here, target) / there_s : 1.0;
  const double gap_ratio =
      m.accelerator.kernel_launch_overhead_s > 0
          ? here.kernel_launch_overhead_s / m.accelerator.kernel_launch_overhead_s
          : 1.0;
  return {k.what, k.cls, k.measured_s * ratio + k.measured_gap_s * gap_ratio,
          k.measured_host_s * host_share, k.repeat};
}

bool wanted(const KernelSpec& k, const Scenario& s) {
  const bool fused_attention = s.fused_attention;
  const bool tf_block = s.framework.rnn == sim::RnnKernels::tf_block_lstm;
  if (k.rnn_form == RnnForm::cudnn_only && tf_block) return false;
  if (k.rnn_form == RnnForm::tf_block_only && !tf_block) return false;
  const bool native_bn = s.framework.batch_norm == sim::BatchNormKernels::native_for_bf16 &&
                         storage_dtype(s) == sim::Dtype::bf16;
  if (k.norm_form == NormForm::cudnn_only && native_bn) return false;
  if (k.norm_form == NormForm::native_only && !native_bn) return false;
  switch (k.form) {
    case AttentionForm::any:
      return true;
    case AttentionForm::unfused_only:
      return !fused_attention;
    case AttentionForm::fused_only:
      return fused_attention;
  }
  return true;
}

// Optimizer arithmetic per parameter: SGD 2 FLOPs, momentum 4, Adam about 10; LAMB (You et al.
// 2019, "Large Batch Optimization for Deep Learning", Algorithm 2) Adam's plus the squared norms
// of the weights and of the update (4) and the trust-ratio scaling (2).
double optimizer_flops_per_param(Optimizer o) {
  switch (o) {
    case Optimizer::sgd:
      return 2;
    case Optimizer::momentum:
      return 4;
    case Optimizer::adam:
    case Optimizer::bert_adam:
      return 10;
    case Optimizer::lamb:
    case Optimizer::jit_lamb:
      return 16;
  }
  return 4;
}

// LAMB's foreach kernels per group of tensors, which torch.optim lacks: estimate, as Adam's
// eight (kForeachAdamWOps below) plus the two norms, the trust ratio and its scaled add.
constexpr int kForeachLambOps = 12;

// LAMB as a library's fused kernels (NVIDIA/apex apex/optimizers/fused_lamb.py): the
// gradients' global norm (multi_tensor_l2norm) reads the gradients; stage 1 reads the gradient,
// the weights and both moments and writes the moments and the update; the per-tensor norms read
// the weights and the update; stage 2 reads both again and writes the weights. Against Adam's
// single pass that is the gradient read once more, the update written once and read twice and
// the weights read twice more (20 bytes per parameter plus the gradient's), in 4 launches where
// Adam has one.
constexpr double kLambExtraBytesPerParam = 20;
constexpr int kLambLaunches = 4;

// BertAdam's step (NVIDIA/DeepLearningExamples PyTorch/LanguageModeling/BERT/optimization.py,
// BertAdam.step): the gradients' global norm in one multi-tensor kernel (multi_tensor_l2norm),
// read back with .item(), then per parameter tensor these eager ops, each a kernel of its own
// over the whole tensor, with the fp32 bytes it reads and writes per element:
//   next_m.mul_(b1) 8, .add_(1 - b1, grad) 12, next_v.mul_(b2) 8, .addcmul_(1 - b2, grad, grad)
//   12, next_v.sqrt() 8, + e 8, next_m / (...) 12, weight_decay * p.data 8, update += 12,
//   lr * update 8, -update_with_lr 8, p.data.add_(...) 12.
// Every tensor is counted with the weight-decay pair (biases and LayerNorm tensors, in the
// no-decay group, skip it: estimate, 2 of 12 small launches there). The conditional clipping
// line (p = p * max_grad_norm / norm, when the norm exceeds 1) is not counted.
struct TensorOp {
  const char* name;
  double bytes_per_element;
  int lists = 1;  // tensor lists a foreach op's kernel takes (multi_tensor_apply's depth)
  sim::KernelClass cls = sim::KernelClass::optimizer;  // its kernel's class (JITLamb's norms)
};
constexpr std::array<TensorOp, 12> kBertAdamOps{{{"adam m.mul_", 8},
                                                 {"adam m.add_", 12},
                                                 {"adam v.mul_", 8},
                                                 {"adam v.addcmul_", 12},
                                                 {"adam v.sqrt", 8},
                                                 {"adam + eps", 8},
                                                 {"adam m / denom", 12},
                                                 {"adam decay * p", 8},
                                                 {"adam update +=", 12},
                                                 {"adam lr * update", 8},
                                                 {"adam neg", 8},
                                                 {"adam p.add_", 12}}};

// JITLamb's step (NVIDIA/DeepLearningExamples PyTorch/LanguageModeling/Transformer-XL/pytorch/
// lamb.py, which train.py's default --optim jitlamb steps): a Python loop over the tensors that
// calls one TorchScript function, lamb_kernel, per tensor. Its fuser joins the element-wise
// chains and leaves the two norms apart, so each call launches five kernels, with the fp32 bytes
// per element each moves:
//   the moments and the Adam step in one fused kernel (reads g, m, v and p; writes m, v and the
//   step) 28, p.norm() 4, adam_step.norm() 4, the trust ratio from the two norms (scalars: its
//   launch alone, 0), and p - step_size x trust_ratio x adam_step 12.
// Its norm kernels are reductions; the rest stream like any optimizer kernel.
constexpr std::array<TensorOp, 5> kJitLambKernels{
    {{"jit_lamb moments and step", 28},
     {"jit_lamb weight norm", 4, 1, sim::KernelClass::reduction},
     {"jit_lamb step norm", 4, 1, sim::KernelClass::reduction},
     {"jit_lamb trust ratio", 0, 1, sim::KernelClass::elementwise},
     {"jit_lamb update", 12}}};

// torch.nn.utils.clip_grad_norm_ (pytorch/pytorch torch/nn/utils/clip_grad.py) before the step:
// each tensor's gradient norm, the norms stacked and reduced to the total norm, the clip
// coefficient max_norm / (total + 1e-6) clamped at 1 (three scalar kernels), then every
// gradient scaled in place by it. Per tensor (PyTorch 1.x's loop, 2.x with foreach=False) that is
// one reduction reading the fp32 gradient (4 bytes per element) and one in-place scaling (8) per
// tensor; with foreach (2.x's default on CUDA) one _foreach_norm and one _foreach_mul_ over the
// tensor list, each in multi_tensor_apply's launches (foreach_launches).
constexpr int kClipScalarKernels = 5;  // stack, the total norm, + 1e-6, the division, clamp

// torch.optim's foreach steps (PyTorch 2.x's default on CUDA: torch/optim/sgd.py _multi_tensor_sgd,
// adamw.py _multi_tensor_adamw): one torch._foreach_* op per arithmetic step, each a
// multi-tensor kernel per group of tensors that reads and writes its whole fp32 tensors, with
// the bytes per element it moves. The second grad of addcmul_(v, g, g) is the first one's
// element, loaded again from cache. The step counters stay on the host.
//   SGD: p.add_(g, alpha=-lr) 12.
//   Momentum (no weight decay): buf.mul_(momentum) 8, buf.add_(g) 12, p.add_(buf, alpha=-lr) 12.
//   AdamW: p.mul_(1 - lr wd) 8, m.lerp_(g, 1 - b1) 12, v.mul_(b2) 8, v.addcmul_(g, g, 1 - b2)
//   12, denom = sqrt(v) 8, denom.div_(bias correction) 8, denom.add_(eps) 8,
//   p.addcdiv_(m, denom, -step) 16 (each with the tensor lists its kernel takes).
// 80 bytes per parameter for AdamW where one fused pass moves 28: this project's H200 profiles
// (tests/reference_data/h200_profile_kernels.csv) have GPT-2's foreach AdamW at 2.76 ms of
// multi-tensor kernels per step (124 M parameters, 3.6 TB/s) and ResNet-50's momentum SGD at
// 205 us (25.6 M parameters, 32 bytes each: 4.0 TB/s).
constexpr std::array<TensorOp, 1> kForeachSgdOps{{{"sgd p.add_", 12, 2}}};
constexpr std::array<TensorOp, 3> kForeachMomentumOps{
    {{"momentum buf.mul_", 8, 1}, {"momentum buf.add_", 12, 2}, {"momentum p.add_", 12, 2}}};
constexpr std::array<TensorOp, 8> kForeachAdamWOps{{{"adamw p.mul_", 8, 1},
                                                    {"adamw m.lerp_", 12, 2},
                                                    {"adamw v.mul_", 8, 1},
                                                    {"adamw v.addcmul_", 12, 3},
                                                    {"adamw sqrt(v)", 8, 2},
                                                    {"adamw denom.div_", 8, 1},
                                                    {"adamw denom.add_", 8, 1},
                                                    {"adamw p.addcdiv_", 16, 3}}};

// The kernels one foreach op over `tensors` tensors of `params` elements in all launches:
// multi_tensor_apply (pytorch/pytorch aten/src/ATen/native/cuda/MultiTensorApply.cuh) launches
// once its argument holds depth_to_max_tensors[depth - 1] tensors ({110, 64, 48, 36, 30}) or
// depth_to_max_blocks (320) chunks of kChunkSize (65,536) elements, each tensor's last chunk a
// partial one (half a chunk on average). GPT-2's 148 tensors of 124 M parameters: 7 launches
// per op, as its H200 profile has for each of AdamW's eight; BERT-large's 398 of 335 M: 16, 128
// in all (its profile: 136 multi-tensor launches, the gradient unscale's among them).
double foreach_launches(double params, int tensors, int lists) {
  constexpr std::array<int, 5> kMaxTensors{110, 64, 48, 36, 30};
  constexpr double kChunkElements = 65536;
  constexpr double kMaxChunks = 320;
  const int depth = std::clamp(lists, 1, static_cast<int>(kMaxTensors.size()));
  const double t = std::max(1, tensors);
  const double by_tensors = std::ceil(t / kMaxTensors[static_cast<std::size_t>(depth - 1)]);
  const double by_chunks = std::ceil((params / kChunkElements + t / 2) / kMaxChunks);
  return std::max(by_tensors, by_chunks);
}

// The foreach ops of `o` (empty for the optimizers torch.optim has no foreach step for).
std::span<const TensorOp> foreach_step(Optimizer o) {
  switch (o) {
    case Optimizer::sgd:
      return kForeachSgdOps;
    case Optimizer::momentum:
      return kForeachMomentumOps;
    case Optimizer::adam:
      return kForeachAdamWOps;
    case Optimizer::lamb:
    case Optimizer::bert_adam:
    case Optimizer::jit_lamb:
      break;
  }
  return {};
}

}  // namespace

bool low_precision(const Scenario& s) {
  return s.precision == sim::Dtype::fp16 || s.precision == sim::Dtype::bf16 ||
         s.precision == sim::Dtype::fp8;
}

double host_launch_s(const Scenario& s, Pass pass) {
  if (s.framework.graph_launch) return 0;
  if (pass != Pass::forward) return s.framework.host_backward_per_kernel_s;
  // The mixed-precision layer decides each forward op's casts on the host; backward runs in the
  // autograd engine, past it.
  return s.framework.host_forward_per_kernel_s +
         (autocast_16bit(s) && !s.inference ? s.framework.host_amp_cast_per_kernel_s : 0.0);
}

double kernel_host_s(const Scenario& s, const KernelSpec& k, Pass pass) {
  if (s.framework.graph_launch) return 0;
  return k.library_launch ? s.framework.host_library_launch_s : host_launch_s(s, pass);
}

double library_call_host_s(const Scenario& s, const KernelSpec& k) {
  if (s.framework.graph_launch || !k.library_call) return 0;
  return s.framework.host_library_call_s;
}

double gradient_bytes_per_param(const Scenario& s) {
  if (!low_precision(s)) return 4;
  return s.framework.mixed_precision == sim::MixedPrecision::autocast ? 4 : 2;
}

double weight_bytes_per_param(const Scenario& s) {
  if (s.inference) return sim::dtype_bytes(storage_dtype(s));
  if (!low_precision(s)) return 4;
  // autocast: fp32 weights (the 16-bit copies live only during the step);
  // master weights: 16-bit weights plus the fp32 master copy.
  return s.framework.mixed_precision == sim::MixedPrecision::autocast ? 4 : 6;
}

double optimizer_state_bytes_per_param(const Scenario& s) {
  switch (s.optimizer) {
    case Optimizer::sgd:
      return 0;
    case Optimizer::momentum:
      return 4;  // one fp32 buffer (also RMSprop's square average)
    case Optimizer::adam:
    case Optimizer::lamb:
    case Optimizer::bert_adam:
    case Optimizer::jit_lamb:
      return 8;  // two fp32 moments
  }
  return 0;
}

bool rewrite_keeps_fp32(const Scenario& s, const Layer& l) {
  return graph_rewrite_16bit(s) &&
         std::any_of(l.fwd_kernels.begin(), l.fwd_kernels.end(), fp32_listed);
}

void layer_launches(const Scenario& s, const Layer& l, Pass pass, double batch,
                    std::vector<Launch>& out) {
  if (s.model.measured) {  // an imported workload: its kernels as measured, nothing added
    for (const KernelSpec& k : pass == Pass::forward ? l.fwd_kernels : l.bwd_kernels)
      out.push_back(measured_launch(s, k, batch, 1.0));
    return;
  }
  const auto& acc = s.cluster.accelerator;
  const double host = host_launch_s(s, pass);
  const bool fuse = s.framework.fusion == sim::Fusion::pointwise;
  const std::size_t first = out.size();
  // Autocast casts each fp32 weight that a lower-precision op takes to 16 bits (forward), and the
  // cast's backward turns the 16-bit weight gradient into the fp32 one (one kernel per tensor
  // each way; Layer::cast_params).
  const bool casts = low_precision(s) && !s.inference &&
                     s.framework.mixed_precision == sim::MixedPrecision::autocast &&
                     l.cast_param_tensors > 0 && l.cast_params > 0;
  const double cast_bytes =  // read one width, write the other
      casts ? static_cast<double>(l.cast_params) * 6 / l.cast_param_tensors : 0.0;
  if (casts && pass == Pass::forward) {
    sim::Kernel cast;
    cast.cls = sim::KernelClass::elementwise;
    cast.dtype = sim::Dtype::fp32;
    cast.bytes = cast_bytes;
    // torch.amp issues them from C++ inside the op's dispatch, as the autograd engine issues
    // backward's ops; Apex's Python wrappers and TF's Cast nodes as ops of their own.
    const double cast_host_s = s.framework.amp_weight_casts == sim::AmpWeightCasts::dispatcher
                                   ? host_launch_s(s, Pass::backward)
                                   : host;
    out.push_back({"weight cast", cast.cls, sim::kernel_time_s(acc, cast), cast_host_s,
                   l.cast_param_tensors});
  }
  // Autocast runs its float32-list ops in fp32 (paper: PyTorch docs, 'Automatic Mixed Precision
  // package - torch.amp', 'CUDA Ops that can autocast to float32': softmax, log_softmax,
  // layer_norm, group_norm, norm, the losses, ...; TensorFlow's mixed precision keeps them in
  // fp32 too): they read and write fp32 activations, the 16-bit input is cast up before
  // softmax, and the fp32 output is cast back down where a 16-bit GEMM consumes it (one cast
  // kernel each way, read one width and write the other; backward casts the gradients the same
  // way). Batch norm (cuDNN takes 16-bit data with fp32 statistics) is not on the list.
  const bool fp32_list_ops = autocast_16bit(s);
  // A pointwise kernel fused into its producer (the launch before it): no launch, no gap; only
  // the extra operand is read (a third of the standalone kernel's read + write traffic). Its
  // `repeat` launches' work spreads over the producer's launches (a loop body's pointwise op
  // folds into the loop's producer launch by launch).
  // Only memory-bound producers take them. GEMMs and convolutions run as library calls that the
  // fusers leave whole, so the first pointwise op after one is a kernel of its own that the
  // following ones join:
  // - XLA turns dots into cuBLAS custom calls outside its loop fusions (tensorflow/compiler/xla/
  //   service/gpu/gemm_rewriter.cc folds only a bias add into cuBLAS's beta term);
  // - Inductor calls cuBLAS for mm/addmm as extern kernels unless max_autotune picks a Triton
  //   template (torch/_inductor/config.py: max_autotune = False);
  // - Megatron-LM's linear layers return their bias unapplied (skip_bias_add) for the jit-fused
  //   bias-GeLU and bias-dropout-add kernels (megatron/model/fused_bias_gelu.py, transformer.py).
  const auto can_fold = [&] {
    return fuse && out.size() > first && !sim::is_compute_class(out.back().cls);
  };
  const auto fold_into_producer = [&](sim::Kernel kernel, int repeat) {
    kernel.bytes /= 3;
    out.back().device_s += sim::kernel_body_s(acc, kernel) * repeat / out.back().count;
  };
  const auto autocast_cast = [&](const KernelSpec& k, double elements) {
    sim::Kernel cast;
    cast.cls = sim::KernelClass::elementwise;
    cast.dtype = sim::Dtype::fp32;
    cast.bytes = elements * batch * (4 + sim::dtype_bytes(storage_dtype(s)));
    if (can_fold()) {  // folded into the producer like any pointwise op
      fold_into_producer(cast, k.repeat);
      return;
    }
    out.push_back({"autocast cast", cast.cls, sim::kernel_time_s(acc, cast), host, k.repeat});
  };
  // TensorFlow's graph rewrite: the zoo's layers are a transformer's attention or MLP block, a
  // convolution with its norm and activation, an RNN. Within one whose forward runs a deny-list
  // op (a softmax, a layer norm's Mean), every memory-bound op lies downstream of it or feeds it
  // (scores, mask and dropout around the softmax; bias, activation, dropout and residual add on
  // the way to the norm), so all of them run in fp32 both ways, and each GEMM's operands and
  // results are cast (its input down, its output up; the weight gradient reuses the casts of
  // the data gradient). Batch norm, ReLU, pooling and residual adds between convolutions stay
  // 16-bit (gray and clear ops between allow-list ones).
  const bool rewrite = graph_rewrite_16bit(s);
  const bool fp32_layer = rewrite_keeps_fp32(s, l);
  const auto specs_of = pass == Pass::forward ? &l.fwd_kernels : &l.bwd_kernels;
  for (const KernelSpec& k : *specs_of) {
    if (!wanted(k, s)) continue;
    const bool compute = sim::is_compute_class(k.cls);
    const bool in_fp32 = rewrite
                             ? fp32_layer && !compute
                             : fp32_list_ops && k.cls != sim::KernelClass::gemm && fp32_listed(k);
    if (fp32_layer && compute && k.batch_dim != BatchDim::k) autocast_cast(k, k.act_elements);
    // Half of a pointwise kernel's traffic is its output (one read, one write per element).
    const double out_elements = k.act_elements / 2;
    if (!rewrite && in_fp32 && k.cls == sim::KernelClass::softmax) autocast_cast(k, out_elements);
    sim::Kernel kernel = instantiate(k, batch, in_fp32 ? sim::Dtype::fp32 : storage_dtype(s));
    kernel.dtype = compute_dtype(s, k.cls);
    kernel.issue_instructions = issue_instructions(k, batch, s.framework);
    kernel.channels_first = s.framework.memory_format == sim::MemoryFormat::channels_first;
    if (k.cls == sim::KernelClass::elementwise && can_fold()) {
      fold_into_producer(kernel, k.repeat);
      continue;
    }
    // cuDNN launches a convolution's layout transposes inside the op, as library launches.
    const double transposes_host_s =
        s.framework.graph_launch
            ? 0.0
            : sim::layout_transpose_launches(acc, kernel) * s.framework.host_library_launch_s;
    const double device_s = sim::kernel_time_s(acc, kernel);
    const double host_s = kernel_host_s(s, k, pass) + transposes_host_s;
    if (const double call_s = library_call_host_s(s, k); call_s > 0) {
      // The call's setup delays its first launch only.
      out.push_back({k.what, k.cls, device_s, host_s + call_s, 1});
      if (k.repeat > 1) out.push_back({k.what, k.cls, device_s, host_s, k.repeat - 1});
    } else {
      out.push_back({k.what, k.cls, device_s, host_s, k.repeat});
    }
    if (!rewrite && in_fp32) autocast_cast(k, out_elements);
  }
  if (casts && pass == Pass::backward) {
    sim::Kernel cast;
    cast.cls = sim::KernelClass::elementwise;
    cast.dtype = sim::Dtype::fp32;
    cast.bytes = cast_bytes;
    out.push_back(
        {"weight grad cast", cast.cls, sim::kernel_time_s(acc, cast), host, l.cast_param_tensors});
  }
}

// Each micro-batch's weight gradients are added into the step's accumulated ones: one
// element-wise kernel per parameter tensor reading both and writing the sum (PyTorch's
// AccumulateGrad adds into an existing .grad, torch/csrc/autograd/functions/accumulate_grad.h;
// Megatron-LM's main_grad.add_ hook; TensorFlow scripts' accumulator assign_add, NVIDIA
// DeepLearningExamples TensorFlow/LanguageModeling/BERT/optimization.py). ZeRO-2/3 reduce-scatter
// every micro-batch's gradients and keep the rank's shard, so the sum is over the shard.
void grad_accumulate_launch(const Scenario& s, const Layer& l, std::vector<Launch>& out) {
  if (s.grad_accum * s.microbatches < 2 || l.params <= 0 || l.param_tensors <= 0) return;
  const double shard = s.zero >= 2 ? std::max(1, s.data_parallel) : 1;
  sim::Kernel k;
  k.cls = sim::KernelClass::elementwise;
  k.dtype = sim::Dtype::fp32;
  k.bytes =
      3 * gradient_bytes_per_param(s) * static_cast<double>(l.params) / l.param_tensors / shard;
  k.flops = static_cast<double>(l.params) / l.param_tensors;
  out.push_back({"grad accumulate", k.cls, sim::kernel_time_s(s.cluster.accelerator, k),
                 host_launch_s(s, Pass::backward), l.param_tensors});
}

void optimizer_launches(const Scenario& s, double params, int tensors, std::vector<Launch>& out) {
  if (s.model.measured && !s.model.measured->optimizer.empty()) {
    // An imported workload's measured optimizer step, for this share of the model's parameters
    // (estimate: its kernels' work and launches scale with the parameters they update).
    const double all = static_cast<double>(s.model.params());
    const double share = all > 0 ? std::clamp(params / all, 0.0, 1.0) : 1.0;
    for (const KernelSpec& k : s.model.measured->optimizer) {
      Launch l = measured_launch(s, k, s.model.measured->batch, share);
      l.device_s *= share;
      out.push_back(l);
    }
    return;
  }
  if (params <= 0 || tensors <= 0) return;
  const auto& f = s.framework;
  const auto& acc = s.cluster.accelerator;
  // An op called from Python costs the profile's host time per optimizer kernel. A multi-tensor
  // op (torch._foreach_*, apex's multi_tensor_applier) is one such call that launches its
  // kernels, one per group of tensors, from its C++ loop, each of those after the first at the
  // profile's library launch cost; `calls_host_s(n)` is that per kernel of an op of n launches.
  const double host = f.graph_launch ? 0 : f.host_optimizer_per_kernel_s;
  const auto calls_host_s = [&](double n) {
    if (f.graph_launch || n <= 1) return host;
    return (host + (n - 1) * f.host_library_launch_s) / n;
  };
  // Appends `count` launches of an fp32 kernel of class `cls` moving `kernel_bytes`.
  const auto launch = [&](const char* what, sim::KernelClass cls, double kernel_bytes, double flops,
                          double host_s, double count) {
    sim::Kernel k;
    k.cls = cls;
    k.dtype = sim::Dtype::fp32;
    k.bytes = kernel_bytes;
    k.flops = flops;
    out.push_back({what, cls, sim::kernel_time_s(acc, k), host_s, static_cast<int>(count)});
  };
  // A Python loop over the tensors, whatever the framework profile's optimizer kernels: each op
  // launches one kernel per tensor, from the Python thread (the profile's host time per
  // optimizer kernel).
  const auto per_tensor_ops = [&](std::span<const TensorOp> ops) {
    const double elements = params / tensors;
    for (const TensorOp& op : ops) {
      launch(op.name, op.cls, op.bytes_per_element * elements,
             op.bytes_per_element > 0 ? elements : 0, host, tensors);
    }
  };
  const double groups =
      std::ceil(static_cast<double>(tensors) / std::max(1, f.tensors_per_optimizer_kernel));
  const bool master = low_precision(s) && f.mixed_precision == sim::MixedPrecision::master_weights;
  const bool lamb = s.optimizer == Optimizer::lamb;
  // Read and write the fp32 weights and the state, read the gradient (+ write the 16-bit copy).
  const double bytes =
      params *
      (8 + 2 * optimizer_state_bytes_per_param(s) + gradient_bytes_per_param(s) + (master ? 2 : 0) +
       (lamb ? kLambExtraBytesPerParam + gradient_bytes_per_param(s) : 0));
  double launches = groups;
  switch (f.optimizer_kernels) {
    case sim::OptimizerKernels::per_tensor:
      launches = tensors * (lamb ? kLambLaunches : 1);
      break;
    case sim::OptimizerKernels::multi_tensor:
      launches = groups * (lamb ? kForeachLambOps : 1);  // torch.optim's ops: below
      break;
    case sim::OptimizerKernels::fused:
      launches = groups * (lamb ? kLambLaunches : 1);
      break;
  }
  // Loss scaling: the fp16/bf16 step first unscales the gradients and checks them for inf/NaN
  // (torch.amp's _amp_foreach_non_finite_check_and_unscale_, one multi-tensor kernel per group).
  if (low_precision(s) && f.mixed_precision == sim::MixedPrecision::autocast) {
    launch("grad unscale", sim::KernelClass::optimizer, params * 8 / groups, 0,
           calls_host_s(groups), groups);
  }
  // Clipping by the global norm, after the unscale (torch.amp: scaler.unscale_, then the clip).
  // PyTorch before 1.9 read the clip coefficient on the host (`if clip_coef < 1`), a sync that
  // is not priced: it adds the device's tail of the norm kernels, short next to their launches.
  if (s.gradient_clipping != GradientClipping::none) {
    const double clip_bytes = gradient_bytes_per_param(s);
    const bool each = s.gradient_clipping == GradientClipping::per_tensor;
    // Launches of each of the two ops over the tensors, and the host time of each launch.
    const double n = each ? tensors : foreach_launches(params, tensors, 1);
    const double op_host_s = each ? host : calls_host_s(n);
    launch("clip grad norms", sim::KernelClass::reduction, params * clip_bytes / n, 2 * params / n,
           op_host_s, n);
    launch("clip total norm", sim::KernelClass::elementwise, 0, 0, host, kClipScalarKernels);
    launch("clip grad scale", sim::KernelClass::elementwise, params * 2 * clip_bytes / n,
           params / n, op_host_s, n);
  }
  if (s.optimizer == Optimizer::jit_lamb) {  // one scripted function's kernels per tensor
    per_tensor_ops(kJitLambKernels);
    return;
  }
  if (s.optimizer == Optimizer::bert_adam) {
    // The global norm reads every gradient once, in groups as the framework's multi-tensor
    // kernels take them; then the eager ops per tensor.
    launch("grad global norm", sim::KernelClass::reduction,
           params * gradient_bytes_per_param(s) / groups, 2 * params / groups, calls_host_s(groups),
           groups);
    per_tensor_ops(kBertAdamOps);
    return;
  }
  if (const auto ops = foreach_step(s.optimizer);
      f.optimizer_kernels == sim::OptimizerKernels::multi_tensor && !master && !ops.empty()) {
    // torch.optim's foreach step on fp32 weights and gradients: each op its multi-tensor
    // kernels.
    for (const TensorOp& op : ops) {
      const double op_launches = foreach_launches(params, tensors, op.lists);
      launch(op.name, op.cls, op.bytes_per_element * params / op_launches, params / op_launches,
             calls_host_s(op_launches), op_launches);
    }
    return;
  }
  // Per tensor each launch is a call of its own; otherwise each of the step's ops is one call
  // over the groups.
  const bool own_calls = f.optimizer_kernels == sim::OptimizerKernels::per_tensor;
  launch("optimizer", sim::KernelClass::optimizer, bytes / launches,
         params * optimizer_flops_per_param(s.optimizer) / launches,
         own_calls ? host : calls_host_s(groups), launches);
}

std::vector<KernelUse> kernel_uses(const Scenario& s) {
  std::array<bool, sim::kKernelClassCount> used{};
  std::vector<Launch> launches;
  for (const Layer& l : s.model.layers) {
    // Fused element-wise kernels launch nothing but are priced at their class's efficiency.
    for (const auto* specs : {&l.fwd_kernels, &l.bwd_kernels}) {
      if (specs == &l.bwd_kernels && s.inference) continue;
      for (const KernelSpec& k : *specs) {
        if (wanted(k, s)) used[static_cast<std::size_t>(k.cls)] = true;
      }
    }
    launches.clear();
    layer_launches(s, l, Pass::forward, 1, launches);
    if (!s.inference) layer_launches(s, l, Pass::backward, 1, launches);
    for (const Launch& x : launches)
      used[static_cast<std::size_t>(x.cls)] = true;
  }
  if (!s.inference) {
    launches.clear();
    optimizer_launches(s, static_cast<double>(s.model.params()), s.model.param_tensors(), launches);
    for (const Launch& x : launches)
      used[static_cast<std::size_t>(x.cls)] = true;
  }
  // The collectives' device kernels (sim/collectives/kernels.hpp): element-wise reductions of
  // received buffers; with compression the residual update, the top-k selection and the scatter.
  if (s.data_parallel > 1 && !s.inference) {
    used[static_cast<std::size_t>(sim::KernelClass::elementwise)] = true;
    if (s.comm.compression != Compression::none) {
      used[static_cast<std::size_t>(sim::KernelClass::topk)] = true;
      used[static_cast<std::size_t>(sim::KernelClass::scatter)] = true;
    }
  }
  std::vector<KernelUse> out;
  for (int c = 0; c < sim::kKernelClassCount; ++c) {
    const auto cls = static_cast<sim::KernelClass>(c);
    if (used[static_cast<std::size_t>(c)]) out.push_back({cls, compute_dtype(s, cls)});
  }
  // Convolutions the library runs on fp32 math (dilated ones without a tensor-core algorithm,
  // few-channel ones on SIMT kernels) use conv's fp32 efficiency.
  if (conv_fp32_math(s, false)) out.push_back({sim::KernelClass::conv, sim::Dtype::fp32});
  return out;
}

bool dilated_conv_fp32_math(const Scenario& s) {
  return conv_fp32_math(s, true);
}

bool conv_fp32_math(const Scenario& s, bool dilated_only) {
  for (const Layer& l : s.model.layers) {
    for (const KernelSpec& k : l.fwd_kernels) {
      if ((dilated_only && !k.dilated) || k.cls != sim::KernelClass::conv || !wanted(k, s))
        continue;
      sim::Kernel kernel = instantiate(k, 1, storage_dtype(s));
      kernel.dtype = compute_dtype(s, k.cls);
      if (sim::math_dtype(s.cluster.accelerator, kernel) != kernel.dtype) return true;
    }
  }
  return false;
}

std::string measured_scaling(const Scenario& s, bool& scaled) {
  scaled = false;
  if (!s.model.measured) return {};
  const MeasuredOrigin& m = *s.model.measured;
  const auto batch_text = [](double b) { return std::to_string(static_cast<long long>(b)); };
  const std::string there =
      m.accelerator.name + ", " + sim::dtype_name(m.precision) + ", batch " + batch_text(m.batch);
  // Pipelined kernels run per micro-batch (the largest one).
  const int micro = (s.batch_per_replica + s.microbatches - 1) / std::max(1, s.microbatches);
  const std::string here = s.cluster.accelerator.name + ", " + sim::dtype_name(s.precision) +
                           (s.microbatches > 1 ? ", micro-batch " : ", batch ") +
                           std::to_string(micro);
  scaled = there != here;
  const std::string split = s.tensor_parallel > 1
                                ? "; layers split over " + std::to_string(s.tensor_parallel) +
                                      " tensor-parallel ranks by their roles (the same ratio per "
                                      "rank's share)"
                                : std::string();
  if (!scaled) return "measured kernel times as measured (" + there + ")" + split;
  return "measured kernel times scaled by the kernel model's ratio per kernel (class, work, "
         "dtype) from " +
         there + " to " + here + split;
}

double device_seconds(const std::vector<Launch>& launches) {
  double t = 0;
  for (const Launch& l : launches)
    t += l.device_s * l.count;
  return t;
}

double host_seconds(const std::vector<Launch>& launches) {
  double t = 0;
  for (const Launch& l : launches)
    t += l.host_s * l.count;
  return t;
}

double dispatched_seconds(const std::vector<Launch>& launches) {
  double host = 0;
  double device = 0;
  for (const Launch& l : launches) {
    // A run of `count` identical launches: the device follows the host at the slower pace.
    host += l.host_s;
    device = std::max(device, host) + l.device_s;
    if (l.count > 1) {
      const double rest = l.count - 1;
      host += rest * l.host_s;
      device = std::max(device + rest * l.device_s, host + l.device_s);
    }
  }
  return device;
}

}  // namespace trainsim::models
