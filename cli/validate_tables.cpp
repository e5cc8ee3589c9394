// The step-throughput and kernel-time reference tables behind `trainsim validate`: each maps its
// rows to what trainsim simulates (a kernel on an accelerator, or a training scenario) and returns
// one point per row it can map. Rows whose hardware or model trainsim does not have are skipped
// (their count is reported by the command); nothing is fitted here.

#include "cli/validate_tables.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <span>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "fit/csv_table.hpp"
#include "models/kernel_plan.hpp"
#include "models/scenario.hpp"
#include "models/training_step.hpp"
#include "models/zoo/net_builder.hpp"
#include "models/zoo/zoo.hpp"
#include "sim/core/input_error.hpp"
#include "sim/hw/kernel_model.hpp"

namespace trainsim::reference_data {
std::span<const sim::EmbeddedFile> embedded_files();
}

namespace trainsim::cli {

std::string_view reference_csv(const std::string& file) {
  for (const sim::EmbeddedFile& f : reference_data::embedded_files()) {
    if (f.path == file) return f.content;
  }
  throw std::out_of_range("no embedded reference table '" + file + "'");
}

std::optional<double> TableRow::number(const std::string& column) const {
  const std::string& s = at(column);
  if (s.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

const std::string& TableRow::at(const std::string& column) const {
  const auto it = std::find(table_.header.begin(), table_.header.end(), column);
  if (it == table_.header.end())
    throw std::logic_error(table_.file + ": no column '" + column + "'");
  return row_.fields[static_cast<std::size_t>(it - table_.header.begin())];
}

fit::CsvTable embedded_table(const std::string& file) {
  return fit::parse_csv_table(reference_csv(file), "tests/reference_data/" + file);
}

namespace {

using fit::ValidationPoint;

template <typename F>
void for_each_row(const fit::CsvTable& t, F f) {
  for (const fit::CsvRow& r : t.rows)
    f(TableRow(t, r));
}

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// ---- kernel tables (DeepBench) ----

// Which kernel rows a table takes. DeepBench's GPUs with accelerator profiles: those the kernel
// profiles are fitted on (V100, P100, GTX 1080 Ti, T4: scripts/calibrate_profiles.sh names their
// rows), or the ones nothing is fitted on, which check that the fitted values carry over to other
// boards of those architectures. Or the H200 this project measured itself (scripts/
// measure_gpu.py; tests/reference_data/h200_kernels_*.csv), DeepBench's shapes in PyTorch.
enum class KernelRows { deepbench_fitted, deepbench_held_out, h200 };

// The embedded table of `op` ("gemm", "conv", "lstm") for `rows`.
std::string kernel_file(KernelRows rows, const std::string& op) {
  if (rows == KernelRows::h200) return "h200_kernels_" + op + ".csv";
  return "deepbench_train_" + std::string(op == "lstm" ? "rnn" : op) + ".csv";
}

// DeepBench's GPUs by the name its results give them: the accelerator profile and the group of
// kernel rows they belong to.
const std::map<std::string, std::pair<std::string, KernelRows>>& deepbench_gpus() {
  static const std::map<std::string, std::pair<std::string, KernelRows>> map{
      {"NVIDIA V100", {"v100-sxm2-16gb", KernelRows::deepbench_fitted}},
      {"NVIDIA Tesla P100", {"p100-sxm2-16gb", KernelRows::deepbench_fitted}},
      {"NVIDIA GTX 1080 Ti", {"gtx-1080-ti", KernelRows::deepbench_fitted}},
      {"NVIDIA T4", {"t4", KernelRows::deepbench_fitted}},
      {"NVIDIA GTX TitanXp", {"titan-xp", KernelRows::deepbench_held_out}},
      {"Nvidia TitanX Pascal", {"titan-x-pascal", KernelRows::deepbench_held_out}},
      {"Nvidia Tesla M40", {"m40", KernelRows::deepbench_held_out}},
      {"Nvidia TitanX", {"titan-x-maxwell", KernelRows::deepbench_held_out}}};
  return map;
}

// The accelerator profile of a DeepBench GPU in `group`; nullopt for the other group's GPUs.
std::optional<std::string> deepbench_accelerator(const std::string& gpu, KernelRows group) {
  const auto it = deepbench_gpus().find(gpu);
  if (it == deepbench_gpus().end() || it->second.second != group) return std::nullopt;
  return it->second.first;
}

// fp32, or 16-bit inputs with tensor-core math and fp32 accumulation; DeepBench's "pseudo FP16"
// (16-bit storage, fp32 math) is not a training precision trainsim models.
std::optional<sim::Dtype> deepbench_dtype(const std::string& precision) {
  if (precision == "Float") return sim::Dtype::fp32;
  if (precision == "16 bit inputs, 16 bit multiplication, 32 bit addition") return sim::Dtype::fp16;
  return std::nullopt;
}

struct KernelRow {
  sim::AcceleratorSpec accelerator;
  sim::Dtype dtype;
  std::string gpu_label;
};

std::optional<KernelRow> kernel_row(const TableRow& r, const sim::ProfileLibrary& lib,
                                    KernelRows group) {
  std::optional<std::string> acc;
  std::optional<sim::Dtype> dtype;
  if (group == KernelRows::h200) {
    if (r.at("gpu") == "NVIDIA H200") acc = "h200";
    // fp32 (TF32 off: torch.backends.cuda.matmul.allow_tf32 and cudnn.allow_tf32 False), tf32
    // (both True) or bf16 tensors.
    dtype = sim::parse_step_precision(r.at("precision"));
  } else {
    acc = deepbench_accelerator(r.at("gpu"), group);
    dtype = deepbench_dtype(r.at("precision_sheet"));
  }
  if (!acc || !dtype) return std::nullopt;
  const sim::AcceleratorSpec a = lib.accelerator(*acc, "reference table");
  if (!a.peak(*dtype)) return std::nullopt;
  return KernelRow{a, *dtype, *acc + " " + sim::dtype_name(*dtype)};
}

// Milliseconds of a run of kernels (each KernelSpec instantiated for `batch` samples, on
// channels-first tensors or not).
double kernels_ms(const sim::AcceleratorSpec& a, const std::vector<models::KernelSpec>& ks,
                  double batch, sim::Dtype dtype, bool channels_first) {
  double s = 0;
  for (const models::KernelSpec& k : ks) {
    sim::Kernel kernel = models::instantiate(k, batch, dtype);
    kernel.channels_first = channels_first;
    s += k.repeat * sim::kernel_time_s(a, kernel);
  }
  return 1e3 * s;
}

std::vector<ValidationPoint> deepbench_gemm(const sim::ProfileLibrary& lib, KernelRows group) {
  std::vector<ValidationPoint> out;
  for_each_row(embedded_table(kernel_file(group, "gemm")), [&](const TableRow& r) {
    const auto k = kernel_row(r, lib, group);
    const auto m = r.number("M"), n = r.number("N"), kk = r.number("K"), t = r.number("time_ms");
    if (!k || !m || !n || !kk || !t || *t <= 0) return;
    // The GEMM as the zoo's linear layer launches it: rows M, N outputs, K inputs.
    models::NetBuilder nb;
    const models::Tensor x =
        nb.input({static_cast<std::int64_t>(*m), static_cast<std::int64_t>(*kk)});
    nb.begin("gemm", models::OpClass::matmul, x.elements());
    const models::Tensor y = nb.linear(x, static_cast<std::int64_t>(*n), false);
    nb.end(y);
    const auto layers = nb.take_layers();
    ValidationPoint p;
    p.series = k->gpu_label + " gemm";
    p.x = 2 * *m * *n * *kk;
    p.label = k->gpu_label + " gemm M" + fmt(*m) + " N" + fmt(*n) + " K" + fmt(*kk) + " " +
              r.at("A_transpose") + r.at("B_transpose");
    p.measured = *t;
    // The operands' strides as the row's library call passes them: DeepBench calls cuBLAS with
    // column-major operands (lda = M, or K transposed; ldb = K, or N transposed; ldc = M); the
    // H200 rows call torch.mm on row-major ones (a transposed operand is the view of a tensor
    // stored the other way round), whose strides are K or M, N or K, and N.
    const bool ta = r.at("A_transpose") == "T", tb = r.at("B_transpose") == "T";
    const std::array<double, 3> strides = group == KernelRows::h200
                                              ? std::array{ta ? *m : *kk, tb ? *kk : *n, *n}
                                              : std::array{ta ? *kk : *m, tb ? *n : *kk, *m};
    sim::Kernel g = models::instantiate(layers[0].fwd_kernels.at(0), 1, k->dtype);
    sim::set_operand_strides(g, strides);
    // Both operands MN-major: each strided along K. Column-major (DeepBench): op(A) untransposed
    // (M contiguous) and op(B) transposed (N contiguous); row-major torch.mm (the H200 rows): A
    // a transposed view (M contiguous) and B as stored (N contiguous).
    const bool mn_major = group == KernelRows::h200 ? ta && !tb : !ta && tb;
    // Both K-major: column-major op(A) transposed and op(B) not (cuBLAS's "TN"); row-major A as
    // stored and B a transposed view.
    const bool k_major = group == KernelRows::h200 ? !ta && tb : ta && !tb;
    g.operands = mn_major  ? sim::GemmOperands::both_mn_major
                 : k_major ? sim::GemmOperands::both_k_major
                           : sim::GemmOperands::mixed;
    p.predicted = 1e3 * sim::kernel_time_s(k->accelerator, g);
    out.push_back(p);
  });
  fit::split_halves(out);
  return out;
}

std::vector<ValidationPoint> deepbench_conv(const sim::ProfileLibrary& lib, KernelRows group) {
  std::vector<ValidationPoint> out;
  for_each_row(embedded_table(kernel_file(group, "conv")), [&](const TableRow& r) {
    const auto k = kernel_row(r, lib, group);
    if (!k) return;
    const auto layer = deepbench_conv_layer(r);
    if (!layer) return;
    const models::Conv2d& spec = layer->spec;
    models::NetBuilder nb;
    const models::Tensor x = nb.input(layer->input, true);
    std::vector<models::Layer> layers;
    try {
      nb.begin("conv", models::OpClass::conv, x.elements());
      nb.end(nb.conv2d(x, spec));
      layers = nb.take_layers();
    } catch (const models::ShapeError&) {
      return;
    }
    const double batch = layer->batch;
    const std::string shape = " conv C" + fmt(layer->input[0]) + " " + fmt(layer->input[1]) + "x" +
                              fmt(layer->input[2]) + " K" + fmt(spec.out_channels) + " " +
                              fmt(spec.kernel_h) + "x" + fmt(spec.kernel_w) + "/" +
                              fmt(spec.stride_h) + " N" + fmt(batch);
    const auto& bwd = layers[0].bwd_kernels;  // dgrad, wgrad (the zoo's backward order)
    // DeepBench's tensor-core build (its fp16 sheets) forces cuDNN's deterministic
    // CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 for every weight gradient ("Tensor Op math only supports
    // this algorithm": code/nvidia/conv_bench.cu, USE_TENSOR_CORES); its fp32 sheets come from the
    // autotuned build (cudnnFind*). Both are priced as the model's weight gradient, split-K slices
    // summed apart. DeepBench's fp16 weight gradients of 64-256 filters over large maps (C128
    // 56x56 K256 3x3, C128 40x175 K128) run at their forward's rate on the V100 and the T4, 80-100
    // TFLOP/s on the V100, so their reduction is split: one thread block per filter-gradient tile
    // over the whole N x P x Q reduction (the model's whole_k), as these rows were priced before,
    // leaves most of the SMs idle. What had made those kernels' few-filter rows slow is their
    // tiles: 128 rows of filters at the least (nvidia-volta.json,
    // gemm_tile.conv_matrix_unit_min_m).
    const std::vector<std::pair<const char*, std::vector<models::KernelSpec>>> parts{
        {"fwd_ms", layers[0].fwd_kernels},
        {"bwd_inputs_ms", {bwd.at(0)}},
        {"bwd_params_ms", {bwd.at(1)}}};
    for (const auto& [column, kernels] : parts) {
      const auto t = r.number(column);
      if (!t || *t <= 0) continue;  // "N/A*": DeepBench did not time the first layer's dgrad
      ValidationPoint p;
      const std::string what = std::string(column).substr(0, std::string(column).size() - 3);
      p.series = k->gpu_label + " conv " + what;
      p.label = k->gpu_label + shape + " " + what;
      p.x = 2 * layers[0].fwd_macs * batch;
      p.measured = *t;
      // DeepBench's conv_bench describes every float and half tensor as CUDNN_TENSOR_NCHW
      // (code/nvidia/conv_bench.cu); measure_gpu.py passes fp32 and TF32 tensors NCHW and bf16
      // ones channels_last (section_conv).
      const bool channels_first = group != KernelRows::h200 || k->dtype != sim::Dtype::bf16;
      p.predicted = kernels_ms(k->accelerator, kernels, batch, k->dtype, channels_first);
      out.push_back(p);
    }
  });
  fit::split_halves(out);
  return out;
}

// One node of `gpus` accelerators on `intra_link` (switched), with `host`.
nlohmann::json single_node(const std::string& accelerator, int gpus, const std::string& intra_link,
                           const std::string& host, const std::string& host_link, bool p2p) {
  return {{"nodes", 1},
          {"node",
           {{"host", host},
            {"accelerator", accelerator},
            {"accelerators_per_node", gpus},
            {"intra", {{"topology", "switched"}, {"link", intra_link}}},
            {"host_link", host_link},
            {"p2p", p2p}}}};
}

std::vector<ValidationPoint> deepbench_lstm(const sim::ProfileLibrary& lib, KernelRows group) {
  std::vector<ValidationPoint> out;
  // The H200's rows are eager timings of back-to-back torch.nn.LSTM calls on a known host
  // (scripts/measure_gpu.py, section_lstm: one call forward, autograd.grad for the gradients):
  // the host dispatches each call's ops and cuDNN launches the per-step kernels from its C++, the
  // device runs them as they come, and whichever is slower paces the calls, as the step
  // simulator's host thread runs ahead of the stream (models/training_step.cpp). The host's time
  // per launch is the step simulator's (models::kernel_host_s) on the machine's host profile
  // under pytorch_eager. DeepBench's own host is not recorded, so its rows are device time.
  std::optional<models::Scenario> eager;
  if (group == KernelRows::h200) {
    const nlohmann::json doc = {
        {"name", "h200 lstm table"},
        {"cluster", single_node("h200", 1, "nvlink4", "kvm-xeon-emr-16vcpu", "pcie5-x16", true)},
        {"model", "mnist_mlp"},
        {"framework", "pytorch_eager"},
        {"batch_per_replica", 1},
        {"precision", "fp32"}};
    eager = models::load_scenario(doc, "h200 LSTM table", {}, lib);
  }
  for_each_row(embedded_table(kernel_file(group, "lstm")), [&](const TableRow& r) {
    if (group != KernelRows::h200 && r.at("cell") != "lstm") return;
    const auto k = kernel_row(r, lib, group);
    const auto hidden = r.number("hidden_units"), n = r.number("N"), steps = r.number("timesteps");
    if (!k || !hidden || !n || !steps) return;
    // DeepBench's rnn_bench builds its LSTM with CUDNN_SKIP_INPUT (inputs as wide as the hidden
    // state, added to the gates with no input GEMM) and times cudnnRNNForwardTraining,
    // cudnnRNNBackwardData and cudnnRNNBackwardWeights (baidu-research/DeepBench
    // code/nvidia/rnn_bench.cu). PyTorch's torch.nn.LSTM has no skip-input mode: the H200 rows
    // run the input GEMM (their `input` column says "linear").
    const models::LstmInput input = group == KernelRows::h200 && r.at("input") == "linear"
                                        ? models::LstmInput::linear
                                        : models::LstmInput::skip;
    models::NetBuilder nb;
    const auto h = static_cast<std::int64_t>(*hidden);
    const models::Tensor x = nb.input({static_cast<std::int64_t>(*steps), h}, true);
    nb.begin("lstm", models::OpClass::recurrent, x.elements());
    nb.end(nb.lstm(x, h, input));
    const auto layers = nb.take_layers();
    std::vector<models::KernelSpec> data_grad, weight_grad;
    // Both DeepBench and PyTorch's torch.nn.LSTM call cuDNN: TensorFlow's BlockLSTM kernels,
    // which the zoo's LSTM also lists for the frameworks that launch them, do not run here.
    const auto cudnn_kernels = [](const std::vector<models::KernelSpec>& ks) {
      std::vector<models::KernelSpec> out;
      std::copy_if(ks.begin(), ks.end(), std::back_inserter(out), [](const models::KernelSpec& k) {
        return k.rnn_form != models::RnnForm::tf_block_only;
      });
      return out;
    };
    std::vector<models::KernelSpec> forward = cudnn_kernels(layers[0].fwd_kernels);
    for (const models::KernelSpec& k : cudnn_kernels(layers[0].bwd_kernels))
      (std::string_view(k.what).starts_with("lstm weight grad") ? weight_grad : data_grad)
          .push_back(k);
    const std::vector<std::pair<const char*, std::vector<models::KernelSpec>>> parts{
        {"fwd_ms", forward}, {"bwd_inputs_ms", data_grad}, {"bwd_weights_ms", weight_grad}};
    const std::string shape = " lstm h" + fmt(*hidden) + " N" + fmt(*n) + " T" + fmt(*steps);
    for (const auto& [column, kernels] : parts) {
      const auto t = r.number(column);
      if (!t || *t <= 0) continue;
      const std::string what = std::string(column).substr(0, std::string(column).size() - 3);
      ValidationPoint p;
      p.series = k->gpu_label + " lstm " + what;
      p.label = k->gpu_label + shape + " " + what;
      p.x = *hidden * *hidden * *n * *steps;
      p.measured = *t;
      p.predicted = kernels_ms(k->accelerator, kernels, *n, k->dtype, false);
      if (eager) {
        // The host's time for the column's kernels as the step simulator launches them.
        const models::Pass pass =
            std::string_view(column) == "fwd_ms" ? models::Pass::forward : models::Pass::backward;
        models::Layer call = layers[0];
        (pass == models::Pass::forward ? call.fwd_kernels : call.bwd_kernels) = kernels;
        std::vector<models::Launch> launches;
        models::layer_launches(*eager, call, pass, *n, launches);
        p.predicted = std::max(p.predicted, 1e3 * models::host_seconds(launches));
      }
      out.push_back(p);
    }
  });
  fit::split_halves(out);
  return out;
}

// PyTorch's memory-bound kernels on the H200 (tests/reference_data/h200_kernels_memory.csv):
// each op over one tensor of `elements`, its DRAM bytes as the table counts them (each input read
// and each output written once). Each time is the smaller of eager back-to-back launches and a
// CUDA graph's replay: eagerly, a kernel shorter than the 7-10 us the host takes to dispatch the
// next one (h200_machine.json, host_s_per_tiny_add_) times the host, not the kernel.
std::vector<ValidationPoint> h200_memory_kernels(const sim::ProfileLibrary& lib) {
  std::vector<ValidationPoint> out;
  const sim::AcceleratorSpec a = lib.accelerator("h200", "reference table");
  // PyTorch eager's kernels (sim::FrameworkSpec::element_instructions).
  const sim::FrameworkSpec framework = lib.framework("pytorch_eager", "reference table");
  for_each_row(embedded_table("h200_kernels_memory.csv"), [&](const TableRow& r) {
    const auto dtype = sim::parse_step_precision(r.at("precision"));
    const auto elements = r.number("elements"), bytes = r.number("bytes_moved"),
               t = r.number("time_ms");
    if (!dtype || !elements || !bytes || !t) return;
    const std::string& op = r.at("op");
    sim::Kernel k;
    k.dtype = *dtype;
    k.bytes = *bytes;
    auto math = sim::ElementMath::none;
    if (op == "copy") {
      k.cls = sim::KernelClass::copy;
    } else if (op == "sum") {
      // x.sum(): one output over the whole tensor, through TensorIterator's reduce kernel.
      k.cls = sim::KernelClass::reduction;
      k.reduce_outputs = 1;
      k.row_elements = *elements;
    } else if (op.starts_with("layer_norm")) {
      k.cls = sim::KernelClass::normalization;
      math = sim::ElementMath::layer_norm;
    } else if (op.starts_with("softmax")) {
      k.cls = sim::KernelClass::softmax;
      math = sim::ElementMath::softmax;
    } else {
      k.cls = sim::KernelClass::elementwise;           // add, relu, gelu, dropout
      if (op == "gelu") math = sim::ElementMath::erf;  // F.gelu's exact (erf) form
      if (op == "dropout") math = sim::ElementMath::philox;
    }
    k.issue_instructions = framework.issue_instructions(math, *elements);
    // A layer norm's or softmax's row is in its name (layer_norm_w4096: rows of 4096 elements).
    if (const auto w = op.find("_w"); w != std::string::npos) {
      k.row_elements = std::stod(op.substr(w + 2));
    }
    ValidationPoint p;
    p.series = "h200 " + r.at("precision") + " " + op;
    p.x = *elements;
    p.label = p.series + " " + std::to_string(static_cast<std::int64_t>(*elements)) + " elements";
    p.measured = *t;
    p.predicted = 1e3 * sim::kernel_time_s(a, k);
    out.push_back(p);
  });
  fit::split_halves(out);
  return out;
}

// ---- step-throughput tables ----

// Simulates a row's scenario into `p` (whose `measured` is set): `predicted` in the table's units,
// `units_per_sample` of them per sample, and the model FLOPs utilisation the measured value
// implies (fit::exclude_beyond_peak), for models without convolutions only: a convolution's FLOPs
// count its direct form, and cuDNN's Winograd and FFT algorithms need up to several times fewer
// multiplications (Lavin and Gray, arXiv:1509.09308), so a convolutional net's direct-FLOP MFU
// has no bound at 1; cuBLAS's GEMMs run the direct form.
void simulate_row(ValidationPoint& p, const nlohmann::json& doc, const std::string& label,
                  const sim::ProfileLibrary& lib, double units_per_sample = 1) {
  const models::Scenario s = models::load_scenario(doc, label, {}, lib);
  const models::StepReport r = models::simulate_training(s);
  p.predicted = units_per_sample * r.throughput_samples_per_s;
  const bool convolutions =
      std::any_of(s.model.layers.begin(), s.model.layers.end(), [](const models::Layer& l) {
        return l.op == models::OpClass::conv || l.op == models::OpClass::grouped_conv ||
               l.op == models::OpClass::depthwise_conv;
      });
  if (p.predicted > 0 && !convolutions) p.measured_mfu = r.mfu * p.measured / p.predicted;
}

// A throughput row of `series` at `batch` samples per step, measured `measured`.
ValidationPoint batch_point(std::string series, double batch, double measured) {
  ValidationPoint p;
  p.label = series + " batch " + fmt(batch);
  p.series = std::move(series);
  p.x = batch;
  p.measured = measured;
  return p;
}

std::vector<ValidationPoint> mxnet_throughput(const sim::ProfileLibrary& lib) {
  std::vector<ValidationPoint> out;
  for_each_row(embedded_table("throughput_vs_batch_mxnet_k80_m60.csv"), [&](const TableRow& r) {
    const std::string gpu = r.at("gpu");
    const std::string model = r.at("model") == "AlexNet"        ? "alexnet"
                              : r.at("model") == "Inception-v3" ? "inception_v3"
                                                                : "resnet50";
    const auto batch = r.number("batch"), v = r.number("images_per_s");
    if (!batch || !v) return;
    // EC2 p2.xlarge (one K80 die) and g3.4xlarge (one M60 die), synthetic data (MXNet's
    // docs/faq/perf.md benchmark), SGD with momentum in fp32.
    const nlohmann::json doc = {
        {"name", "mxnet " + gpu + " " + model},
        {"cluster",
         single_node(gpu == "K80" ? "k80-gk210" : "m60-gm204", 1, "pcie3-x16",
                     gpu == "K80" ? "aws-e5-2686v4-8vcpu" : "aws-g3-4xlarge", "pcie3-x16", true)},
        {"model", model},
        {"framework", "mxnet"},
        {"batch_per_replica", static_cast<int>(*batch)},
        {"precision", "fp32"},
        {"optimizer", "momentum"},
        {"steps", 4},
        {"warmup_steps", 1}};
    ValidationPoint p = batch_point(gpu + " " + r.at("model"), *batch, *v);
    simulate_row(p, doc, "mxnet table line " + std::to_string(r.line()), lib);
    out.push_back(p);
  });
  fit::split_halves(out);
  fit::exclude_beyond_peak(out);
  return out;
}

// A Lambda system name ("8x A100 80GB SXM4", "LambdaCloud 4xV100 16GB") -> its family (the
// series), the accelerator profile and the node's wiring.
struct LambdaSystem {
  std::string family;
  std::string accelerator;
  std::string intra_link;
  bool p2p = true;
  bool tf32 = true;  // "fp32" runs TF32 tensor-core math on Ampere and later
  // The machine each row ran on, as its log's sys_pytorch.txt names the CPU
  // (lambdal/deeplearning-benchmark@aa5addb pytorch/results/*/sys_pytorch.txt;
  // hw_profiles/README.md 'Built-in hosts of benchmark machines'); 4-8 x RTX 6000 Ada ran on
  // another server than 1-2.
  std::string host;
  std::string host_from_4_gpus;
};

struct LambdaEntry {
  const char* family;
  LambdaSystem system;
};

// The entry of a system's family: its name without the GPU count ("8x A100 80GB SXM4" ->
// "A100 80GB SXM4", "LambdaCloud 4xV100 16GB" -> "LambdaCloud V100 16GB").
std::optional<LambdaSystem> lambda_system(const std::string& name,
                                          std::span<const LambdaEntry> entries) {
  static const std::regex count_prefix(R"(^(LambdaCloud )?(\d+) ?x ?)");
  std::string family = std::regex_replace(name, count_prefix, "$1");
  for (const LambdaEntry& e : entries) {
    if (family == e.family) {
      LambdaSystem s = e.system;
      s.family = family;
      return s;
    }
  }
  return std::nullopt;
}

// The systems of the table's current edition (@aa5addb: Lambda's re-runs from October 2022 on,
// the pytorch/results/*_v1 folders).
// None of them ran with peer-to-peer: benchmark_pytorch.sh exported NCCL_P2P_DISABLE=1 before
// every benchmark from commit 0a684b62 (2022-10-16, "Add 2x4090_v1") until 9a269d33 (2024-07-28)
// commented it out, and the multi-GPU _v1 results in this edition were committed in between
// (2xA6000_v1 refreshed 2022-12-15, 8xA100_80GB_SXM4_v1 2022-11-19, LambdaCloud_8xV100_16GB_v1
// 2022-12-16, 2xAdaA6000_v1 2023-01-12). NCCL then moves data through host memory (its SHM
// transport), NVLink boards included. (GeForce boards have no PCIe peer-to-peer anyway: NVIDIA
// disabled it on the RTX 3090/4090 drivers.)
std::span<const LambdaEntry> lambda_systems() {
  static const LambdaEntry entries[] = {
      {"LambdaCloud V100 16GB",
       {"", "v100-sxm2-16gb", "nvlink2", false, false, "lambda-cloud-gpu-8x-v100", ""}},
      {"LambdaCloud A100 40GB PCIe",
       {"", "a100-pcie-40gb", "pcie4-x16", false, true, "lambda-cloud-gpu-1x-a100-pcie", ""}},
      {"LambdaCloud A10", {"", "a10", "pcie4-x16", false, true, "lambda-cloud-gpu-1x-a10", ""}},
      // 2 x EPYC 7H12 with 1 TiB, which dual-epyc-7742 describes (hw_profiles/README.md).
      {"A100 80GB SXM4", {"", "a100-sxm4-80gb", "nvlink3", false, true, "dual-epyc-7742", ""}},
      {"A100 80GB PCIe", {"", "a100-pcie-80gb", "pcie4-x16", false, true, "epyc-7502", ""}},
      {"Quadro RTX 8000", {"", "quadro-rtx-8000", "pcie3-x16", false, false, "core-i7-6850k", ""}},
      {"RTX 3090", {"", "rtx-3090", "pcie4-x16", false, true, "threadripper-pro-5995wx", ""}},
      {"RTX 4090", {"", "rtx-4090", "pcie4-x16", false, true, "threadripper-pro-5995wx", ""}},
      {"RTX A6000", {"", "rtx-a6000", "pcie4-x16", false, true, "epyc-7502", ""}},
      {"RTX 6000 Ada",
       {"", "rtx-6000-ada", "pcie4-x16", false, true, "threadripper-pro-5995wx", "dual-epyc-7302"}},
  };
  return entries;
}

// The data-centre and professional systems of the table's edition before those runs (@2c0af45:
// Lambda's 2020-2021 runs in the 20.x and 21.x containers, PyTorch 1.4-1.9), on the machines
// their logs name (pytorch/results/*/sys_pytorch.txt at that commit: CPU, board, memory).
std::span<const LambdaEntry> lambda_2021_systems() {
  static const LambdaEntry entries[] = {
      // Tesla_V100-SXM2-32GB on a Supermicro X11DGO-T (2 x Xeon Gold 6148).
      {"V100 32GB", {"", "v100-sxm2-32gb", "nvlink2", true, false, "dual-xeon-gold-6148", ""}},
      // Supermicro H12DSG-O-CPU (2 x EPYC 7502).
      {"A100 40GB PCIe", {"", "a100-pcie-40gb", "pcie4-x16", true, true, "dual-epyc-7502", ""}},
      {"RTX A6000", {"", "rtx-a6000", "pcie4-x16", true, true, "dual-epyc-7502", ""}},
      // GIGABYTE MZ22-G20 (1 x EPYC 7502), as in the later edition.
      {"A100 80GB PCIe", {"", "a100-pcie-80gb", "pcie4-x16", true, true, "epyc-7502", ""}},
      // Inspur NF5488A5: HGX A100 with 2 x EPYC 7742 and 1 TB, as the DGX A100 host.
      {"A100 40GB SXM4", {"", "a100-sxm4-40gb", "nvlink3", true, true, "dual-epyc-7742", ""}},
      // Supermicro H12DGO-6 (2 x EPYC 7513).
      {"A100 80GB SXM4", {"", "a100-sxm4-80gb", "nvlink3", true, true, "dual-epyc-7513", ""}},
  };
  return entries;
}

// A benchmark workload: the zoo model with the hyper-parameters and optimizer of the NVIDIA
// DeepLearningExamples recipe that Lambda's and NVIDIA's tables run, and how many of the table's
// throughput units one sample is (tokens for translation and language models, mel frames for
// Tacotron 2, audio samples for WaveGlow).
struct Workload {
  nlohmann::json model;
  const char* optimizer;
  double units_per_sample = 1;
  // False where the harness runs one process per GPU that never exchanges gradients (see
  // lambda_workload): N such replicas are N single-GPU runs side by side.
  bool gradient_sync = true;
  // The recipe's gradient clipping (models::GradientClipping, scenario key gradient_clipping).
  const char* gradient_clipping = "none";
};

std::optional<Workload> workload(const std::string& name) {
  // SQuAD fine-tuning at sequence length 384 (DeepLearningExamples BERT run_squad.sh). Without
  // --fp16, run_squad.py steps BertAdam (optimization.py), a Python loop of unfused ops per
  // tensor; Lambda's FP32 logs show it (pytorch/results/*/PyTorch_bert_large_squad_FP32/*.txt:
  // the UserWarning raised at optimization.py:150, 'next_m.mul_(beta1).add_(1 - beta1, grad)').
  if (name == "resnet50") return Workload{"resnet50", "momentum", 1};
  if (name == "bert_base_squad")
    return Workload{{{"name", "bert_base"}, {"seq_len", 384}}, "bert_adam", 1};
  if (name == "bert_large_squad")
    return Workload{{{"name", "bert_large"}, {"seq_len", 384}}, "bert_adam", 1};
  if (name == "ssd") return Workload{"ssd300", "momentum", 1};
  // tok/s counts source and target tokens; the zoo's GNMT pads both sides to seq_len, so its
  // compute and its token count scale together.
  if (name == "gnmt") return Workload{"gnmt", "adam", 2 * 50};
  if (name == "ncf") return Workload{"ncf", "adam", 1};
  // DeepLearningExamples' Tacotron 2 / WaveGlow train.py clips every step with
  // torch.nn.utils.clip_grad_norm_(..., args.grad_clip_thresh) before optimizer.step().
  if (name == "tacotron2")  // mel frames per utterance
    return Workload{"tacotron2", "adam", 566, true, "per_tensor"};
  if (name == "waveglow")  // audio samples per segment
    return Workload{"waveglow", "adam", 8000, true, "per_tensor"};
  // Both Transformer-XL recipes train with LAMB: PyTorch's jitlamb (pytorch/wt103_{base,large}.yaml
  // 'optim: jitlamb': lamb.py's JITLamb, a scripted function per tensor), TensorFlow's tf/lamb.py
  // under its XLA jit scope (main.py --jit_optimizer, default True). PyTorch's train.py clips
  // every step (torch.nn.utils.clip_grad_norm_, --clip 0.25 by default) before optimizer.step().
  if (name == "transformerxlbase")
    return Workload{"transformerxl_base", "jit_lamb", 192, true, "per_tensor"};
  if (name == "transformerxllarge")
    return Workload{"transformerxl_large", "jit_lamb", 384, true, "per_tensor"};
  return std::nullopt;
}

// Lambda's harness runs DeepLearningExamples' Transformer-XL train.py with its command-line
// defaults, not the wt103 yaml recipes: its logs (lambdal/deeplearning-benchmark@aa5addb,
// pytorch/results/*/PyTorch_transformerxl{base,large}_FP32/*.txt, the printed Namespace) show
// adaptive=False, so one embedding table and a full 267,735-word softmax (#params = 191,948,759
// for base, 519,963,095 for large), and for large tgt_len = mem_len = 256 with div_val 1. tok/s
// counts batch x tgt_len. Base runs optim=jitlamb, large optim=adam, and both clip every step.
// Nor does the harness pass --multi_gpu (config_v1/config_pytorch_*.sh, and the 2020-2021
// configs at @2c0af45): train.py wraps the model in DistributedDataParallel only 'if
// args.multi_gpu == "ddp"' (NVIDIA/DeepLearningExamples PyTorch/LanguageModeling/Transformer-XL/
// pytorch/train.py), while its data iterator still gives each rank its own slice of the global
// batch (data_utils.py, 'Partition data for DistributedDataParallel') and the logged tok/s is
// summed over ranks. So on N GPUs, N replicas train apart and no gradient crosses a link: the
// table's Transformer-XL rows scale by 0.99-1.00 per GPU on every system, PCIe GeForce boards
// without peer-to-peer included. (DeepLearningExamples' own recipes set 'multi_gpu: ddp' in
// wt103_base.yaml and wt103_large.yaml, so the DLE table's Transformer-XL rows synchronise.)
std::optional<Workload> lambda_workload(const std::string& name) {
  if (name == "transformerxlbase") {
    return Workload{{{"name", "transformerxl_base"}, {"adaptive_clusters", 1}},
                    "jit_lamb",
                    192,
                    false,
                    "per_tensor"};
  }
  if (name == "transformerxllarge") {
    constexpr int kSegment = 256;  // tgt_len = mem_len; also the tokens one sample counts
    return Workload{{{"name", "transformerxl_large"},
                     {"adaptive_clusters", 1},
                     {"div_val", 1},
                     {"tgt_len", kSegment},
                     {"mem_len", kSegment}},
                    "adam",
                    kSegment,
                    false,
                    "per_tensor"};
  }
  return workload(name);
}

bool profile_exists(const sim::ProfileLibrary& lib, const std::string& kind,
                    const std::string& name) {
  for (const sim::ProfileEntry* e : lib.list()) {
    if (e->kind == kind && e->name == name) return true;
  }
  return false;
}

// One edition of Lambda's table: `file` (system, num_gpu, model, global_batch, throughput) on the
// systems of `entries`.
std::vector<ValidationPoint> lambda_table(const sim::ProfileLibrary& lib, const std::string& file,
                                          std::span<const LambdaEntry> entries) {
  std::vector<ValidationPoint> out;
  for_each_row(embedded_table(file), [&](const TableRow& r) {
    const auto system = lambda_system(r.at("system"), entries);
    const auto model = lambda_workload(r.at("model"));
    const auto gpus = r.number("num_gpu"), batch = r.number("global_batch"),
               v = r.number("throughput");
    if (!system || !model || !gpus || !batch || !v || *v <= 0) return;
    if (!profile_exists(lib, "accelerator", system->accelerator)) return;
    const int n = static_cast<int>(*gpus);
    const std::string& host =
        n >= 4 && !system->host_from_4_gpus.empty() ? system->host_from_4_gpus : system->host;
    // Replicas that never synchronise are simulated as one, and counted n times.
    const int simulated = model->gradient_sync ? n : 1;
    const nlohmann::json doc = {
        {"name", r.at("system") + " " + r.at("model")},
        {"cluster", single_node(system->accelerator, simulated, system->intra_link, host,
                                "pcie4-x16", system->p2p)},
        {"model", model->model},
        {"framework", "pytorch_eager"},
        {"batch_per_replica", static_cast<int>(*batch) / n},
        {"precision", system->tf32 ? "tf32" : "fp32"},
        {"optimizer", model->optimizer},
        {"gradient_clipping", model->gradient_clipping},
        {"parallelism", {{"data", simulated}}},
        {"steps", 4},
        {"warmup_steps", 1}};
    ValidationPoint p;
    p.series = system->family + " " + r.at("model");
    p.x = *gpus;
    p.gpus = n;
    p.label = r.at("system") + " " + r.at("model") + " batch " + fmt(*batch);
    p.measured = *v;
    simulate_row(p, doc, file + " line " + std::to_string(r.line()), lib,
                 model->units_per_sample * n / simulated);
    out.push_back(p);
  });
  fit::split_halves(out);
  fit::exclude_failed_runs(out);
  fit::exclude_beyond_peak(out);
  return out;
}

std::vector<ValidationPoint> lambda_scaling(const sim::ProfileLibrary& lib) {
  return lambda_table(lib, "dp_scaling_lambda_fp32_no_h100.csv", lambda_systems());
}

std::vector<ValidationPoint> lambda_scaling_2021(const sim::ProfileLibrary& lib) {
  return lambda_table(lib, "dp_scaling_lambda_fp32_2021.csv", lambda_2021_systems());
}

// DeepLearningExamples: the DGX system of a table heading.
struct DgxSystem {
  int gpus_per_node = 8;
  std::string intra_link;
  std::string host;
  std::string inter_link;  // for multi-node rows
};

DgxSystem dgx_system(const std::string& heading) {
  if (heading.find("DGX A100") != std::string::npos)
    return {8, "nvlink3", "dual-epyc-7742", "ib-hdr"};
  if (heading.find("DGX-2") != std::string::npos)
    return {16, "nvlink2", "dual-xeon-8168", "ib-edr"};  // DGX-2 datasheet (2018): 2 x Xeon 8168
  return {8, "nvlink2", "dual-xeon-e5-2698v4", "ib-edr"};
}

std::optional<Workload> dle_workload(const TableRow& r, bool amp) {
  const std::string m = r.at("model");
  const std::string heading = r.at("table_heading");
  if (m == "ResNet-50 v1.5") return workload("resnet50");
  if (m == "BERT-large") {
    // Pre-training at its sequence length with LAMB (PyTorch run_pretraining.py: FusedLAMBAMP;
    // TensorFlow scripts/run_pretraining_lamb.sh, run_pretraining.py optimizer_type "lamb");
    // SQuAD fine-tuning at 384 with Adam: PyTorch's run_squad.py steps apex FusedAdam with
    // --fp16 and BertAdam (optimization.py, unfused ops per tensor) without.
    const bool squad = heading.find("Fine-tuning") != std::string::npos;
    const auto seq = r.number("seq_len");
    if (!squad && !seq) return std::nullopt;
    const char* squad_optimizer = r.at("framework") == "PyTorch" && !amp ? "bert_adam" : "adam";
    return Workload{{{"name", "bert_large"}, {"seq_len", squad ? 384 : static_cast<int>(*seq)}},
                    squad ? squad_optimizer : "lamb",
                    1};
  }
  if (m == "Transformer-XL") {
    // TensorFlow's script builds the base model from TF1 ops (zoo transformerxl_base_tf).
    if (r.at("framework") != "PyTorch") return Workload{"transformerxl_base_tf", "lamb", 192};
    return workload(heading.find("Large") != std::string::npos ? "transformerxllarge"
                                                               : "transformerxlbase");
  }
  if (m == "GNMT v2") {
    // TensorFlow's nmt.py trains the decoder as a dynamic_rnn loop (zoo gnmt_tf).
    if (r.at("framework") != "PyTorch") return Workload{"gnmt_tf", "adam", 2 * 50};
    return workload("gnmt");
  }
  if (m == "SSD300 v1.1") return workload("ssd");
  if (m == "NCF") return workload("ncf");
  if (m == "Tacotron2/WaveGlow")
    return workload(r.at("model_variant") == "WaveGlow" ? "waveglow" : "tacotron2");
  return std::nullopt;
}

// BERT pre-training tables give a global accumulation in "Accumulation steps (FP32 and FP16)" or
// "Gradient Accumulation: mixed precision, FP32": the count for this row's precision.
int dle_accumulation(const TableRow& r, bool amp) {
  const std::string extra = r.at("extra_batch_cols");
  if (extra.empty()) return 1;
  const nlohmann::json j = nlohmann::json::parse(extra, nullptr, false);
  if (!j.is_array()) return 1;
  for (const auto& kv : j) {
    if (!kv.is_array() || kv.size() != 2) continue;
    const std::string key = kv[0].get<std::string>();
    if (key.find("ccumulation") == std::string::npos) continue;
    std::string value = kv[1].get<std::string>();
    std::smatch m;
    const std::regex two(R"((\d+)\s*(?:,|and)\s*(\d+))");
    if (!std::regex_search(value, m, two)) return 1;
    const bool fp32_first = key.find("FP32 and FP16") != std::string::npos;
    const int first = std::stoi(m[1]), second = std::stoi(m[2]);
    return fp32_first ? (amp ? second : first) : (amp ? first : second);
  }
  return 1;
}

// The precision a row's throughput was measured in. The throughput column's own header names it
// where a table has one column per precision ("Number of samples used with TF32"); the extracted
// `precision` field is wrong for WaveGlow's TF32/FP32 columns (Tacotron2/README.md lines 704-706
// and 748-750 say AMP for both columns), so the header wins.
std::string dle_precision(const TableRow& r) {
  const std::string column = r.at("precision_column");
  if (column.find("TF32") != std::string::npos) return "TF32";
  if (column.find("FP32") != std::string::npos) return "FP32";
  if (column.find("mixed precision") != std::string::npos) return "AMP";
  return r.at("precision");
}

// The batch per GPU of a row: where the batch cell gives one per precision ("10@FP16, 4@TF32"),
// the one of the row's precision (FP16 is the AMP column's).
std::optional<double> dle_batch(const TableRow& r, const std::string& precision) {
  const std::string raw = r.at("batch_raw");
  const std::string want = precision == "AMP" ? "FP16" : precision;
  static const std::regex per_precision(R"((\d+)\s*@\s*([A-Z0-9]+))");
  for (auto it = std::sregex_iterator(raw.begin(), raw.end(), per_precision);
       it != std::sregex_iterator(); ++it) {
    if ((*it)[2] == want) return std::stod((*it)[1]);
  }
  return r.number("batch_per_gpu");
}

// The framework profile a row's recipe trained under.
// - TensorFlow scripts: BERT and ResNet-50 train with XLA (--use_xla / --xla in their launch
//   scripts); GNMT (examples/DGXA100_*.sh: nmt.py) and Transformer-XL (tf/run_wt103_base.sh:
//   main.py) pass no XLA flag and run TF1's graph executor.
// - PyTorch's Tacotron 2 / WaveGlow recipe trained its AMP rows under NVIDIA Apex at O1
//   (PyTorch/SpeechSynthesis/Tacotron2/train.py at f0c8bc5, the commit that wrote these tables:
//   amp.initialize(model, optimizer, opt_level="O1")), which wraps every patched torch function
//   in Python; the other PyTorch recipes of these tables ran torch.amp or Apex O2
//   (Transformer-XL --amp_mode O2, GNMT, NCF and BERT SQuAD opt_level="O2"), which patch none.
std::string dle_framework(const TableRow& r, bool amp) {
  const std::string model = r.at("model");
  if (r.at("framework") == "PyTorch")
    return model == "Tacotron2/WaveGlow" && amp ? "pytorch_apex_amp" : "pytorch_eager";
  return model == "GNMT v2" || model == "Transformer-XL" ? "tensorflow_graph" : "tensorflow_xla";
}

std::vector<ValidationPoint> dle_throughput(const sim::ProfileLibrary& lib) {
  std::vector<ValidationPoint> out;
  for_each_row(embedded_table("dle_training_throughput_calibration.csv"), [&](const TableRow& r) {
    auto throughput = r.number("throughput");
    const std::string row_precision = dle_precision(r);
    const auto model = dle_workload(r, row_precision == "AMP");
    auto batch = dle_batch(r, row_precision);
    if (!model || !throughput || !batch) return;
    if (r.at("throughput_unit") == "million samples/s") *throughput *= 1e6;
    const std::string gpu = r.at("gpu");
    const std::string accelerator = gpu == "V100-16GB"   ? "v100-sxm2-16gb"
                                    : gpu == "V100-32GB" ? "v100-sxm2-32gb"
                                                         : "a100-sxm4-40gb";
    const std::string precision = row_precision == "AMP"    ? "fp16"
                                  : row_precision == "TF32" ? "tf32"
                                                            : "fp32";
    const bool amp = precision == "fp16";
    const DgxSystem dgx = dgx_system(r.at("system_heading"));
    int nodes = 1;
    int gpus = 0;
    if (const auto n = r.number("num_gpus")) {
      gpus = static_cast<int>(*n);
    } else if (const auto k = r.number("num_nodes")) {
      nodes = static_cast<int>(*k);
      gpus = nodes * dgx.gpus_per_node;
    }
    if (gpus <= 0) return;
    // Batch per GPU is the micro-batch; PyTorch's BERT tables give the accumulated one.
    int accumulation = dle_accumulation(r, amp);
    if (*batch >= 1024 && accumulation > 1) *batch /= accumulation;
    if (*batch > 1024) return;
    const std::string framework = dle_framework(r, amp);
    nlohmann::json cluster =
        single_node(accelerator, std::min(gpus, dgx.gpus_per_node), dgx.intra_link, dgx.host,
                    dgx.gpus_per_node == 16 ? "pcie3-x16" : "pcie4-x16", true);
    if (nodes > 1) {
      cluster["nodes"] = nodes;
      cluster["inter"] = {{"topology", "fat_tree"},
                          {"link", dgx.inter_link},
                          {"nics_per_node", 8},
                          {"leaf_switch_ports", 16}};
    }
    const bool bert = r.at("model") == "BERT-large";
    nlohmann::json doc = {{"name", r.at("model") + " " + r.at("system_heading")},
                          {"cluster", cluster},
                          {"model", model->model},
                          {"framework", framework},
                          {"batch_per_replica", static_cast<int>(*batch)},
                          {"precision", precision},
                          {"optimizer", model->optimizer},
                          {"gradient_clipping", model->gradient_clipping},
                          {"parallelism", {{"data", gpus}, {"grad_accum", accumulation}}},
                          {"steps", 3},
                          {"warmup_steps", 1}};
    // The Tacotron 2 / WaveGlow tables were measured in the recipe's container, nvcr.io/nvidia/
    // pytorch:20.06-py3 for the A100 rows (PyTorch/SpeechSynthesis/Tacotron2/Dockerfile at
    // 729963d, "Updating for Ampere", July 2020), whose cuDNN 8.0 is the first Ampere one, and
    // older ones (cuDNN 7) for V100. Neither runs WaveGlow's dilated convolutions on tensor
    // cores: the calibration half's A100 TF32 row (that README's line 704) reaches about 13 TFLOP/s
    // of model math, below the A100's 19.5 TFLOP/s fp32 peak, and AMP gains 1.4x over the V100's
    // AMP row where the tensor-core ratio is 2.5x. Lambda's later containers have them
    // (lambda_dp_scaling_fp32: about 45 TFLOP/s on A100), the default of Ampere's profile.
    if (r.at("model") == "Tacotron2/WaveGlow") doc["dilated_conv_tensor_cores"] = false;
    ValidationPoint p;
    p.series = r.at("model") + " " + r.at("model_variant") + " " + r.at("table_heading") + " " +
               r.at("framework") + " " + gpu + " " + row_precision + " " +
               (bert ? model->model.at("seq_len").dump() : std::string());
    p.x = gpus;
    p.gpus = gpus;
    p.label = r.at("path") + ":" + r.at("line") + " " + gpu + " x" + std::to_string(gpus) + " " +
              row_precision + " batch " + fmt(*batch);
    p.source_line = r.at("path") + ":" + r.at("line");
    p.measured = *throughput;
    simulate_row(p, doc, "DeepLearningExamples table line " + std::to_string(r.line()), lib,
                 model->units_per_sample);
    out.push_back(p);
  });
  fit::split_halves(out);
  fit::exclude_failed_runs(out);
  fit::exclude_beyond_peak(out);
  return out;
}

nlohmann::json torchgpipe_model(const std::string& name) {
  if (name == "AmoebaNet-D (18, 256)") return {{"name", "amoebanet_d"}, {"N", 18}, {"F", 256}};
  if (name == "ResNet-101") return {{"name", "resnet101"}};
  if (name == "U-Net (5, 64)") return {{"name", "unet"}, {"B", 5}, {"C", 64}};
  return nullptr;
}

// Training steps this project measured on one H200 (tests/reference_data/h200_training_steps.csv,
// scripts/measure_gpu.py): torchvision's ResNet-50 and VGG-16, Hugging Face transformers' BERT
// (sequence classification, 128 tokens) and GPT-2 (LM head, 1024 tokens) with PyTorch's SDPA
// attention, and a 784-128-64-10 MLP; synthetic inputs already on the GPU, PyTorch 2.11 eager,
// SGD with momentum (CNNs, MLP) or AdamW (transformers), fp32 with TF32 off, TF32, or bf16
// autocast (channels_last for the CNNs), on a 16-vCPU KVM guest of an Emerald Rapids Xeon.
std::vector<ValidationPoint> h200_training(const sim::ProfileLibrary& lib) {
  std::vector<ValidationPoint> out;
  for_each_row(embedded_table("h200_training_steps.csv"), [&](const TableRow& r) {
    const auto batch = r.number("batch"), v = r.number("samples_per_s");
    const std::string& model = r.at("model");
    if (!batch || !v || r.at("gpu") != "NVIDIA H200") return;
    const bool transformer = model.starts_with("bert") || model == "gpt2";
    // measure_gpu.py converts the CNNs to channels_last under bf16 autocast alone.
    const bool channels_last = r.at("precision") == "bf16" && !transformer;
    const nlohmann::json doc = {
        {"name", "h200 " + model},
        {"cluster", single_node("h200", 1, "nvlink4", "kvm-xeon-emr-16vcpu", "pcie5-x16", true)},
        {"model", model},
        {"framework", "pytorch_eager"},
        {"batch_per_replica", static_cast<int>(*batch)},
        {"precision", r.at("precision")},
        {"optimizer", transformer ? "adam" : "momentum"},
        {"fused_attention", transformer},
        {"memory_format", channels_last ? "channels_last" : "channels_first"},
        {"steps", 4},
        {"warmup_steps", 1}};
    ValidationPoint p = batch_point("h200 " + model + " " + r.at("precision"), *batch, *v);
    simulate_row(p, doc, "h200 training table line " + std::to_string(r.line()), lib);
    out.push_back(p);
  });
  fit::split_halves(out);
  return out;
}

std::vector<ValidationPoint> torchgpipe_speed(const sim::ProfileLibrary& lib) {
  std::vector<ValidationPoint> out;
  for_each_row(embedded_table("torchgpipe_speed_benchmarks.csv"), [&](const TableRow& r) {
    const nlohmann::json model = torchgpipe_model(r.at("model"));
    const auto k = r.number("n_partitions"), batch = r.number("batch_size"),
               v = r.number("throughput_samples_per_s");
    if (model.is_null() || !k || !batch || !v) return;
    const auto m = r.number("chunks_M");
    nlohmann::json doc = {{"name", r.at("model") + " " + r.at("experiment")},
                          {"cluster", "p40-x8"},
                          {"model", model},
                          {"framework", "pytorch_eager"},
                          {"batch_per_replica", static_cast<int>(*batch)},
                          {"precision", "fp32"},
                          {"optimizer", "sgd"},
                          {"parallelism",
                           {{"data", 1},
                            {"pipeline", static_cast<int>(*k)},
                            {"microbatches", m ? static_cast<int>(*m) : 1}}},
                          // torchgpipe checkpoints every micro-batch ("always") or all but the last
                          // ("except_last", its default); both are modelled as all.
                          {"recompute", !r.at("checkpoint").empty()},
                          {"steps", 3},
                          {"warmup_steps", 1}};
    if (!r.at("balance").empty() && r.at("balance").front() == '[')
      doc["parallelism"]["balance"] = nlohmann::json::parse(r.at("balance"));
    ValidationPoint p;
    p.series = r.at("model");
    p.x = static_cast<double>(r.line());
    p.label = r.at("model") + " " + r.at("experiment");
    p.measured = *v;
    simulate_row(p, doc, "torchgpipe table line " + std::to_string(r.line()), lib);
    out.push_back(p);
  });
  fit::split_halves(out);
  fit::exclude_beyond_peak(out);
  return out;
}

}  // namespace

std::optional<DeepBenchConv> deepbench_conv_layer(const TableRow& r) {
  for (const char* c : {"W", "H", "C", "N", "K", "S_filter_w", "R_filter_h", "pad_w", "pad_h",
                        "stride_w", "stride_h"}) {
    if (!r.number(c)) return std::nullopt;
  }
  const auto get = [&](const char* c) { return static_cast<std::int64_t>(*r.number(c)); };
  DeepBenchConv out;
  out.input = {get("C"), get("H"), get("W")};
  out.spec.out_channels = get("K");
  out.spec.kernel_h = get("R_filter_h");
  out.spec.kernel_w = get("S_filter_w");
  out.spec.stride_h = get("stride_h");
  out.spec.stride_w = get("stride_w");
  out.spec.pad_h = get("pad_h");
  out.spec.pad_w = get("pad_w");
  out.batch = static_cast<double>(get("N"));
  return out;
}

std::optional<std::string> deepbench_profile(const std::string& gpu) {
  const auto it = deepbench_gpus().find(gpu);
  if (it == deepbench_gpus().end()) return std::nullopt;
  return it->second.first;
}

std::vector<ReferenceTable> reference_tables() {
  const std::string deepbench =
      "baidu-research/DeepBench @da81ba7 results/train/DeepBench_NV_*.xlsx (V100, P100, GTX 1080 "
      "Ti, T4 rows; fp32 and fp16 tensor-core sheets)";
  std::vector<ReferenceTable> t{
      {"deepbench_gemm", deepbench, "kernel ms",
       [](const sim::ProfileLibrary& lib) {
         return deepbench_gemm(lib, KernelRows::deepbench_fitted);
       }},
      {"deepbench_conv", deepbench + ": forward, data-gradient and weight-gradient", "kernel ms",
       [](const sim::ProfileLibrary& lib) {
         return deepbench_conv(lib, KernelRows::deepbench_fitted);
       }},
      {"deepbench_lstm", deepbench + ": cuDNN LSTM forward, backward-data, backward-weights",
       "kernel ms",
       [](const sim::ProfileLibrary& lib) {
         return deepbench_lstm(lib, KernelRows::deepbench_fitted);
       }},
      {"deepbench_held_out_gpus",
       "baidu-research/DeepBench @da81ba7 results/train/DeepBench_NV_*.xlsx: the GPUs no value is "
       "fitted on (TITAN Xp, TITAN X Pascal, Tesla M40, GTX TITAN X; fp32 GEMM, conv and LSTM "
       "rows, run on CUDA 7.5-8.0 and cuDNN 5-6)",
       "kernel ms",
       [](const sim::ProfileLibrary& lib) {
         auto points = deepbench_gemm(lib, KernelRows::deepbench_held_out);
         for (auto* part : {&deepbench_conv, &deepbench_lstm}) {
           const auto more = (*part)(lib, KernelRows::deepbench_held_out);
           points.insert(points.end(), more.begin(), more.end());
         }
         return points;
       }},
      {"h200_kernels",
       "measured for this project on one NVIDIA H200 SXM (scripts/measure_gpu.py, PyTorch 2.11, "
       "cuBLAS/cuDNN 9.19 of CUDA 13.0): DeepBench's GEMM, conv and LSTM training shapes in fp32, "
       "TF32 and bf16, and memory-bound kernels of 2^10-2^28 elements; each time the smaller of "
       "eager and CUDA-graph timings",
       "kernel ms",
       [](const sim::ProfileLibrary& lib) {
         auto points = deepbench_gemm(lib, KernelRows::h200);
         for (auto* part : {&deepbench_conv, &deepbench_lstm}) {
           const auto more = (*part)(lib, KernelRows::h200);
           points.insert(points.end(), more.begin(), more.end());
         }
         const auto memory = h200_memory_kernels(lib);
         points.insert(points.end(), memory.begin(), memory.end());
         return points;
       }},
      {"h200_training",
       "measured for this project on one NVIDIA H200 SXM (scripts/measure_gpu.py, PyTorch 2.11 "
       "eager): ResNet-50, VGG-16, BERT-base/large, GPT-2 and an MNIST MLP at 1-4096 samples per "
       "step in fp32, TF32 and bf16 autocast",
       "samples/s", h200_training},
      {"mxnet_k80_m60_batch",
       "apache/mxnet docs/faq/perf.md, 'Training results' (MXNet 1.2, K80 and M60)", "samples/s",
       mxnet_throughput},
      {"lambda_dp_scaling_fp32",
       "lambdal/deeplearning-benchmark @aa5addb pytorch/pytorch-train-throughput-fp32.csv",
       "samples/s", lambda_scaling},
      {"lambda_dp_scaling_fp32_2021",
       "lambdal/deeplearning-benchmark @2c0af45 pytorch/pytorch-train-throughput-fp32.csv and "
       "pytorch-train-bs-fp32.csv (the edition before the 2022 re-runs: 2020-2021 runs, PyTorch "
       "1.4-1.9; V100 32GB, A100 40/80GB PCIe and SXM4, RTX A6000 on 1-8 GPUs)",
       "samples/s", lambda_scaling_2021},
      {"dle_training_throughput",
       "NVIDIA/DeepLearningExamples @729963d performance tables (ResNet-50 v1.5, BERT-large, "
       "Transformer-XL, GNMT v2, SSD300, NCF, Tacotron 2, WaveGlow)",
       "samples/s", dle_throughput},
      {"torchgpipe_speed", "kakaobrain/torchgpipe @a1b4ee2 docs/benchmarks.rst (8 x Tesla P40)",
       "samples/s", torchgpipe_speed},
  };
  add_megatron_tables(t);
  add_collective_tables(t);
  return t;
}

}  // namespace trainsim::cli
