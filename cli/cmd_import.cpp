// `trainsim import TRACE.json --out WORKLOAD.json [--steps N] [--accelerator NAME] [--batch N]
// [--precision P]`: a PyTorch profiler trace of training steps into a workload file
// (models/zoo/imported_workload.hpp) that a scenario runs as "model": {"workload": FILE}.
#include <fstream>
#include <ostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/import_trace.hpp"
#include "cli/options.hpp"
#include "cli/profiles_source.hpp"
#include "cli/units_format.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

int run_import(const Args& args, CommandIo& io) {
  const std::string synopsis =
      "usage: trainsim import TRACE.json --out WORKLOAD.json [--steps N] [--accelerator NAME]\n"
      "                       [--batch N] [--precision fp32|tf32|fp16|bf16|fp8]\n"
      "Reads a PyTorch profiler (Kineto) trace of training steps on one device and writes a\n"
      "workload file; simulate it with a scenario whose model is {\"workload\": "
      "\"WORKLOAD.json\"}.";
  po::options_description options("options");
  std::string trace;
  std::string out;
  std::string steps_text;
  std::string batch_text;
  std::string accelerator;
  std::string precision;
  std::vector<std::string> profile_dirs;
  options.add_options()("trace", po::value(&trace),
                        "the trace (torch.profiler export_chrome_trace)")(
      "out", po::value(&out), "the workload file to write")(
      "steps", po::value(&steps_text),
      "import the last N ProfilerSteps (default: all but the first, which warms up, at most 10)")(
      "accelerator", po::value(&accelerator),
      "the measuring device's accelerator profile (default: from the trace's deviceProperties)")(
      "batch", po::value(&batch_text),
      "samples per step (default: the first operator's leading input dimension, else 1)")(
      "precision", po::value(&precision),
      "the step's compute precision (default: from the GEMMs' input types, else fp32)")(
      "profile-dir", po::value(&profile_dirs)->composing(), "extra profile folder (repeatable)");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!parse_command_line("import", synopsis, args, options, positional, vm, io)) return 0;
  if (trace.empty()) throw UsageError("import", "no trace given (trainsim import TRACE.json ...)");
  if (out.empty()) throw UsageError("--out", "missing: name the workload file to write");
  ImportOptions o;
  if (vm.count("steps"))
    o.steps = static_cast<int>(parse_integer_option("--steps", steps_text, 1, 1 << 20));
  if (vm.count("batch")) {
    o.batch = static_cast<double>(
        parse_integer_option("--batch", batch_text, 1, sim::limits::kMaxBatchPerReplica));
  }
  if (vm.count("accelerator")) o.accelerator = accelerator;
  if (vm.count("precision")) {
    o.precision = sim::parse_step_precision(precision);
    if (!o.precision) {
      std::string names;
      for (const auto& [name, dtype] : sim::kStepPrecisionNames)
        names += (names.empty() ? "" : ", ") + std::string(name);
      throw UsageError("--precision", "value '" + precision + "' is not one of " + names);
    }
  }
  const sim::ProfileLibrary profiles = load_profile_library(profile_dirs);
  const models::Workload w = import_kineto_trace(trace, o, profiles);
  // The measuring accelerator must be one the scenario loader finds.
  (void)profiles.accelerator(w.accelerator, trace + ": accelerator");
  std::ofstream file(out, std::ios::binary);
  if (!file) throw InputError("--out " + out, "cannot write the workload file");
  file << models::workload_json(w).dump(1) << "\n";
  file.close();
  if (!file) throw InputError("--out " + out, "writing the workload file failed");
  std::size_t kernels = 0;
  for (const auto& l : w.layers)
    kernels += l.forward.size() + l.backward.size();
  io.out << "imported " << w.steps << " step" << (w.steps == 1 ? "" : "s") << " of " << trace
         << " (" << (w.device_name.empty() ? std::string("device") : w.device_name) << " -> "
         << w.accelerator << ", " << sim::dtype_name(w.precision) << ", batch " << w.batch << ")\n"
         << "  measured step        " << format_seconds(w.measured_step_s) << "\n"
         << "  layers               " << w.layers.size() << " (" << kernels
         << " forward and backward kernels)\n"
         << "  optimizer kernels    " << w.optimizer.size() << "\n"
         << "  collective kernels   " << w.collectives.size() << " (priced by the scenario)\n"
         << "  host per step        " << format_seconds(w.host_per_step_s)
         << " outside launches (data-loader wait " << format_seconds(w.data_loader_wait_s) << ")\n"
         << "  dispatch gaps        " << format_seconds(w.dispatch_gap_s)
         << " per step (device idle waiting for launches)\n"
         << "  host syncs per step  " << w.host_syncs_per_step << "\n"
         << "wrote " << out << "\n";
  return 0;
}

}  // namespace trainsim::cli
