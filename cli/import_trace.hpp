#pragma once
// Reads a PyTorch profiler (Kineto) Chrome trace of training steps on one device into an imported
// workload (models/zoo/imported_workload.hpp). The file is streamed (nlohmann::json's SAX
// interface), keeping a few numbers per event it needs, so a trace of any size is read in memory
// proportional to its events, never to its text.
//
// What it reads (torch.profiler's export_chrome_trace, Kineto's Chrome trace format):
// - "traceEvents": complete events ("ph": "X") with "cat" kernel / gpu_memcpy / gpu_memset (device
//   work: "args" stream, correlation, and for NCCL kernels "In msg nelems" and "dtype"),
//   cuda_runtime / cuda_driver (host launches and syncs: "args" correlation), cpu_op (operators:
//   "args" "Input Dims" and "Input type" when record_shapes=True), user_annotation or cpu_op
//   named "ProfilerStep#N" (the steps), "Optimizer.step#..." and "enumerate(DataLoader)#...".
//   Flow events (ac2g) and everything else are skipped.
// - "deviceProperties": the devices' names (mapped to an accelerator profile).

#include <optional>
#include <string>

#include "models/zoo/imported_workload.hpp"
#include "sim/config/profile_library.hpp"
#include "sim/hw/dtype.hpp"

namespace trainsim::cli {

struct ImportOptions {
  std::optional<int> steps;  // import the last N steps (default: all but the first, at most 10)
  std::optional<std::string> accelerator;  // the measuring accelerator's profile
  std::optional<double> batch;             // samples per step (default: from the shapes, else 1)
  std::optional<sim::Dtype> precision;     // default: from the GEMMs' input types
};

// Reads `path`; errors are InputError naming the file, the event (traceEvents[i]), the key and
// the value.
models::Workload import_kineto_trace(const std::string& path, const ImportOptions& options,
                                     const sim::ProfileLibrary& profiles);

// The accelerator profile a CUDA device name stands for ("NVIDIA A100-SXM4-80GB" ->
// "a100-sxm4-80gb"); empty when none does.
std::string accelerator_for_device(const std::string& device_name);

}  // namespace trainsim::cli
