#pragma once
// A zoo model: a real network flattened into a list of layers with per-sample costs. Pipeline
// stages are contiguous runs of these layers, so the list's granularity is part of the contract
// (see each generator for how it matches the reference implementation's nn.Sequential).
//
// Conventions, per sample:
// - A multiply-add is 2 FLOPs. `fwd_macs` counts only the multiply-adds of convolutions, linear
//   layers and attention matmuls: that is what published "FLOPs" tables (torchvision, papers)
//   usually count, so tests compare 2 * fwd_macs or fwd_macs with them. `fwd_flops` adds the
//   elementwise work (bias, normalization, activations, pooling, softmax).
// - Backward of a conv/linear/matmul costs one forward for the input gradient plus one for the
//   weight gradient; the input gradient is skipped where the input needs no gradient (the data).
// - `saved_elements` are activation elements kept for backward, counted once per distinct tensor
//   (a ReLU output that the next conv also needs is stored once, as PyTorch does). Dropout masks
//   are one byte per element whatever the compute dtype, so they live in `saved_mask_bytes`.

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/hw/kernel.hpp"
#include "sim/hw/specs.hpp"

namespace trainsim::models {

enum class OpClass {
  conv,
  depthwise_conv,
  grouped_conv,
  matmul,
  attention,
  normalization,
  elementwise,
  pooling,
  embedding,
  recurrent,
  loss
};

const char* op_class_name(OpClass op);

// Which dimension of a kernel's GEMM view grows with the number of samples it processes.
enum class BatchDim {
  none,   // fixed size (memory kernels have no GEMM view)
  m,      // output rows: forward and data-gradient GEMMs (rows = samples x positions)
  k,      // the reduction: weight-gradient GEMMs
  batch,  // independent GEMMs: per-sample batched GEMMs (attention heads x samples)
};

// Attention kernels exist in two forms: unfused (score matrix materialised, several kernels) and
// fused (FlashAttention-style, one kernel each way). The scenario's `fused_attention` picks one.
enum class AttentionForm { any, unfused_only, fused_only };

// LSTM kernels likewise: cuDNN's or TensorFlow's BlockLSTM; the framework's `rnn` picks one.
enum class RnnForm { any, cudnn_only, tf_block_only };

// Batch-norm kernels likewise: cuDNN's (one kernel each way) or the framework's native ones; the
// framework's `batch_norm` and the activations' dtype pick one (models/kernel_plan.cpp).
enum class NormForm { any, cudnn_only, native_only };

// One kernel a framework launches for a layer, per sample: instantiated for a batch and a dtype
// by instantiate() below. Activation elements are priced at the activation width, parameter
// elements at the compute width, raw bytes as they are (dropout masks, int64 indices).
struct KernelSpec {
  const char* what = "";  // static label, e.g. "conv fwd", "conv dgrad", "bn bwd"
  sim::KernelClass cls = sim::KernelClass::elementwise;
  double flops = 0;              // per sample
  double act_elements = 0;       // activation elements read + written, per sample
  double param_elements = 0;     // parameter elements read + written (independent of the batch)
  int winograd_filter = 0;       // 3 or 5: a square stride-1 ungrouped convolution (sim::Kernel's)
  bool weight_gradient = false;  // a convolution's weight gradient (sim::Kernel's flag)
  bool dilated = false;          // a dilated convolution (sim::Kernel's flag)
  bool strided_data_gradient = false;  // a strided convolution's data gradient (sim::Kernel's)
  double strided_tap_waste = 0;        // its phases' taps over the filter's (sim::Kernel's)
  double input_tap_reuse = 0;          // a weight gradient's taps per input element (sim::Kernel's)
  bool whole_k = false;  // a GEMM whose library never splits its reduction (sim::Kernel's)
  bool recurrent_data_gradient = false;  // a recurrent step's data gradient (sim::Kernel's)
  bool k_major_operands = false;         // a GEMM of two K-major operands (sim::Kernel's flag)
  // A convolution's layout conversions under channels-first tensors (sim::Kernel's fields): the
  // activation elements per sample and the parameter elements its transposes read.
  bool pointwise_gemm = false;
  double input_channels = 0;
  double transpose_act_elements = 0;
  double transpose_param_elements = 0;
  double raw_bytes = 0;     // per sample, independent of the dtype
  double row_elements = 0;  // a row-wise kernel's row (sim::Kernel::row_elements)
  // A memory-bound kernel's per-element arithmetic and its elements per sample (sim::Kernel's).
  sim::ElementMath element_math = sim::ElementMath::none;
  double math_elements = 0;
  sim::GemmShape gemm;         // compute classes: the GEMM view, per sample along batch_dim
  sim::GemmChannels channels;  // convolutions: the channels in each GEMM dimension
  BatchDim batch_dim = BatchDim::none;
  int repeat = 1;  // launched this many times in a row (e.g. one recurrent cell per time step);
                   // flops and bytes above are for one launch
  AttentionForm form = AttentionForm::any;
  RnnForm rnn_form = RnnForm::any;
  NormForm norm_form = NormForm::any;
  // Launched from a library's C++ inside one framework op (cuDNN's or TensorFlow BlockLSTM's
  // per-step RNN kernels, a native batch norm's kernels after its first), not dispatched by the
  // framework op by op: its host time is the
  // framework profile's library_launch (models/kernel_plan.cpp, kernel_host_s).
  bool library_launch = false;
  // The first kernel of a library API call that launches its kernels from its own C++ (one of
  // cuDNN's RNN calls): before its first launch the host also does the call's setup once, the
  // framework profile's library_call (models/kernel_plan.cpp, library_call_host_s).
  bool library_call = false;
  // An imported workload's kernel (models/zoo/imported_workload.hpp): its duration as measured on
  // the model's measuring device for its measured batch, the device gap before it (the kernel
  // started after the previous one ended, or after its launch, by this much) and the host time
  // from the previous launch to its own. flops and raw_bytes above are its work per sample
  // (0 where the trace had no shapes). Unused (0) for the zoo's kernels.
  double measured_s = 0;
  double measured_gap_s = 0;
  double measured_host_s = 0;
  // Tensor parallelism of an imported workload (shard_tensor_parallel): the share of the measured
  // kernel's FLOPs and bytes one rank runs, and the rank's GEMM view (0: `gemm` unchanged). The
  // work above stays the measured kernel's; the kernel model's ratio between the two gives the
  // rank's time (models/kernel_plan.cpp measured_launch).
  double measured_flops_share = 1;
  double measured_bytes_share = 1;
  sim::GemmShape measured_rank_gemm;
};

// The kernel `k` for `batch` samples in `dtype` (activations and parameters `dtype` wide;
// tf32 stores fp32). A GEMM is `unaligned` where a dimension other than its batch dimension (the
// rows of a linear layer's forward and data gradient, the reduction of its weight gradient: the
// ones that grow with the samples) is not a whole number of 16-byte vectors: those dimensions are
// the operands' strides in the row-major layouts PyTorch passes to cuBLAS (x @ W^T, dy @ W,
// dy^T @ x), the rows never.
sim::Kernel instantiate(const KernelSpec& k, double batch, sim::Dtype dtype);

// The SIMT instructions `k`'s per-element arithmetic issues for `batch` samples as `framework`'s
// kernels implement it (sim::Kernel::issue_instructions), 0 where it names none.
double issue_instructions(const KernelSpec& k, double batch, const sim::FrameworkSpec& framework);

// The structure tensor parallelism needs to split a transformer entry as Megatron-LM does
// (Shoeybi et al. 2019, "Megatron-LM", Sec. 3): attention by heads (key/value heads under
// grouped-query attention), the MLP by its inner width, the embedding and the language-model head
// by vocabulary rows. Per sample, like the rest of the Layer.
enum class TransformerPart { embedding, attention, mlp, head };

// The share of a model one tensor-parallel rank runs (Megatron-LM): `tp` ranks split every
// transformer entry; with `sequence_parallel` (Korthikanti et al. 2022, Sec. 4.2.2) the token
// stream between the split regions (norms, dropouts, residual adds) is split by sequence too.
struct TensorParallelism {
  std::int64_t tp = 1;
  bool sequence_parallel = false;
};

// A collective one tensor-parallel rank runs inside a layer's pass (Megatron-LM).
enum class TpCollectiveOp { allreduce, all_gather, reduce_scatter };

const char* tp_collective_op_name(TpCollectiveOp op);

struct TpCollective {
  TpCollectiveOp op = TpCollectiveOp::allreduce;
  double elements_per_sample = 0;  // elements of the whole (unsharded) tensor it covers, per sample
  bool at_start = false;           // before the pass's kernels (e.g. the SP all-gather) or after
  const char* what = "";           // static label, e.g. "attn out allreduce"
};

struct TransformerEntryInfo {
  TransformerPart part = TransformerPart::attention;
  std::int64_t d_model = 0;
  std::int64_t heads = 0;     // attention: query heads
  std::int64_t kv_heads = 0;  // attention: key/value heads (== heads without grouped queries)
  std::int64_t head_dim = 0;  // attention: width of one head (heads * head_dim may differ from
                              // d_model, e.g. GPT-3 13B)
  std::int64_t d_ff = 0;      // mlp: inner width (of each branch when gated)
  bool gated = false;         // mlp: gated (SwiGLU/GEGLU), three weight matrices instead of two
  bool cross = false;         // attention: queries attend to another sequence (encoder output)
  std::int64_t seq = 0;       // tokens entering the entry
  std::int64_t kv_seq = 0;    // attention: keys per query (encoder length, or memory + segment)
  std::int64_t vocab = 0;     // embedding / head: rows of the token table (tied or not)
  // The split this entry was built with (tp 1: the whole entry, or replicated on every rank).
  TensorParallelism parallel;
};

struct Layer {
  std::string name;
  OpClass op = OpClass::elementwise;
  double fwd_flops = 0;         // per sample, multiply-add = 2 FLOPs, elementwise work included
  double fwd_macs = 0;          // per sample, multiply-adds of convs, linears and attention matmuls
  double bwd_input_flops = 0;   // per sample, gradient w.r.t. the layer input
  double bwd_weight_flops = 0;  // per sample, gradient w.r.t. the weights
  std::int64_t params = 0;
  double input_elements = 0;    // per sample, activation elements entering the layer
  double output_elements = 0;   // per sample, activation elements handed to the next entry (skip
                                // connections that jump ahead, as torchgpipe's stash/pop, excluded)
  double saved_elements = 0;    // per sample, activation elements kept for backward
  double saved_mask_bytes = 0;  // per sample, dropout masks kept for backward (1 byte per element)
  std::vector<std::int64_t> output_shape;           // per sample, e.g. {C, H, W} or {seq, hidden}
  std::optional<TransformerEntryInfo> transformer;  // set on transformer entries only
  int param_tensors = 0;  // parameter tensors (weights, biases, norm scales): optimizer kernels
                          // are launched per tensor
  // The fp32 parameters that a 16-bit autocast step casts: the weights and biases that ops on
  // the framework's lower-precision list take (convolutions, linear layers and RNNs; a tied
  // weight where the op that reuses it runs). Norm scales and embedding tables stay fp32
  // (paper: pytorch/pytorch aten/src/ATen/autocast_mode.cpp, the lower_precision_fp list; TF's
  // auto_mixed_precision_lists.h allow list). One cast kernel per tensor each way.
  std::int64_t cast_params = 0;
  int cast_param_tensors = 0;
  // Activation elements saved only by unfused attention (the score-sized softmax output and
  // dropped probabilities, included in saved_elements) and the dropout-mask bytes likewise (in
  // saved_mask_bytes); fused attention keeps per-row statistics instead (fused_saved_elements).
  double unfused_saved_elements = 0;
  double unfused_saved_mask_bytes = 0;
  double fused_saved_elements = 0;
  // The kernels of the forward and of the backward pass, in launch order.
  std::vector<KernelSpec> fwd_kernels;
  std::vector<KernelSpec> bwd_kernels;
  // Tensor parallelism: the collectives one rank runs in the forward and the backward pass, in
  // order (empty unless the model was split by shard_tensor_parallel).
  std::vector<TpCollective> tp_fwd;
  std::vector<TpCollective> tp_bwd;

  double bwd_flops() const { return bwd_input_flops + bwd_weight_flops; }
  // Bytes kept for backward when activations are `bytes_per_element` wide.
  double saved_bytes(double bytes_per_element) const {
    return saved_elements * bytes_per_element + saved_mask_bytes;
  }
  // The same with fused (FlashAttention-style) or unfused attention.
  double saved_bytes(double bytes_per_element, bool fused_attention) const {
    if (!fused_attention) return saved_bytes(bytes_per_element);
    return (saved_elements - unfused_saved_elements) * bytes_per_element +
           (saved_mask_bytes - unfused_saved_mask_bytes) + fused_saved_elements * 4;
  }
};

// The tensor-parallel role of an imported workload's layer (its workload file's "tp"; README
// "The workload file"), Megatron-LM's split (Shoeybi et al. 2019 Sec. 3): column-parallel linears
// split their output features, row-parallel ones their input features, vocabulary-parallel
// embeddings and heads their vocabulary rows; `split` layers run between a column and its row
// layer (or after a vocabulary-parallel head) on the rank's share of the features.
enum class ImportedTpRole { replicated, column, row, vocab, split };

// Where an imported workload was measured: its kernels' times hold on `accelerator` for `batch`
// samples in `precision`; the optimizer kernels are the step's measured ones (for the whole
// model's parameters).
struct MeasuredOrigin {
  sim::AcceleratorSpec accelerator;
  sim::Dtype precision = sim::Dtype::fp32;
  double batch = 1;
  double step_s = 0;           // the measured step time
  double host_per_step_s = 0;  // the host's time per step outside launches (the framework's)
  int host_syncs_per_step = 0;
  std::vector<KernelSpec> optimizer;
  // Per layer, its tensor-parallel role (empty: all replicated), and the attention heads (query,
  // key/value) its kernels run where the trace says (0: unknown), which tp must divide.
  std::vector<ImportedTpRole> tp_roles;
  std::vector<std::array<std::int64_t, 2>> tp_heads;
  // The measured kernels' names (their KernelSpec::what), shared by every copy of the model.
  std::shared_ptr<const std::deque<std::string>> kernel_names;
};

// The element type of a model's input tensor (pixels, token ids, audio samples, features): what
// the host-to-device copy of a batch moves per element.
enum class InputDtype { uint8, fp16, bf16, fp32, int32, int64 };
// Each input dtype by the name scenario files use ("input": {"input_dtype": ...}).
inline constexpr std::array<std::pair<const char*, InputDtype>, 6> kInputDtypeNames{{
    {"uint8", InputDtype::uint8},
    {"fp16", InputDtype::fp16},
    {"bf16", InputDtype::bf16},
    {"fp32", InputDtype::fp32},
    {"int32", InputDtype::int32},
    {"int64", InputDtype::int64},
}};
const char* input_dtype_name(InputDtype d);
double input_dtype_bytes(InputDtype d);

struct ZooModel {
  std::string name;
  std::string description;
  std::map<std::string, double> hyperparameters;  // resolved values actually used
  std::vector<std::int64_t> input_shape;          // per sample, e.g. {3, 224, 224} or {seq}
  InputDtype input_dtype = InputDtype::fp32;
  std::vector<Layer> layers;
  // Set for an imported workload: its layers' kernels carry measured times (kernel_plan.hpp
  // scales them to the scenario's device and batch).
  std::optional<MeasuredOrigin> measured;

  double input_bytes_per_sample() const;
  std::int64_t params() const;
  double fwd_flops() const;
  double fwd_macs() const;
  double bwd_flops() const;
  double train_flops() const { return fwd_flops() + bwd_flops(); }
  double saved_elements() const;
  double saved_bytes(double bytes_per_element) const;
  int param_tensors() const;
};

}  // namespace trainsim::models
