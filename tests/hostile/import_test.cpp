// Hostile traces for `trainsim import` and hostile workload files for "model": {"workload": ...}:
// each exits 2 with one line naming the file, the event or key, and the value.
#include "hostile/hostile_support.hpp"

using trainsim::test::deep_object;

namespace {

// A valid one-step trace: two kernels on stream 7; `second` replaces the second kernel's event
// and `extra` is spliced in as more events.
std::string trace(const std::string& second =
                      R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7,
                          "ts": 52, "dur": 10, "args": {"stream": 7, "correlation": 2}})",
                  const std::string& device = "NVIDIA H100 80GB HBM3",
                  const std::string& extra = "") {
  return R"({"deviceProperties": [{"id": 0, "name": ")" + device + R"("}], "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 4, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 30, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 4, "args": {"correlation": 2}},
)" + second +
         extra + "\n]}\n";
}

const std::string kImport = "import";

}  // namespace

HOSTILE("import: a valid one-step trace imports", {kImport, "@/t.json", "--out", "@/w.json"}, 0,
        {"imported 1 step of @/t.json", "h100-sxm5", "wrote @/w.json"}, {{"t.json", trace()}})
HOSTILE("import: a truncated trace names the file and where it ends",
        {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: ends at byte 300 in the middle of the JSON document (a truncated trace?)"},
        {{"t.json", trace().substr(0, 300)}})
HOSTILE("import: text that is not JSON", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: byte 1: not valid JSON near 'h'"}, {{"t.json", "hello"}})
HOSTILE("import: a gzip-compressed trace", {kImport, "@/t.json.gz", "--out", "@/w.json"}, 2,
        {"@/t.json.gz: is gzip-compressed"}, {{"t.json.gz", std::string("\x1f\x8b\x08\x00", 4)}})
HOSTILE("import: a missing trace file", {kImport, "@/none.json", "--out", "@/w.json"}, 2,
        {"@/none.json: no such trace file"})
HOSTILE("import: a folder as the trace", {kImport, "@/", "--out", "@/w.json"}, 2,
        {"is a folder, not a trace"})
HOSTILE("import: /dev/zero as the trace is refused at once",
        {kImport, "/dev/zero", "--out", "@/w.json"}, 2, {"/dev/zero: byte 1: not valid JSON"})
HOSTILE("import: no traceEvents", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents: missing required key 'traceEvents' (not a PyTorch profiler trace"},
        {{"t.json", R"({"schemaVersion": 1, "deviceProperties": []})"}})
HOSTILE("import: traceEvents is not an array", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents: expected an array of events"},
        {{"t.json", R"({"traceEvents": {"ph": "X"}})"}})
HOSTILE("import: an event that is not an object", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents[0]: expected an event object"},
        {{"t.json", R"({"traceEvents": [17]})"}})
HOSTILE("import: a kernel without its duration", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents[4]: missing required key 'dur' in a 'kernel' event named "
         "'relu_kernel'"},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 52,
                             "args": {"stream": 7, "correlation": 2}})")}})
HOSTILE("import: a kernel without its stream", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents[4]: missing required key 'args.stream' in a 'kernel' event"},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 52,
                             "dur": 10, "args": {"correlation": 2}})")}})
HOSTILE("import: a duration of the wrong type", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents[4].dur: expected a number, got \"10\""},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 52,
                             "dur": "10", "args": {"stream": 7, "correlation": 2}})")}})
HOSTILE("import: a null timestamp", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents[4].ts: expected a number, got null"},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": null,
                             "dur": 10, "args": {"stream": 7, "correlation": 2}})")}})
HOSTILE("import: a negative duration", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents[4].dur: expected a finite non-negative time in microseconds, got "
         "-10"},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 52,
                             "dur": -10, "args": {"stream": 7, "correlation": 2}})")}})
HOSTILE("import: a stream id of the wrong type", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents[4].args.stream: expected an integer, got \"seven\""},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 52,
                             "dur": 10, "args": {"stream": "seven", "correlation": 2}})")}})
HOSTILE("import: overlapping kernels on one stream", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents[4].ts: value 40: kernel 'relu_kernel' starts on stream 7 before "
         "kernel 'gemm_kernel' (traceEvents[2]) ends at 50"},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 40,
                             "dur": 10, "args": {"stream": 7, "correlation": 2}})")}})
HOSTILE("import: kernels on two streams may overlap", {kImport, "@/t.json", "--out", "@/w.json"}, 0,
        {"wrote"},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 40,
                             "dur": 10, "args": {"stream": 8, "correlation": 2}})")}})
HOSTILE("import: no ProfilerStep", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents: no step found: no 'ProfilerStep#N' annotation among 1 events"},
        {{"t.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1,
                                          "dur": 1, "args": {"stream": 7}}]})"}})
HOSTILE("import: a step without kernels", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: traceEvents: step 1 (the last ProfilerStep) launched no device kernels"},
        {{"t.json", R"({"traceEvents": [{"ph": "X", "cat": "user_annotation",
           "name": "ProfilerStep#1", "ts": 0, "dur": 10}]})"}})
HOSTILE("import: an unknown measuring device", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: deviceProperties[0].name: value 'Acme GPU 9000': no accelerator profile known",
         "--accelerator"},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 52,
                             "dur": 10, "args": {"stream": 7, "correlation": 2}})",
                          "Acme GPU 9000")}})
HOSTILE("import: --accelerator names the device",
        {kImport, "@/t.json", "--out", "@/w.json", "--accelerator", "a100-sxm4-80gb"}, 0,
        {"Acme GPU 9000 -> a100-sxm4-80gb"},
        {{"t.json", trace(R"({"ph": "X", "cat": "kernel", "name": "relu_kernel", "ts": 52,
                             "dur": 10, "args": {"stream": 7, "correlation": 2}})",
                          "Acme GPU 9000")}})
HOSTILE("import: an unknown --accelerator",
        {kImport, "@/t.json", "--out", "@/w.json", "--accelerator", "h1000"}, 2,
        {"--accelerator", "h1000"}, {{"t.json", trace()}})
HOSTILE("import: --steps 0", {kImport, "@/t.json", "--out", "@/w.json", "--steps", "0"}, 2,
        {"--steps 0"}, {{"t.json", trace()}})
HOSTILE("import: --steps beyond the trace's",
        {kImport, "@/t.json", "--out", "@/w.json", "--steps", "2"}, 2,
        {"--steps: value 2: the trace @/t.json has only 1 steps"}, {{"t.json", trace()}})
HOSTILE("import: no --out", {kImport, "@/t.json"}, 2, {"--out: missing"}, {{"t.json", trace()}})
HOSTILE("import: a trace nested 100,000 deep", {kImport, "@/t.json", "--out", "@/w.json"}, 2,
        {"@/t.json: nested deeper than the limit of 64 levels"}, {{"t.json", deep_object(100000)}})

// The workload file a scenario names.
namespace {

std::string scenario_with_workload(const std::string& file = "w.json") {
  return R"({"name": "w", "cluster": "dgx-h100", "model": {"workload": ")" + file +
         R"("}, "batch_per_replica": 8, "parallelism": {"data": 1}, "steps": 3, "warmup_steps": 1})";
}

std::string workload(const std::string& kernel_class = "gemm", const std::string& extra = "") {
  return R"({"kind": "trainsim_workload", "version": 1, "accelerator": "h100-sxm5",
  "precision": "bf16", "batch": 8)" +
         extra + R"(, "layers": [{"name": "l0", "forward": [{"name": "k", "class": ")" +
         kernel_class + R"(", "time_s": 1e-5}]}]})";
}

}  // namespace

HOSTILE("workload: a valid workload simulates", {"simulate", "@/s.json"}, 0,
        {"measured kernel times as measured (h100-sxm5, bf16, batch 8)"},
        {{"s.json", scenario_with_workload()}, {"w.json", workload()}})
HOSTILE("workload: a missing workload file names the scenario key and the path",
        {"simulate", "@/s.json"}, 2, {"@/s.json: model.workload: 'none.json': ", "none.json"},
        {{"s.json", scenario_with_workload("none.json")}})
HOSTILE("workload: --set model.workload names the --set",
        {"simulate", "@/s.json", "--set", "model.workload=\"x.json\""}, 2,
        {"--set model.workload=\"x.json\"", "'x.json'"},
        {{"s.json", scenario_with_workload()}, {"w.json", workload()}})
HOSTILE("workload: an unknown kernel class", {"simulate", "@/s.json"}, 2,
        {"model.workload: 'w.json': @/w.json: layers[0].forward[0].class: unknown kernel class "
         "'tensor'"},
        {{"s.json", scenario_with_workload()}, {"w.json", workload("tensor")}})
HOSTILE("workload: an unknown measuring accelerator", {"simulate", "@/s.json"}, 2,
        {"@/w.json: accelerator", "h1000"},
        {{"s.json", scenario_with_workload()},
         {"w.json", R"({"kind": "trainsim_workload", "version": 1, "accelerator": "h1000",
           "precision": "bf16", "batch": 8, "layers": [{"name": "l0"}]})"}})
HOSTILE("workload: not a workload file", {"simulate", "@/s.json"}, 2, {"@/w.json: kind"},
        {{"s.json", scenario_with_workload()}, {"w.json", R"({"kind": "plan_catalog"})"}})
HOSTILE("workload: a negative time", {"simulate", "@/s.json"}, 2,
        {"@/w.json: layers[0].forward[0].time_s"},
        {{"s.json", scenario_with_workload()},
         {"w.json", R"({"kind": "trainsim_workload", "version": 1, "accelerator": "h100-sxm5",
           "precision": "bf16", "batch": 8, "layers": [{"name": "l0", "forward": [{"name": "k",
           "class": "gemm", "time_s": -1}]}]})"}})
HOSTILE("workload: an unknown key", {"simulate", "@/s.json"}, 2, {"@/w.json: layer"},
        {{"s.json", scenario_with_workload()}, {"w.json", workload("gemm", R"(, "layer": [])")}})
HOSTILE("workload: tensor parallelism of a workload with no tensor-parallel roles",
        {"simulate", "@/s.json", "--set", "parallelism.tensor=2"}, 2,
        {"parallelism.tensor",
         "of an imported workload needs its layers' tensor-parallel roles, "
         "and no layer of it carries one"},
        {{"s.json", scenario_with_workload()}, {"w.json", workload()}})

namespace {

// A workload whose layers are `layers` (JSON objects), with a GEMM forward kernel maker.
std::string tp_workload(const std::string& layers) {
  return R"({"kind": "trainsim_workload", "version": 1, "accelerator": "h100-sxm5",
  "precision": "bf16", "batch": 8, "layers": [)" +
         layers + "]}";
}

std::string tp_layer(const std::string& name, const std::string& role, const std::string& gemm) {
  return R"({"name": ")" + name + R"(", "tp": ")" + role +
         R"(", "forward": [{"name": "g", "class": "gemm", "time_s": 1e-5, "flops": 1e6, "gemm": )" +
         gemm + "}]}";
}

}  // namespace

HOSTILE("workload: an unknown tensor-parallel role", {"simulate", "@/s.json"}, 2,
        {"@/w.json: layers[0].tp", "diagonal"},
        {{"s.json", scenario_with_workload()},
         {"w.json", tp_workload(tp_layer("l0", "diagonal", "[64, 32, 16, 1]"))}})
HOSTILE("workload: a row-parallel layer without a column-parallel one before it",
        {"simulate", "@/s.json"}, 2,
        {"@/w.json: layers[0].tp: layer 'l0' is 'row' without a column-parallel layer before it"},
        {{"s.json", scenario_with_workload()},
         {"w.json", tp_workload(tp_layer("l0", "row", "[64, 32, 16, 1]"))}})
HOSTILE("workload: a column-parallel layer no row-parallel layer closes", {"simulate", "@/s.json"},
        2,
        {"@/w.json: layers[0].tp: column-parallel layer 'l0' opens a split region no "
         "row-parallel layer closes"},
        {{"s.json", scenario_with_workload()},
         {"w.json", tp_workload(tp_layer("l0", "column", "[64, 32, 16, 1]"))}})
HOSTILE("workload: a replicated layer inside a column..row region", {"simulate", "@/s.json"}, 2,
        {"@/w.json: layers[1].tp: layer 'l1' is 'replicated' inside the split region opened by "
         "column-parallel layer 'l0'"},
        {{"s.json", scenario_with_workload()},
         {"w.json", tp_workload(tp_layer("l0", "column", "[64, 32, 16, 1]") + ", " +
                                tp_layer("l1", "replicated", "[64, 32, 32, 1]") + ", " +
                                tp_layer("l2", "row", "[64, 16, 32, 1]"))}})
HOSTILE("workload: a split layer outside any split region", {"simulate", "@/s.json"}, 2,
        {"@/w.json: layers[0].tp: layer 'l0' is 'split' outside a column..row region"},
        {{"s.json", scenario_with_workload()},
         {"w.json", tp_workload(tp_layer("l0", "split", "[64, 32, 16, 1]"))}})
HOSTILE("workload: a column-parallel layer without a GEMM view", {"simulate", "@/s.json"}, 2,
        {"@/w.json: layers[0].tp", "no GEMM kernel with a \"gemm\" view"},
        {{"s.json", scenario_with_workload()},
         {"w.json", tp_workload(R"({"name": "l0", "tp": "column", "forward": [{"name": "k",
           "class": "gemm", "time_s": 1e-5}]}, )" +
                                tp_layer("l1", "row", "[64, 16, 32, 1]"))}})
HOSTILE("workload: output features not divisible by tp",
        {"simulate", "@/s.json", "--set", "parallelism.tensor=2"}, 2,
        {"parallelism.tensor",
         "imported layer 'l0' (column) cannot be split by tensor "
         "parallelism tp=2: its output features 3 is not divisible by tp=2"},
        {{"s.json", scenario_with_workload()},
         {"w.json", tp_workload(tp_layer("l0", "column", "[64, 3, 16, 1]") + ", " +
                                tp_layer("l1", "row", "[64, 16, 3, 1]"))}})
HOSTILE("workload: sequence parallelism is refused",
        {"simulate", "@/s.json", "--set", "parallelism.tensor=2", "--set",
         "parallelism.sequence_parallel=true"},
        2, {"sequence_parallel", "sequence parallelism of an imported workload"},
        {{"s.json", scenario_with_workload()},
         {"w.json", tp_workload(tp_layer("l0", "column", "[64, 32, 16, 1]") + ", " +
                                tp_layer("l1", "row", "[64, 16, 32, 1]"))}})
HOSTILE("workload: batch_per_replica max is refused",
        {"simulate", "@/s.json", "--set", "batch_per_replica=max"}, 2,
        {"batch_per_replica: \"max\" needs the activation memory per sample"},
        {{"s.json", scenario_with_workload()}, {"w.json", workload()}})
