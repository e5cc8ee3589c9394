#include "cli/import_trace.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/json_reader.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

namespace {

using models::Workload;
using models::WorkloadKernel;

constexpr double kUs = 1e-6;  // Chrome trace timestamps and durations are in microseconds
// Kineto writes timestamps in microseconds with three decimals; older versions rounded them to
// whole microseconds, so two back-to-back kernels may appear to overlap by up to 1 us.
constexpr double kOverlapToleranceUs = 1.0;
constexpr int kMaxDepth = 64;
constexpr std::size_t kDefaultSteps = 10;  // steps imported by default (the last ones)  // deeper
                                           // nesting is refused (as the scenario reader does)

// Interned strings: a trace repeats a few thousand names millions of times.
class Names {
 public:
  int id(const std::string& s) {
    const auto [it, fresh] = ids_.try_emplace(s, static_cast<int>(names_.size()));
    if (fresh) names_.push_back(s);
    return it->second;
  }
  const std::string& operator[](int id) const { return names_[static_cast<std::size_t>(id)]; }

 private:
  std::unordered_map<std::string, int> ids_;
  std::vector<std::string> names_;
};

struct DevEvent {
  double ts = 0;
  double dur = 0;
  std::int64_t stream = 0;
  std::int64_t corr = -1;
  int name = 0;
  double comm_bytes = 0;
  std::size_t index = 0;  // traceEvents[index]
  bool nccl = false;
};

struct RtEvent {
  double ts = 0;
  double dur = 0;
  std::int64_t tid = 0;
  bool sync = false;
};

struct CpuOp {
  double ts = 0;
  double dur = 0;
  std::int64_t tid = 0;
  int name = 0;
  double flops = 0;
  double bytes = 0;
  sim::GemmShape gemm;
  std::int64_t params = 0;
  int tensors = 0;
  double first_input_numel = 0;
  double lead_dim = 0;
  double table_rows = 0;      // aten::embedding: rows of its table (the vocabulary)
  std::int64_t heads = 0;     // scaled_dot_product_attention: query heads ([B, H, S, D])
  std::int64_t kv_heads = 0;  // and key heads
  int dtype = -1;             // precision of a GEMM/conv's first input, as a sim::Dtype
  bool backward = false;
  int parent = -1;  // the innermost op on the same thread that contains it
};

struct Span {
  double ts = 0;
  double dur = 0;
  std::int64_t tid = 0;
  double end() const { return ts + dur; }
};

// An nn.Module's forward as torch.profiler records it with with_stack=True or with_modules=True:
// a python_function event named "nn.Module: <class>_<instance>".
struct ModuleSpan {
  Span span;
  int name = 0;
};

// The fields of one trace event the import needs (the rest is skipped while parsing).
struct RawEvent {
  std::string ph;
  std::string cat;
  std::string name;
  bool has_name = false;
  std::optional<double> ts;
  std::optional<double> dur;
  std::int64_t tid = 0;
  std::optional<std::int64_t> stream;
  std::optional<std::int64_t> correlation;
  std::optional<double> in_msg_nelems;
  std::string comm_dtype;
  std::vector<std::vector<std::int64_t>> dims;
  std::vector<std::string> types;
};

double dtype_size(const std::string& type) {
  if (type == "float" || type == "int" || type == "unsigned int") return 4;
  if (type == "c10::Half" || type == "c10::BFloat16" || type == "short" || type == "Half" ||
      type == "BFloat16")
    return 2;
  if (type == "double" || type == "long int" || type == "long" || type == "int64_t" ||
      type == "Double" || type == "Long")
    return 8;
  if (type == "Float" || type == "float32") return 4;
  if (type == "bfloat16" || type == "float16") return 2;
  if (type == "int64") return 8;
  if (type.empty()) return 0;
  return 1;  // bool, (un)signed char, c10::Float8_*
}

// A number for messages, as short as it reads in the trace (40, 52.5, 1e+300).
std::string number_text(double v) {
  return sim::format_significant(v, 15);
}

double numel(const std::vector<std::int64_t>& d) {
  if (d.empty()) return 0;
  double n = 1;
  for (const auto x : d)
    n *= static_cast<double>(std::max<std::int64_t>(x, 0));
  return n;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// FLOPs, GEMM view, parameters and bytes of an operator from its input shapes (record_shapes).
// Estimates where the trace lacks the scalars: convolutions are priced at stride 1 ("same"
// output size) since strides are not among the input shapes.
void price_op(const RawEvent& e, CpuOp& op) {
  const auto& d = e.dims;
  const auto dim = [&](std::size_t i) -> const std::vector<std::int64_t>& {
    static const std::vector<std::int64_t> none;
    return i < d.size() ? d[i] : none;
  };
  const std::string& n = e.name;
  double elem = 4;
  if (!e.types.empty() && dtype_size(e.types[0]) > 0) elem = dtype_size(e.types[0]);
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double size = i < e.types.size() ? dtype_size(e.types[i]) : elem;
    op.bytes += numel(d[i]) * size;
  }
  double largest = 0;
  for (const auto& t : d)
    largest = std::max(largest, numel(t));
  op.bytes += largest * elem;  // the output, estimated as the largest input's size
  op.first_input_numel = numel(dim(0));
  if (!dim(0).empty()) op.lead_dim = static_cast<double>(dim(0)[0]);
  const auto set_dtype = [&] {
    if (e.types.empty()) return;
    const std::string& t = e.types[0];
    op.dtype = t == "c10::BFloat16"                 ? static_cast<int>(sim::Dtype::bf16)
               : t == "c10::Half"                   ? static_cast<int>(sim::Dtype::fp16)
               : t == "float"                       ? static_cast<int>(sim::Dtype::fp32)
               : starts_with(t, "c10::Float8_e4m3") ? static_cast<int>(sim::Dtype::fp8)
                                                    : -1;
  };
  const auto gemm = [&](double b, double m, double k, double nn) {
    if (b <= 0 || m <= 0 || k <= 0 || nn <= 0) return;
    op.flops = 2 * b * m * k * nn;
    op.gemm = {m, nn, k, b};
    set_dtype();
  };
  // A convolution's output positions (activation dims 2..) and kernel window (weight dims 2..).
  const auto spatial_and_window = [](const std::vector<std::int64_t>& act,
                                     const std::vector<std::int64_t>& weight) {
    double spatial = 1;
    double window = 1;
    for (std::size_t i = 2; i < act.size(); ++i) {
      spatial *= static_cast<double>(act[i]);
      window *= static_cast<double>(weight[i]);
    }
    return std::pair{spatial, window};
  };
  const auto& a = dim(0);
  if (n == "aten::mm" && a.size() == 2 && dim(1).size() == 2) {
    gemm(1, static_cast<double>(a[0]), static_cast<double>(a[1]), static_cast<double>(dim(1)[1]));
  } else if (n == "aten::addmm" && dim(1).size() == 2 && dim(2).size() == 2) {
    gemm(1, static_cast<double>(dim(1)[0]), static_cast<double>(dim(1)[1]),
         static_cast<double>(dim(2)[1]));
  } else if (n == "aten::bmm" && a.size() == 3 && dim(1).size() == 3) {
    gemm(static_cast<double>(a[0]), static_cast<double>(a[1]), static_cast<double>(a[2]),
         static_cast<double>(dim(1)[2]));
  } else if (n == "aten::baddbmm" && dim(1).size() == 3 && dim(2).size() == 3) {
    gemm(static_cast<double>(dim(1)[0]), static_cast<double>(dim(1)[1]),
         static_cast<double>(dim(1)[2]), static_cast<double>(dim(2)[2]));
  } else if (n == "aten::linear" && !a.empty() && dim(1).size() == 2) {
    const double in = static_cast<double>(dim(1)[1]);
    gemm(1, in > 0 ? numel(a) / in : 0, in, static_cast<double>(dim(1)[0]));
  }
  const bool conv = n == "aten::conv1d" || n == "aten::conv2d" || n == "aten::conv3d" ||
                    n == "aten::convolution" || n == "aten::_convolution" ||
                    n == "aten::cudnn_convolution";
  if (conv && a.size() >= 3 && dim(1).size() == a.size()) {
    // out[N, O, spatial] = sum over C/g x kernel window: 2 x N x O x spatial x (C/g x window).
    const auto& w = dim(1);
    const auto [spatial, window] = spatial_and_window(a, w);
    const double per_out = static_cast<double>(w[1]) * window;
    op.flops = 2 * static_cast<double>(a[0]) * static_cast<double>(w[0]) * spatial * per_out;
    op.gemm = {static_cast<double>(a[0]) * spatial, static_cast<double>(w[0]), per_out, 1};
    set_dtype();
  }
  if (n == "aten::convolution_backward" && dim(0).size() >= 3 && dim(2).size() == dim(0).size()) {
    // Input and weight gradients: two convolutions of the forward's size each.
    const auto& g = dim(0);
    const auto& w = dim(2);
    const auto [spatial, window] = spatial_and_window(g, w);
    op.flops = 4 * static_cast<double>(g[0]) * static_cast<double>(g[1]) * spatial *
               static_cast<double>(w[1]) * window;
    set_dtype();
  }
  if (starts_with(n, "aten::scaled_dot_product") || starts_with(n, "aten::_scaled_dot_product")) {
    if (dim(0).size() == 4) op.heads = dim(0)[1];
    if (dim(1).size() == 4) op.kv_heads = dim(1)[1];
  }
  // Parameters a layer's top-level op holds (weights and biases), for the gradients it reduces.
  const auto param = [&](std::size_t i) {
    if (numel(dim(i)) > 0) {
      op.params += static_cast<std::int64_t>(numel(dim(i)));
      ++op.tensors;
    }
  };
  if (n == "aten::linear" || conv) {
    param(1);
    param(2);
  } else if (n == "aten::layer_norm" || n == "aten::group_norm") {
    param(2);
    param(3);
  } else if (n == "aten::batch_norm") {
    param(1);
    param(2);
  } else if (n == "aten::embedding") {
    param(0);
    if (!dim(0).empty()) op.table_rows = static_cast<double>(dim(0)[0]);
    // embedding(weight, indices): the samples lead the indices, not the table.
    op.lead_dim = dim(1).empty() ? 0 : static_cast<double>(dim(1)[0]);
  }
}

// The SAX handler: tracks where it is in the document and fills a RawEvent per trace event.
class TraceHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;
  TraceHandler(std::string file, Names& names) : file_(std::move(file)), names_(names) {}

  std::vector<DevEvent> dev;
  std::vector<RtEvent> rt;
  std::unordered_map<std::int64_t, std::size_t> rt_by_corr;
  std::vector<CpuOp> ops;
  std::vector<Span> steps;
  std::vector<Span> optimizer;
  std::vector<Span> loader;
  std::vector<ModuleSpan> modules;
  std::vector<std::string> device_names;
  bool saw_events = false;
  std::size_t events = 0;
  // The first pass keeps only the steps; the second only what starts at or after `keep_from`
  // (the first imported step), so memory follows the imported steps, not the file.
  bool steps_only = false;
  double keep_from = -1e300;

  bool null() override { return scalar("null"); }
  bool boolean(bool v) override { return scalar(v ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return number(static_cast<double>(v), v); }
  bool number_unsigned(number_unsigned_t v) override {
    return number(static_cast<double>(v), static_cast<std::int64_t>(v));
  }
  bool number_float(number_float_t v, const string_t&) override {
    const double clamped = std::isfinite(v) ? std::clamp(v, -9e18, 9e18) : 0.0;
    return number(v, static_cast<std::int64_t>(std::llround(clamped)));
  }
  bool string(string_t& v) override {
    const std::size_t n = stack_.size();
    not_events_array(n);
    if (in_events_array(n)) scalar_in_events();
    if (in_events() && n == 3) {
      if (key_[2] == "ph") ev_.ph = v;
      if (key_[2] == "cat") ev_.cat = v;
      if (key_[2] == "name") {
        ev_.name = v;
        ev_.has_name = true;
      }
      if (key_[2] == "ts" || key_[2] == "dur") type_error(key_[2], "a number", "\"" + v + "\"");
      if (key_[2] == "tid") ev_.tid = static_cast<std::int64_t>(std::hash<std::string>{}(v));
    } else if (in_args() && n == 4) {
      if (key_[3] == "dtype") ev_.comm_dtype = v;
      if (key_[3] == "stream" || key_[3] == "correlation")
        type_error("args." + key_[3], "an integer", "\"" + v + "\"");
    } else if (in_args() && n == 5 && key_[3] == "Input type") {
      ev_.types.push_back(v);
    } else if (top_ == "deviceProperties" && n == 3 && key_[2] == "name") {
      device_names.push_back(v);
    }
    return true;
  }
  bool binary(binary_t&) override { return true; }

  bool start_object(std::size_t) override {
    not_events_array(stack_.size());
    push('o');
    if (top_ == "traceEvents" && stack_.size() == 3 && stack_[1] == 'a') {
      ev_ = RawEvent{};
      saw_events = true;
    }
    return true;
  }
  bool key(string_t& k) override {
    const std::size_t n = stack_.size();
    if (n == 1) top_ = k;
    if (n >= 1 && n <= key_.size()) key_[n - 1] = k;
    return true;
  }
  bool end_object() override {
    if (in_events() && stack_.size() == 3) {
      finish_event();
      ++events;
    }
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    const std::size_t n = stack_.size();
    if (n == 1 && top_ == "traceEvents") saw_events = true;
    if (in_events_array(n)) scalar_in_events();
    push('a');
    if (in_args() && stack_.size() >= 6 && key_[3] == "Input Dims") {
      dims_.clear();
      only_numbers_ = true;
    }
    return true;
  }
  bool end_array() override {
    if (in_args() && stack_.size() >= 6 && key_[3] == "Input Dims") {
      if (only_numbers_) ev_.dims.push_back(dims_);
      only_numbers_ = false;
    }
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception&) override {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file_, ec);
    if (!ec && position >= size) {
      throw InputError(file_, "ends at byte " + std::to_string(size) +
                                  " in the middle of the JSON document (a truncated trace?)");
    }
    std::string token = last_token.substr(0, 40);
    for (char& c : token) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    throw InputError(file_ + ": byte " + std::to_string(position),
                     "not valid JSON near '" + token + "' (a corrupt or non-JSON trace?)");
  }

  void check_top() const {
    if (!saw_events) {
      throw InputError(file_ + ": traceEvents",
                       "missing required key 'traceEvents' (not a PyTorch profiler trace; export "
                       "one with prof.export_chrome_trace)");
    }
  }

 private:
  bool in_events_array(std::size_t n) const {
    return top_ == "traceEvents" && n == 2 && stack_[1] == 'a';
  }
  bool in_events() const { return top_ == "traceEvents" && stack_.size() >= 3 && stack_[1] == 'a'; }
  bool in_args() const { return in_events() && stack_.size() >= 4 && key_[2] == "args"; }
  std::string event_where() const {
    return file_ + ": traceEvents[" + std::to_string(events) + "]";
  }

  void push(char c) {
    if (stack_.size() >= kMaxDepth) {
      throw InputError(file_,
                       "nested deeper than the limit of " + std::to_string(kMaxDepth) + " levels");
    }
    if (stack_.empty() && c != 'o') throw InputError(file_, "expected a JSON object at the top");
    stack_.push_back(c);
  }

  [[noreturn]] void type_error(const std::string& key, const std::string& want,
                               const std::string& got) const {
    std::string shown = got.size() > 60 ? got.substr(0, 57) + "..." : got;
    throw InputError(event_where() + "." + key, "expected " + want + ", got " + shown);
  }

  void scalar_in_events() const { throw InputError(event_where(), "expected an event object"); }

  bool scalar(const char* shown) {
    const std::size_t n = stack_.size();
    not_events_array(n);
    if (in_events_array(n)) scalar_in_events();
    if (in_events() && n == 3 && (key_[2] == "ts" || key_[2] == "dur"))
      type_error(key_[2], "a number", shown);
    return true;
  }

  void not_events_array(std::size_t n) const {
    if (top_ == "traceEvents" && n == 1)
      throw InputError(file_ + ": traceEvents", "expected an array of events");
  }

  bool number(double v, std::int64_t i) {
    const std::size_t n = stack_.size();
    not_events_array(n);
    if (in_events_array(n)) scalar_in_events();
    if (in_events() && n == 3) {
      if (key_[2] == "ts" || key_[2] == "dur") {
        if (!std::isfinite(v) || v < 0 || v > 1e15) {
          type_error(key_[2], "a finite non-negative time in microseconds", number_text(v));
        }
        (key_[2] == "ts" ? ev_.ts : ev_.dur) = v;
      }
      if (key_[2] == "tid") ev_.tid = i;
    } else if (in_args() && n == 4) {
      if (key_[3] == "stream") ev_.stream = i;
      if (key_[3] == "correlation") ev_.correlation = i;
      // A collective's size: the larger of its input and output (an all-gather's output, a
      // reduce-scatter's input).
      if (key_[3] == "In msg nelems" || key_[3] == "Out msg nelems")
        ev_.in_msg_nelems = std::max(ev_.in_msg_nelems.value_or(0.0), v);
    } else if (in_args() && n >= 6 && key_[3] == "Input Dims") {
      dims_.push_back(i);
    }
    return true;
  }

  void require(bool present, const char* key) const {
    if (!present) {
      throw InputError(
          event_where(),
          std::string("missing required key '") + key + "' in a '" + ev_.cat + "' event" +
              (ev_.has_name ? " named '" + ev_.name.substr(0, 60) + "'" : std::string()));
    }
  }

  void finish_event() {
    if (ev_.ph != "X") return;  // flows (ac2g), metadata, counters, instants
    const std::string& cat = ev_.cat;
    const bool device = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
                        cat == "Kernel" || cat == "Memcpy" || cat == "Memset";
    const bool runtime = cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime";
    const bool cpu = cat == "cpu_op" || cat == "user_annotation" || cat == "Operator" ||
                     cat == "gpu_user_annotation";
    if (!device && !runtime && !cpu && cat != "python_function") return;
    if (cat == "gpu_user_annotation") return;  // the device-side copy of a CPU annotation
    if (cat == "python_function") {
      // Module spans (tensor-parallel roles); other Python frames are skipped.
      if (!steps_only && ev_.ts && ev_.dur && *ev_.ts >= keep_from &&
          starts_with(ev_.name, "nn.Module: "))
        modules.push_back({{*ev_.ts, *ev_.dur, ev_.tid}, names_.id(ev_.name.substr(11))});
      return;
    }
    require(ev_.has_name, "name");
    require(ev_.ts.has_value(), "ts");
    require(ev_.dur.has_value(), "dur");
    if (device && (cat == "kernel" || cat == "Kernel"))
      require(ev_.stream.has_value(), "args.stream");
    const bool step = starts_with(ev_.name, "ProfilerStep#");
    if (steps_only) {
      if (step && cpu) steps.push_back({*ev_.ts, *ev_.dur, ev_.tid});
      return;
    }
    if (*ev_.ts < keep_from || step) return;
    if (device) {
      DevEvent d;
      d.ts = *ev_.ts;
      d.dur = *ev_.dur;
      d.stream = ev_.stream.value_or(0);
      d.corr = ev_.correlation.value_or(-1);
      d.name = names_.id(cat == "gpu_memcpy"   ? "Memcpy " + ev_.name
                         : cat == "gpu_memset" ? "Memset " + ev_.name
                                               : ev_.name);
      d.nccl = models::is_collective_kernel(ev_.name);
      d.index = events;
      if (d.nccl && ev_.in_msg_nelems) {
        const double size = dtype_size(ev_.comm_dtype);
        d.comm_bytes = *ev_.in_msg_nelems * (size > 0 ? size : 4);
      }
      dev.push_back(d);
      return;
    }
    if (runtime) {
      const bool sync = ev_.name.find("Synchronize") != std::string::npos ||
                        ev_.name == "cudaMemcpy" || ev_.name == "hipMemcpy";
      if (!ev_.correlation && !sync) return;
      rt.push_back({*ev_.ts, *ev_.dur, ev_.tid, sync});
      if (ev_.correlation) rt_by_corr[*ev_.correlation] = rt.size() - 1;
      return;
    }
    const Span span{*ev_.ts, *ev_.dur, ev_.tid};
    if (starts_with(ev_.name, "Optimizer.step#")) {
      optimizer.push_back(span);
    } else if (starts_with(ev_.name, "enumerate(DataLoader)#")) {
      loader.push_back(span);
    } else if (cat == "cpu_op" || cat == "Operator") {
      CpuOp op;
      op.ts = span.ts;
      op.dur = span.dur;
      op.tid = span.tid;
      op.name = names_.id(ev_.name);
      op.backward = starts_with(ev_.name, "autograd::engine::evaluate_function");
      price_op(ev_, op);
      ops.push_back(op);
    }
  }

  std::string file_;
  Names& names_;
  std::vector<char> stack_;
  std::array<std::string, 4> key_;
  std::string top_;
  RawEvent ev_;
  std::vector<std::int64_t> dims_;
  bool only_numbers_ = false;
};

// A kernel of one step, in launch order, with what the analysis found about it.
struct StepKernel {
  const DevEvent* k = nullptr;
  double launch_begin = 0;
  double launch_end = 0;
  bool has_launch = false;
  std::int64_t tid = 0;
  int outer = -1;     // outermost cpu op containing the launch
  int flops_op = -1;  // innermost op with FLOPs
  int bytes_op = -1;  // innermost op with bytes
  bool backward = false;
  bool optimizer = false;
};

enum class Phase { forward, backward, tail };

struct StepResult {
  std::vector<StepKernel> kernels;  // the compute stream's (NCCL excluded), in launch order
  std::vector<Phase> phase;
  std::vector<WorkloadKernel> measured;
  std::vector<models::WorkloadCollective> collectives;
  double host_per_step_s = 0;
  double loader_s = 0;
  double dispatch_gap_s = 0;
  double dur_s = 0;
  bool sync_before_optimizer = false;
  bool sync_at_end = false;
};

class Analysis {
 public:
  Analysis(const std::string& file, TraceHandler& h, Names& names)
      : file_(file), h_(h), names_(names) {
    std::sort(h_.steps.begin(), h_.steps.end(), [](auto& a, auto& b) { return a.ts < b.ts; });
    // Ops per thread, sorted, each with its innermost enclosing op.
    std::stable_sort(h_.ops.begin(), h_.ops.end(), [](const CpuOp& a, const CpuOp& b) {
      if (a.tid != b.tid) return a.tid < b.tid;
      if (a.ts != b.ts) return a.ts < b.ts;
      return a.dur > b.dur;  // the enclosing op first
    });
    std::vector<int> open;
    for (std::size_t i = 0; i < h_.ops.size(); ++i) {
      CpuOp& op = h_.ops[i];
      if (i > 0 && h_.ops[i - 1].tid != op.tid) open.clear();
      while (!open.empty()) {
        const CpuOp& top = h_.ops[static_cast<std::size_t>(open.back())];
        if (op.ts < top.ts + top.dur) break;
        open.pop_back();
      }
      op.parent = open.empty() ? -1 : open.back();
      open.push_back(static_cast<int>(i));
    }
    check_overlaps();
    // Each device event's previous end on the one stream the simulator serialises them on.
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < h_.dev.size(); ++i) {
      if (!h_.dev[i].nccl) order.push_back(i);
    }
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return h_.dev[a].ts < h_.dev[b].ts; });
    prev_end_.assign(h_.dev.size(), -1e300);
    double end = -1e300;
    for (const std::size_t i : order) {
      prev_end_[i] = end;
      end = std::max(end, h_.dev[i].ts + h_.dev[i].dur);
    }
  }

  // The innermost op on thread `tid` that contains time `t`, or -1.
  int innermost(std::int64_t tid, double t) const {
    const auto cmp = [](const CpuOp& op, std::pair<std::int64_t, double> key) {
      return op.tid < key.first || (op.tid == key.first && op.ts <= key.second);
    };
    auto it = std::lower_bound(h_.ops.begin(), h_.ops.end(), std::make_pair(tid, t), cmp);
    if (it == h_.ops.begin()) return -1;
    int i = static_cast<int>(std::distance(h_.ops.begin(), it)) - 1;
    while (i >= 0) {
      const CpuOp& op = h_.ops[static_cast<std::size_t>(i)];
      if (op.tid != tid) return -1;
      if (t <= op.ts + op.dur) return i;
      i = op.parent;
    }
    return -1;
  }

  StepResult step(std::size_t s) const {
    const Span& w = h_.steps[s];
    const double t1 = s + 1 < h_.steps.size() ? h_.steps[s + 1].ts : w.end();
    StepResult r;
    r.dur_s = w.dur * kUs;
    std::vector<StepKernel> all;
    for (const DevEvent& k : h_.dev) {
      StepKernel sk;
      sk.k = &k;
      const auto it = k.corr >= 0 ? h_.rt_by_corr.find(k.corr) : h_.rt_by_corr.end();
      double when = k.ts;
      if (it != h_.rt_by_corr.end()) {
        const RtEvent& call = h_.rt[it->second];
        sk.has_launch = true;
        sk.launch_begin = call.ts;
        sk.launch_end = call.ts + call.dur;
        sk.tid = call.tid;
        when = call.ts;
      } else if (k.corr >= 0 && !h_.rt_by_corr.empty()) {
        continue;  // launched before the first imported step (its launch was not kept)
      }
      if (when < w.ts || when >= t1) continue;
      all.push_back(sk);
    }
    std::stable_sort(all.begin(), all.end(), [](const StepKernel& a, const StepKernel& b) {
      const double ta = a.has_launch ? a.launch_begin : a.k->ts;
      const double tb = b.has_launch ? b.launch_begin : b.k->ts;
      return ta < tb;
    });
    for (StepKernel& sk : all) {
      const double t = sk.has_launch ? sk.launch_begin : sk.k->ts;
      for (const Span& o : h_.optimizer) {
        if (t >= o.ts && t <= o.end()) sk.optimizer = true;
      }
      if (sk.has_launch) {
        int i = innermost(sk.tid, t);
        while (i >= 0) {
          const CpuOp& op = h_.ops[static_cast<std::size_t>(i)];
          if (sk.flops_op < 0 && op.flops > 0) sk.flops_op = i;
          if (sk.bytes_op < 0 && op.bytes > 0) sk.bytes_op = i;
          sk.outer = i;
          i = op.parent;
        }
        if (sk.outer >= 0) sk.backward = h_.ops[static_cast<std::size_t>(sk.outer)].backward;
        if (sk.tid != w.tid) sk.backward = true;  // the autograd engine's device thread
      }
      if (sk.k->nccl) {
        r.collectives.push_back({names_[sk.k->name], sk.k->dur * kUs, sk.k->comm_bytes,
                                 static_cast<int>(sk.k->stream)});
      } else {
        r.kernels.push_back(sk);
      }
    }
    // Positional phases: forward up to the first backward kernel, backward up to the first
    // optimizer kernel, then the step's tail (optimizer and what follows it).
    Phase p = Phase::forward;
    for (const StepKernel& sk : r.kernels) {
      if (sk.optimizer) p = Phase::tail;
      if (sk.backward && p == Phase::forward) p = Phase::backward;
      r.phase.push_back(p);
    }
    // FLOPs and bytes of an op are shared by the kernels it launched.
    std::unordered_map<int, int> flops_count;
    std::unordered_map<int, int> bytes_count;
    for (const StepKernel& sk : r.kernels) {
      const auto cls = models::guess_kernel_class(names_[sk.k->name]);
      if (sk.flops_op >= 0 && sim::is_compute_class(cls)) ++flops_count[sk.flops_op];
      if (sk.bytes_op >= 0) ++bytes_count[sk.bytes_op];
    }
    // Host syncs inside the window, for the host times and the sync points.
    std::vector<const RtEvent*> syncs;
    for (const RtEvent& e : h_.rt) {
      if (e.sync && e.ts >= w.ts && e.ts < t1) syncs.push_back(&e);
    }
    const auto sync_time = [&](double a, double b) {
      double t = 0;
      for (const RtEvent* e : syncs) {
        if (e->ts >= a && e->ts < b) t += e->dur;
      }
      return t;
    };
    double host_sum = 0;
    double prev_launch_end = 0;
    bool first = true;
    for (std::size_t i = 0; i < r.kernels.size(); ++i) {
      const StepKernel& sk = r.kernels[i];
      const DevEvent& k = *sk.k;
      WorkloadKernel m;
      m.name = names_[k.name];
      m.cls = models::guess_kernel_class(m.name);
      if (sk.optimizer && m.cls == sim::KernelClass::elementwise)
        m.cls = sim::KernelClass::optimizer;
      m.time_s = k.dur * kUs;
      m.stream = static_cast<int>(k.stream);
      const std::size_t idx = static_cast<std::size_t>(&k - h_.dev.data());
      const double prev_end = prev_end_[idx];
      const double ready = sk.has_launch ? std::max(prev_end, sk.launch_end) : prev_end;
      m.gap_s = std::max(0.0, k.ts - ready) * kUs;
      if (sk.has_launch && sk.launch_end > prev_end && prev_end > -1e299)
        r.dispatch_gap_s += std::max(0.0, std::min(k.ts, sk.launch_end) - prev_end) * kUs;
      if (sk.has_launch) {
        const double from = first ? sk.launch_begin : prev_launch_end;
        m.host_s = std::max(0.0, sk.launch_end - from - sync_time(from, sk.launch_end)) * kUs;
        prev_launch_end = sk.launch_end;
        first = false;
      }
      host_sum += m.host_s;
      if (sk.flops_op >= 0 && sim::is_compute_class(m.cls)) {
        const CpuOp& op = h_.ops[static_cast<std::size_t>(sk.flops_op)];
        m.flops = op.flops / flops_count[sk.flops_op];
        if (flops_count[sk.flops_op] == 1) m.gemm = op.gemm;
      }
      if (sk.bytes_op >= 0) {
        m.bytes = h_.ops[static_cast<std::size_t>(sk.bytes_op)].bytes / bytes_count[sk.bytes_op];
      }
      r.measured.push_back(m);
    }
    double all_syncs = 0;
    for (const RtEvent* e : syncs)
      all_syncs += e->dur;
    r.host_per_step_s = std::max(0.0, (t1 - w.ts) * kUs - host_sum - all_syncs * kUs);
    for (const Span& l : h_.loader) {
      if (l.ts >= w.ts && l.ts < t1) r.loader_s += l.dur * kUs;
    }
    // Where the host waited: between the last backward launch and the first optimizer launch,
    // and after the last launch.
    double last_bwd = w.ts;
    double first_opt = t1;
    double last_launch = w.ts;
    for (std::size_t i = 0; i < r.kernels.size(); ++i) {
      if (!r.kernels[i].has_launch) continue;
      if (r.phase[i] != Phase::tail) last_bwd = r.kernels[i].launch_end;
      if (r.phase[i] == Phase::tail) first_opt = std::min(first_opt, r.kernels[i].launch_begin);
      last_launch = std::max(last_launch, r.kernels[i].launch_end);
    }
    for (const RtEvent* e : syncs) {
      if (e->ts >= last_bwd && e->ts < first_opt && first_opt < t1) r.sync_before_optimizer = true;
      if (e->ts >= last_launch) r.sync_at_end = true;
    }
    return r;
  }

  // The device's period: the spacing of the imported steps' first kernels (one step: its first
  // kernel's start to its last kernel's end).
  double device_period_s(std::size_t first, std::size_t last) const {
    const auto span = [&](std::size_t s) {
      const double t0 = h_.steps[s].ts;
      const double t1 = s + 1 < h_.steps.size() ? h_.steps[s + 1].ts : h_.steps[s].end();
      std::pair<double, double> out{1e300, -1e300};
      for (const DevEvent& k : h_.dev) {
        const auto it = k.corr >= 0 ? h_.rt_by_corr.find(k.corr) : h_.rt_by_corr.end();
        if (it == h_.rt_by_corr.end() && k.corr >= 0 && !h_.rt_by_corr.empty()) continue;
        const double when = it != h_.rt_by_corr.end() ? h_.rt[it->second].ts : k.ts;
        if (when < t0 || when >= t1) continue;
        out.first = std::min(out.first, k.ts);
        out.second = std::max(out.second, k.ts + k.dur);
      }
      return out;
    };
    if (first == last) {
      const auto one = span(first);
      return one.second > one.first ? (one.second - one.first) * kUs : 0;
    }
    const double a = span(first).first;
    const double b = span(last).first;
    return b > a && a < 1e299 ? (b - a) * kUs / static_cast<double>(last - first) : 0;
  }

  const CpuOp& op(int i) const { return h_.ops[static_cast<std::size_t>(i)]; }
  const std::string& name(int id) const { return names_[id]; }

 private:
  void check_overlaps() const {
    std::vector<std::size_t> order(h_.dev.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const DevEvent& x = h_.dev[a];
      const DevEvent& y = h_.dev[b];
      return x.stream != y.stream ? x.stream < y.stream : x.ts < y.ts;
    });
    for (std::size_t j = 1; j < order.size(); ++j) {
      const DevEvent& prev = h_.dev[order[j - 1]];
      const DevEvent& cur = h_.dev[order[j]];
      if (cur.stream != prev.stream) continue;
      if (cur.ts + kOverlapToleranceUs < prev.ts + prev.dur) {
        throw InputError(
            file_ + ": traceEvents[" + std::to_string(cur.index) + "].ts",
            "value " + number_text(cur.ts) + ": kernel '" + names_[cur.name].substr(0, 60) +
                "' starts on stream " + std::to_string(cur.stream) + " before kernel '" +
                names_[prev.name].substr(0, 60) + "' (traceEvents[" + std::to_string(prev.index) +
                "]) ends at " + number_text(prev.ts + prev.dur) +
                " (overlapping kernels on one stream: a corrupt trace)");
      }
    }
  }

  std::string file_;
  TraceHandler& h_;
  Names& names_;
  std::vector<double> prev_end_;
};

bool same_sequence(const StepResult& a, const StepResult& b) {
  if (a.measured.size() != b.measured.size()) return false;
  for (std::size_t i = 0; i < a.measured.size(); ++i) {
    if (a.measured[i].name != b.measured[i].name || a.phase[i] != b.phase[i]) return false;
  }
  return true;
}

std::string lower_alnum(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c >= 'A' && c <= 'Z')
      out += static_cast<char>(c - 'A' + 'a');
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
      out += c;
    else
      out += ' ';
  }
  return " " + out + " ";
}

// What a module's class name says it is, for Megatron-LM's split (case-insensitive): attention
// ("attention", "attn": GPT2Attention, LlamaAttention, BertAttention, ...) or an MLP ("mlp",
// "feedforward", "feed_forward", "ffn": GPT2MLP, LlamaMLP, ...).
enum class BlockKind { none, attention, mlp };

BlockKind block_kind(const std::string& module_class) {
  const std::string n = lower_alnum(module_class);
  const auto has = [&](const char* part) { return n.find(part) != std::string::npos; };
  if (has("attention") || has("attn")) return BlockKind::attention;
  if (has("mlp") || has("feedforward") || has("feed forward") || has("ffn")) return BlockKind::mlp;
  return BlockKind::none;
}

// Tensor-parallel roles from the trace's module spans (README "What the import reads"): inside
// the outermost attention or MLP module holding a layer, the module's linear layers (a forward
// GEMM with a single-matrix view) are column-parallel but the last, which is row-parallel, and
// the layers between the first column and the row layer are split (attention core, activation);
// the embedding with the largest table is vocabulary-parallel, and so is the last linear outside
// those modules whose output features are that table's rows (the LM head), the layers after it
// split (the vocabulary-parallel loss). Without module spans every layer stays replicated.
void assign_tp_roles(models::Workload& w, const std::vector<int>& outer, const Analysis& a,
                     const std::vector<ModuleSpan>& modules) {
  if (modules.empty()) return;
  const std::size_t n = w.layers.size();
  std::vector<int> block(n, -1);
  for (std::size_t i = 0; i < n && i < outer.size(); ++i) {
    if (outer[i] < 0) continue;
    const CpuOp& op = a.op(outer[i]);
    double widest = -1;
    for (std::size_t m = 0; m < modules.size(); ++m) {
      const Span& s = modules[m].span;
      if (s.tid != op.tid || op.ts < s.ts || op.ts > s.end() || s.dur <= widest) continue;
      if (block_kind(a.name(modules[m].name)) == BlockKind::none) continue;
      widest = s.dur;
      block[i] = static_cast<int>(m);
    }
  }
  using models::ImportedTpRole;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && block[j] == block[i])
      ++j;
    if (block[i] >= 0) {
      std::vector<std::size_t> linears;
      for (std::size_t k = i; k < j; ++k) {
        if (models::weight_gemm(w.layers[k]) != nullptr) linears.push_back(k);
      }
      if (linears.size() >= 2) {
        for (std::size_t k = linears.front(); k < linears.back(); ++k) {
          w.layers[k].tp = models::weight_gemm(w.layers[k]) != nullptr ? ImportedTpRole::column
                                                                       : ImportedTpRole::split;
        }
        w.layers[linears.back()].tp = ImportedTpRole::row;
      }
    }
    i = j;
  }
  double vocab = 0;
  for (std::size_t i = 0; i < n && i < outer.size(); ++i) {
    if (outer[i] >= 0) vocab = std::max(vocab, a.op(outer[i]).table_rows);
  }
  for (std::size_t i = 0; i < n && i < outer.size(); ++i) {
    if (outer[i] >= 0 && w.layers[i].tp == ImportedTpRole::split) {
      w.layers[i].heads = a.op(outer[i]).heads;
      w.layers[i].kv_heads = a.op(outer[i]).kv_heads;
    }
  }
  if (vocab <= 0) return;
  for (std::size_t i = 0; i < n && i < outer.size(); ++i) {
    if (outer[i] >= 0 && a.op(outer[i]).table_rows == vocab && w.layers[i].output_elements > 0)
      w.layers[i].tp = ImportedTpRole::vocab;
  }
  for (std::size_t i = n; i-- > 0;) {
    const models::WorkloadKernel* g = models::weight_gemm(w.layers[i]);
    if (block[i] >= 0 || w.layers[i].tp != ImportedTpRole::replicated) break;
    if (g == nullptr || g->gemm.n != vocab) continue;
    w.layers[i].tp = ImportedTpRole::vocab;
    for (std::size_t k = i + 1; k < n; ++k)
      w.layers[k].tp = ImportedTpRole::split;
    break;
  }
}

}  // namespace

std::string accelerator_for_device(const std::string& device_name) {
  const std::string n = lower_alnum(device_name);
  const auto has = [&](const char* part) { return n.find(part) != std::string::npos; };
  // CUDA device names (cudaDeviceProp::name) as NVIDIA and AMD drivers report them.
  if (has(" h200")) return "h200";
  if (has(" h100")) return has("pcie") ? "h100-pcie" : "h100-sxm5";
  if (has(" b200")) return "b200";
  if (has(" a100")) {
    const bool pcie = has("pcie");
    const bool big = has("80gb") || has(" 80 ");
    return std::string(pcie ? "a100-pcie-" : "a100-sxm4-") + (big ? "80gb" : "40gb");
  }
  if (has(" v100")) return has("32gb") ? "v100-sxm2-32gb" : "v100-sxm2-16gb";
  if (has(" l40s ")) return "l40s";
  if (has(" l4 ")) return "l4";
  if (has(" a40 ")) return "a40";
  if (has(" a10 ")) return "a10";
  if (has(" t4 ")) return "t4";
  if (has(" p100")) return "p100-sxm2-16gb";
  if (has(" p40 ")) return "p40";
  if (has("rtx 4090")) return "rtx-4090";
  if (has("rtx 3090")) return "rtx-3090";
  if (has("rtx a6000")) return "rtx-a6000";
  if (has("rtx 6000 ada")) return "rtx-6000-ada";
  if (has("quadro rtx 8000")) return "quadro-rtx-8000";
  if (has("mi300x")) return "mi300x";
  if (has("mi250x")) return "mi250x-gcd";
  return "";
}

Workload import_kineto_trace(const std::string& path, const ImportOptions& options,
                             const sim::ProfileLibrary& profiles) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path, "no such trace file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "is a folder, not a trace");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot be opened for reading");
  if (in.peek() == 0x1f) {
    throw InputError(path, "is gzip-compressed (a .json.gz trace): gunzip it first");
  }
  Names names;
  TraceHandler scan(path, names);
  scan.steps_only = true;
  nlohmann::json::sax_parse(in, &scan, nlohmann::json::input_format_t::json, true, true);
  scan.check_top();
  if (scan.steps.empty()) {
    throw InputError(path + ": traceEvents",
                     "no step found: no 'ProfilerStep#N' annotation among " +
                         std::to_string(scan.events) +
                         " events (call prof.step() once per training step inside "
                         "torch.profiler.profile)");
  }
  std::sort(scan.steps.begin(), scan.steps.end(),
            [](const Span& x, const Span& y) { return x.ts < y.ts; });
  const std::size_t count = scan.steps.size();
  // Default: all steps but the first (it warms up: autotuning, allocator growth), at most the
  // last kDefaultSteps.
  std::size_t take = count > 1 ? std::min<std::size_t>(count - 1, kDefaultSteps) : 1;
  if (options.steps) {
    if (static_cast<std::size_t>(*options.steps) > count) {
      throw InputError("--steps", "value " + std::to_string(*options.steps) + ": the trace " +
                                      path + " has only " + std::to_string(count) + " steps");
    }
    take = static_cast<std::size_t>(*options.steps);
  }
  const std::size_t first = count - take;
  TraceHandler h(path, names);
  h.keep_from = scan.steps[first].ts;
  in.clear();
  in.seekg(0);
  nlohmann::json::sax_parse(in, &h, nlohmann::json::input_format_t::json, true, true);
  h.steps = scan.steps;
  Analysis a(path, h, names);
  const StepResult ref = a.step(count - 1);
  if (ref.measured.empty()) {
    throw InputError(path + ": traceEvents",
                     "step " + std::to_string(count) +
                         " (the last ProfilerStep) launched no device kernels (profile with "
                         "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])");
  }
  std::vector<StepResult> used;
  for (std::size_t s = first; s < count; ++s) {
    StepResult r = s + 1 == count ? ref : a.step(s);
    if (same_sequence(r, ref)) used.push_back(std::move(r));
  }
  const double n = static_cast<double>(used.size());
  Workload w;
  w.source = std::filesystem::path(path).filename().string();
  w.steps = static_cast<int>(used.size());
  std::vector<WorkloadKernel> mean = ref.measured;
  for (std::size_t i = 0; i < mean.size(); ++i) {
    double t = 0;
    double g = 0;
    double hs = 0;
    for (const StepResult& r : used) {
      t += r.measured[i].time_s;
      g += r.measured[i].gap_s;
      hs += r.measured[i].host_s;
    }
    mean[i].time_s = t / n;
    mean[i].gap_s = g / n;
    mean[i].host_s = hs / n;
  }
  double step_dur = 0;
  for (const StepResult& r : used) {
    w.host_per_step_s += r.host_per_step_s / n;
    w.data_loader_wait_s += r.loader_s / n;
    w.dispatch_gap_s += r.dispatch_gap_s / n;
    step_dur += r.dur_s / n;
  }
  // The step as the host saw it (its ProfilerStep span) or as the device ran it, whichever is
  // longer: a host running ahead of the device ends its spans early.
  w.measured_step_s = std::max(step_dur, a.device_period_s(first, count - 1));
  w.host_syncs_per_step = ref.sync_at_end ? 2 : ref.sync_before_optimizer ? 1 : 0;
  w.collectives = ref.collectives;

  // Layers: forward groups by their outermost operator; backward groups likewise, paired with
  // the forward layers in reverse order (spread evenly when the counts differ: estimate).
  struct Group {
    int outer = -1;
    std::vector<std::size_t> kernels;
  };
  std::vector<Group> fwd;
  std::vector<Group> bwd;
  for (std::size_t i = 0; i < mean.size(); ++i) {
    if (ref.phase[i] == Phase::tail) {
      w.optimizer.push_back(mean[i]);
      continue;
    }
    auto& groups = ref.phase[i] == Phase::forward ? fwd : bwd;
    const int outer = ref.kernels[i].outer;
    if (groups.empty() || outer < 0 || groups.back().outer != outer) groups.push_back({outer, {}});
    groups.back().kernels.push_back(i);
  }
  if (fwd.empty()) std::swap(fwd, bwd);
  std::map<std::string, int> seen;
  for (const Group& g : fwd) {
    models::WorkloadLayer l;
    const std::string base = g.outer >= 0 ? a.name(a.op(g.outer).name) : mean[g.kernels[0]].name;
    l.name = base.substr(0, 80) + "#" + std::to_string(seen[base]++);
    if (g.outer >= 0) {
      l.params = a.op(g.outer).params;
      l.param_tensors = a.op(g.outer).tensors;
    }
    for (const std::size_t i : g.kernels)
      l.forward.push_back(mean[i]);
    w.layers.push_back(std::move(l));
  }
  const std::size_t nf = w.layers.size();
  for (std::size_t j = 0; j < bwd.size(); ++j) {
    const std::size_t layer = (bwd.size() - 1 - j) * nf / bwd.size();
    for (const std::size_t i : bwd[j].kernels)
      w.layers[layer].backward.push_back(mean[i]);
  }
  // Batch: given, or the leading dimension of the first forward operator's first input.
  w.batch = 1;
  if (options.batch) {
    w.batch = *options.batch;
  } else if (!fwd.empty() && fwd[0].outer >= 0 && a.op(fwd[0].outer).lead_dim >= 1 &&
             a.op(fwd[0].outer).lead_dim <= static_cast<double>(sim::limits::kMaxBatchPerReplica)) {
    w.batch = a.op(fwd[0].outer).lead_dim;
  }
  for (std::size_t i = 0; i < fwd.size(); ++i) {
    if (i + 1 < fwd.size() && fwd[i + 1].outer >= 0)
      w.layers[i].output_elements = a.op(fwd[i + 1].outer).first_input_numel / w.batch;
  }
  std::vector<int> outer;
  for (const Group& g : fwd)
    outer.push_back(g.outer);
  assign_tp_roles(w, outer, a, h.modules);
  // Precision: given, or the GEMMs' and convolutions' input type (most kernels win).
  std::array<int, 8> votes{};
  for (const StepKernel& sk : ref.kernels) {
    if (sk.flops_op >= 0 && a.op(sk.flops_op).dtype >= 0)
      ++votes[static_cast<std::size_t>(a.op(sk.flops_op).dtype)];
  }
  w.precision = static_cast<sim::Dtype>(
      std::distance(votes.begin(), std::max_element(votes.begin(), votes.end())));
  if (votes[static_cast<std::size_t>(w.precision)] == 0) w.precision = sim::Dtype::fp32;
  if (options.precision) w.precision = *options.precision;
  // The measuring device.
  w.device_name = h.device_names.empty() ? std::string() : h.device_names.front();
  if (options.accelerator) {
    (void)profiles.accelerator(*options.accelerator, "--accelerator");
    w.accelerator = *options.accelerator;
  } else {
    w.accelerator = accelerator_for_device(w.device_name);
    if (w.accelerator.empty()) {
      throw InputError(path + ": deviceProperties[0].name",
                       (w.device_name.empty() ? std::string("missing")
                                              : "value '" + w.device_name.substr(0, 60) + "'") +
                           ": no accelerator profile known for the measuring device (name one "
                           "with --accelerator, see 'trainsim profiles list')");
    }
  }
  return w;
}

}  // namespace trainsim::cli
