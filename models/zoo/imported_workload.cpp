#include "models/zoo/imported_workload.hpp"

#include <algorithm>
#include <deque>
#include <string>

#include "sim/config/json_reader.hpp"
#include "sim/config/limits.hpp"

namespace trainsim::models {

namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

constexpr const char* kKindName = "trainsim_workload";
constexpr int kVersion = 1;

sim::KernelClass parse_class(sim::JsonReader& r, const std::string& key) {
  const std::string name = r.string(key);
  for (int c = 0; c < sim::kKernelClassCount; ++c) {
    const auto cls = static_cast<sim::KernelClass>(c);
    if (name == sim::kernel_class_name(cls)) return cls;
  }
  std::string known;
  for (int c = 0; c < sim::kKernelClassCount; ++c)
    known +=
        std::string(c == 0 ? "" : ", ") + sim::kernel_class_name(static_cast<sim::KernelClass>(c));
  r.fail(key, "unknown kernel class '" + name + "' (one of " + known + ")");
}

nlohmann::json kernel_json(const WorkloadKernel& k) {
  nlohmann::json j{{"name", k.name},     {"class", sim::kernel_class_name(k.cls)},
                   {"time_s", k.time_s}, {"gap_s", k.gap_s},
                   {"host_s", k.host_s}, {"stream", k.stream}};
  if (k.flops > 0) j["flops"] = k.flops;
  if (k.bytes > 0) j["bytes"] = k.bytes;
  if (k.gemm.m > 0) j["gemm"] = {k.gemm.m, k.gemm.n, k.gemm.k, k.gemm.batch};
  return j;
}

WorkloadKernel read_kernel(sim::JsonReader& r) {
  using sim::Bound;
  WorkloadKernel k;
  k.name = r.string("name");
  k.cls = parse_class(r, "class");
  k.time_s = r.number("time_s", Bound::non_negative);
  k.gap_s = r.number_or("gap_s", Bound::non_negative, 0);
  k.host_s = r.number_or("host_s", Bound::non_negative, 0);
  k.flops = r.number_or("flops", Bound::non_negative, 0);
  k.bytes = r.number_or("bytes", Bound::non_negative, 0);
  k.stream = static_cast<int>(r.integer_or("stream", 0, 0, 1 << 30));
  if (r.has("gemm")) {
    const auto g = r.integer_list("gemm", 1, std::int64_t{1} << 40);
    if (g.size() != 4)
      r.fail("gemm", "expected [m, n, k, batch], got " + std::to_string(g.size()) + " numbers");
    k.gemm = {static_cast<double>(g[0]), static_cast<double>(g[1]), static_cast<double>(g[2]),
              static_cast<double>(g[3])};
  }
  r.done();
  return k;
}

std::vector<WorkloadKernel> read_kernels(sim::JsonReader& r, const std::string& key) {
  std::vector<WorkloadKernel> out;
  if (!r.has(key)) {
    r.ignore({key.c_str()});
    return out;
  }
  for (sim::JsonReader& k : r.objects(key))
    out.push_back(read_kernel(k));
  return out;
}

constexpr ImportedTpRole kTpRoles[] = {ImportedTpRole::replicated, ImportedTpRole::column,
                                       ImportedTpRole::row, ImportedTpRole::vocab,
                                       ImportedTpRole::split};

// Megatron-LM's pattern (Shoeybi et al. 2019 Sec. 3, Fig. 3): a column-parallel linear (or
// several reading the same input: separate Q, K, V projections) opens a split region, split
// layers run inside it, a row-parallel linear closes it; a vocabulary-parallel head's logits stay
// split to the end (the vocabulary-parallel cross entropy). Checked in forward order so that a
// file marking an impossible split is refused naming the layer.
void check_tp_roles(sim::JsonReader& r, const std::vector<WorkloadLayer>& layers) {
  enum class Open { none, region, vocab_tail } open = Open::none;
  std::size_t opened_by = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const WorkloadLayer& l = layers[i];
    const std::string key = "layers[" + std::to_string(i) + "].tp";
    const std::string what = "layer '" + l.name + "' is '" + imported_tp_role_name(l.tp) + "'";
    const bool gemm = weight_gemm(l) != nullptr;
    switch (l.tp) {
      case ImportedTpRole::column:
        if (open == Open::vocab_tail)
          r.fail(key, what + " after the vocabulary-parallel head (only split layers follow it)");
        if (!gemm)
          r.fail(key, what + " but its forward has no GEMM kernel with a \"gemm\" view to split");
        if (open == Open::none) opened_by = i;
        open = Open::region;
        break;
      case ImportedTpRole::row:
        if (open != Open::region)
          r.fail(key, what +
                          " without a column-parallel layer before it (Megatron-LM pairs a "
                          "row-parallel linear with the column-parallel one that feeds it)");
        if (!gemm)
          r.fail(key, what + " but its forward has no GEMM kernel with a \"gemm\" view to split");
        open = Open::none;
        break;
      case ImportedTpRole::split:
        if (open == Open::none)
          r.fail(key, what +
                          " outside a column..row region or a vocabulary-parallel head's tail "
                          "(nothing before it is split)");
        break;
      case ImportedTpRole::vocab:
      case ImportedTpRole::replicated:
        if (open == Open::region) {
          r.fail(key, what + " inside the split region opened by column-parallel layer '" +
                          layers[opened_by].name +
                          "' (mark it 'split', or close the region "
                          "with a row-parallel layer)");
        }
        if (open == Open::vocab_tail)
          r.fail(key, what +
                          " after the vocabulary-parallel head (its logits stay split: mark "
                          "it 'split')");
        if (l.tp == ImportedTpRole::vocab && gemm) open = Open::vocab_tail;
        break;
    }
  }
  if (open == Open::region) {
    r.fail("layers[" + std::to_string(opened_by) + "].tp",
           "column-parallel layer '" + layers[opened_by].name +
               "' opens a split region no row-parallel layer closes");
  }
}

}  // namespace

const char* imported_tp_role_name(ImportedTpRole role) {
  switch (role) {
    case ImportedTpRole::replicated:
      return "replicated";
    case ImportedTpRole::column:
      return "column";
    case ImportedTpRole::row:
      return "row";
    case ImportedTpRole::vocab:
      return "vocab";
    case ImportedTpRole::split:
      return "split";
  }
  return "replicated";
}

const WorkloadKernel* weight_gemm(const WorkloadLayer& l) {
  for (const WorkloadKernel& k : l.forward) {
    if (sim::is_compute_class(k.cls) && k.gemm.m > 0 && k.gemm.n > 0 && k.gemm.k > 0 &&
        k.gemm.batch == 1)
      return &k;
  }
  return nullptr;
}

bool is_collective_kernel(std::string_view kernel_name) {
  return kernel_name.rfind("ncclKernel", 0) == 0 || kernel_name.rfind("ncclDevKernel", 0) == 0;
}

// Order matters: the first rule that matches wins (a cuDNN implicit-GEMM convolution names both
// "conv" or "fprop" and "gemm"; an embedding's backward is a scatter, its forward a gather).
sim::KernelClass guess_kernel_class(std::string_view kernel_name) {
  const std::string n = lower(kernel_name);
  using K = sim::KernelClass;
  if (contains(n, "memcpy") || contains(n, "memset")) return K::copy;
  if (contains(n, "multi_tensor_apply") || contains(n, "fused_adam") || contains(n, "fused_sgd") ||
      contains(n, "adam_") || contains(n, "_amp_"))
    return K::optimizer;
  if (contains(n, "depthwise")) return K::depthwise_conv;
  if (contains(n, "flash") || contains(n, "fmha") || contains(n, "attention") ||
      contains(n, "sdpa"))
    return K::attention;
  if (contains(n, "conv") || contains(n, "fprop") || contains(n, "dgrad") || contains(n, "wgrad") ||
      contains(n, "winograd"))
    return K::conv;
  if (contains(n, "lstm") || contains(n, "gru_") || contains(n, "rnn")) return K::recurrent;
  if (contains(n, "gemm") || contains(n, "gemv") || contains(n, "cublas") ||
      contains(n, "cutlass") || contains(n, "matmul") || contains(n, "wgmma"))
    return K::gemm;
  if (contains(n, "softmax") || contains(n, "cross_entropy") || contains(n, "nll_loss"))
    return K::softmax;
  if (contains(n, "norm") || contains(n, "welford") || contains(n, "bn_fw") || contains(n, "bn_bw"))
    return K::normalization;
  if (contains(n, "embedding_backward") || contains(n, "scatter") || contains(n, "index_add") ||
      contains(n, "indexput"))
    return K::scatter;
  if (contains(n, "embedding") || contains(n, "gather") || contains(n, "index_select") ||
      contains(n, "indexselect"))
    return K::gather;
  if (contains(n, "pool") || contains(n, "upsample")) return K::pooling;
  if (contains(n, "topk") || contains(n, "radix") || contains(n, "sort")) return K::topk;
  if (contains(n, "reduce") || contains(n, "sum_kernel")) return K::reduction;
  if (contains(n, "copy") || contains(n, "transpose")) return K::copy;
  return K::elementwise;
}

nlohmann::json workload_json(const Workload& w) {
  nlohmann::json layers = nlohmann::json::array();
  for (const WorkloadLayer& l : w.layers) {
    nlohmann::json fwd = nlohmann::json::array();
    nlohmann::json bwd = nlohmann::json::array();
    for (const auto& k : l.forward)
      fwd.push_back(kernel_json(k));
    for (const auto& k : l.backward)
      bwd.push_back(kernel_json(k));
    nlohmann::json layer{{"name", l.name},
                         {"params", l.params},
                         {"param_tensors", l.param_tensors},
                         {"output_elements", l.output_elements}};
    if (l.tp != ImportedTpRole::replicated) layer["tp"] = imported_tp_role_name(l.tp);
    if (l.heads > 0) layer["heads"] = l.heads;
    if (l.kv_heads > 0 && l.kv_heads != l.heads) layer["kv_heads"] = l.kv_heads;
    layer["forward"] = fwd;
    layer["backward"] = bwd;
    layers.push_back(std::move(layer));
  }
  nlohmann::json opt = nlohmann::json::array();
  for (const auto& k : w.optimizer)
    opt.push_back(kernel_json(k));
  nlohmann::json coll = nlohmann::json::array();
  for (const auto& c : w.collectives) {
    coll.push_back(
        {{"name", c.name}, {"time_s", c.time_s}, {"bytes", c.bytes}, {"stream", c.stream}});
  }
  return {{"kind", kKindName},
          {"version", kVersion},
          {"source", w.source},
          {"device_name", w.device_name},
          {"accelerator", w.accelerator},
          {"precision", sim::dtype_name(w.precision)},
          {"batch", static_cast<std::int64_t>(w.batch)},
          {"steps", w.steps},
          {"measured_step_s", w.measured_step_s},
          {"host_per_step_s", w.host_per_step_s},
          {"data_loader_wait_s", w.data_loader_wait_s},
          {"dispatch_gap_s", w.dispatch_gap_s},
          {"host_syncs_per_step", w.host_syncs_per_step},
          {"params", w.params},
          {"layers", layers},
          {"optimizer", opt},
          {"collectives", coll}};
}

Workload read_workload(const nlohmann::json& doc, std::shared_ptr<const sim::JsonSource> source) {
  using sim::Bound;
  sim::JsonReader r(doc, std::move(source));
  Workload w;
  r.choice("kind", {kKindName});
  w.source = r.string_or("source", "");
  w.device_name = r.string_or("device_name", "");
  w.accelerator = r.string("accelerator");
  w.precision = r.choice_enum_in("precision", sim::kStepPrecisionNames);
  w.batch = static_cast<double>(r.integer("batch", 1, sim::limits::kMaxBatchPerReplica));
  w.steps = static_cast<int>(r.integer_or("steps", 1, 1, 1 << 30));
  if (r.integer("version", 1, 1 << 30) != kVersion)
    r.fail("version", "this trainsim reads workload version " + std::to_string(kVersion));
  w.measured_step_s = r.number_or("measured_step_s", Bound::non_negative, 0);
  w.host_per_step_s = r.number_or("host_per_step_s", Bound::non_negative, 0);
  w.data_loader_wait_s = r.number_or("data_loader_wait_s", Bound::non_negative, 0);
  w.dispatch_gap_s = r.number_or("dispatch_gap_s", Bound::non_negative, 0);
  w.host_syncs_per_step = static_cast<int>(r.integer_or("host_syncs_per_step", 0, 0, 2));
  w.params = r.integer_or("params", 0, 0, std::int64_t{1} << 50);
  for (sim::JsonReader& l : r.objects("layers")) {
    WorkloadLayer layer;
    layer.name = l.string("name");
    layer.params = l.integer_or("params", 0, 0, std::int64_t{1} << 50);
    layer.param_tensors = static_cast<int>(l.integer_or("param_tensors", 0, 0, 1 << 30));
    layer.output_elements = l.number_or("output_elements", Bound::non_negative, 0);
    layer.forward = read_kernels(l, "forward");
    layer.backward = read_kernels(l, "backward");
    layer.heads = l.integer_or("heads", 0, 0, std::int64_t{1} << 30);
    layer.kv_heads = l.integer_or("kv_heads", 0, 0, std::int64_t{1} << 30);
    if (l.has("tp")) {
      const std::string role = l.choice("tp", {"replicated", "column", "row", "vocab", "split"});
      for (const ImportedTpRole t : kTpRoles) {
        if (role == imported_tp_role_name(t)) layer.tp = t;
      }
    } else {
      l.ignore({"tp"});
    }
    l.done();
    w.layers.push_back(std::move(layer));
  }
  if (w.layers.empty()) r.fail("layers", "has no layers (an imported step with no kernels)");
  check_tp_roles(r, w.layers);
  w.optimizer = read_kernels(r, "optimizer");
  if (r.has("collectives")) {
    for (sim::JsonReader& c : r.objects("collectives")) {
      WorkloadCollective col;
      col.name = c.string("name");
      col.time_s = c.number("time_s", Bound::non_negative);
      col.bytes = c.number_or("bytes", Bound::non_negative, 0);
      col.stream = static_cast<int>(c.integer_or("stream", 0, 0, 1 << 30));
      c.done();
      w.collectives.push_back(std::move(col));
    }
  } else {
    r.ignore({"collectives"});
  }
  r.done();
  return w;
}

ZooModel workload_model(const Workload& w, const sim::AcceleratorSpec& measuring) {
  ZooModel m;
  m.name = "workload";
  m.description = "imported from " + (w.source.empty() ? std::string("a trace") : w.source);
  m.input_shape = {1};
  m.input_dtype = InputDtype::fp32;
  MeasuredOrigin origin;
  origin.accelerator = measuring;
  origin.precision = w.precision;
  origin.batch = w.batch;
  origin.step_s = w.measured_step_s;
  origin.host_per_step_s = w.host_per_step_s;
  origin.host_syncs_per_step = w.host_syncs_per_step;
  // KernelSpec labels are static strings elsewhere; the measured kernels' names live here, in a
  // deque (stable addresses) every copy of the model shares.
  auto names = std::make_shared<std::deque<std::string>>();
  const auto spec = [&](const WorkloadKernel& k) {
    names->push_back(k.name);
    KernelSpec s;
    s.what = names->back().c_str();
    s.cls = k.cls;
    s.flops = k.flops / w.batch;
    s.raw_bytes = k.bytes / w.batch;
    s.gemm = k.gemm;
    s.measured_s = k.time_s;
    s.measured_gap_s = k.gap_s;
    s.measured_host_s = k.host_s;
    return s;
  };
  std::int64_t layer_params = 0;
  for (const WorkloadLayer& l : w.layers)
    layer_params += l.params;
  // A total given without per-layer counts: spread evenly over the layers that run a backward
  // pass (estimate: where the trace has no shapes, nothing says which layers hold them).
  std::int64_t trainable = 0;
  for (const WorkloadLayer& l : w.layers)
    trainable += l.backward.empty() ? 0 : 1;
  const bool spread = layer_params == 0 && w.params > 0 && trainable > 0;
  std::int64_t spread_left = w.params;
  std::int64_t spread_seen = 0;
  for (const WorkloadLayer& wl : w.layers) {
    Layer l;
    l.name = wl.name;
    l.params = wl.params;
    l.param_tensors = wl.param_tensors;
    if (spread && !wl.backward.empty()) {
      ++spread_seen;
      l.params = spread_seen == trainable ? spread_left : w.params / trainable;
      spread_left -= l.params;
    }
    if (l.params > 0 && l.param_tensors == 0) l.param_tensors = 1;
    l.output_elements = wl.output_elements;
    for (const auto& k : wl.forward) {
      l.fwd_kernels.push_back(spec(k));
      if (sim::is_compute_class(k.cls)) l.fwd_macs += k.flops / 2 / w.batch;
      l.fwd_flops += k.flops / w.batch;
    }
    for (const auto& k : wl.backward) {
      l.bwd_kernels.push_back(spec(k));
      l.bwd_input_flops += k.flops / w.batch;
    }
    m.layers.push_back(std::move(l));
    origin.tp_roles.push_back(wl.tp);
    origin.tp_heads.push_back({wl.heads, wl.kv_heads > 0 ? wl.kv_heads : wl.heads});
  }
  for (const auto& k : w.optimizer)
    origin.optimizer.push_back(spec(k));
  origin.kernel_names = std::move(names);
  m.measured = std::move(origin);
  return m;
}

}  // namespace trainsim::models
