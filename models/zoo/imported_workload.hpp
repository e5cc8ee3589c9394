#pragma once
// An imported workload: one measured training step of a user's own model (from a PyTorch
// profiler trace, cli/import_trace.hpp), as a zoo-like layer list whose kernels carry their
// measured times. Written by `trainsim import`, read by a scenario's
// `"model": {"workload": "FILE"}`; the README's "Bring your own workload" section documents the
// file. The step simulator runs its kernels as measured on the measuring device and scales each
// by the kernel model's ratio on another device (models/kernel_plan.cpp measured_launch).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/zoo/zoo_model.hpp"
#include "sim/config/json_source.hpp"
#include "sim/hw/kernel.hpp"

namespace trainsim::models {

struct WorkloadKernel {
  std::string name;
  sim::KernelClass cls = sim::KernelClass::elementwise;
  double time_s = 0;  // measured duration (mean over the imported steps)
  double gap_s = 0;   // device idle before it not explained by the host (device gap)
  double host_s = 0;  // host time from the previous launch to its launch (syncs excluded)
  double flops = 0;   // from the launching op's shapes; 0 where unknown
  double bytes = 0;   // from the launching op's shapes; 0 where unknown
  sim::GemmShape gemm;
  int stream = 0;
};

struct WorkloadLayer {
  std::string name;
  std::int64_t params = 0;
  int param_tensors = 0;
  double output_elements = 0;  // per sample, what a pipeline stage boundary here sends
  ImportedTpRole tp = ImportedTpRole::replicated;  // its tensor-parallel role ("tp")
  std::int64_t heads = 0;     // attention heads its kernels run (queries; 0: unknown)
  std::int64_t kv_heads = 0;  // key/value heads (0: as heads)
  std::vector<WorkloadKernel> forward;
  std::vector<WorkloadKernel> backward;
};

// A collective kernel the trace ran (NCCL), kept for the record: the simulator prices the
// scenario's own collectives instead.
struct WorkloadCollective {
  std::string name;
  double time_s = 0;
  double bytes = 0;  // 0 where the trace does not say
  int stream = 0;
};

struct Workload {
  std::string source;       // the trace it was imported from
  std::string device_name;  // the trace's deviceProperties name
  std::string accelerator;  // the measuring accelerator's profile
  sim::Dtype precision = sim::Dtype::fp32;
  double batch = 1;  // samples per step
  int steps = 1;     // steps averaged
  double measured_step_s = 0;
  double host_per_step_s = 0;     // host time per step outside the launches
  double data_loader_wait_s = 0;  // of which waiting for the data loader
  double dispatch_gap_s = 0;      // device idle per step waiting for the host to launch
  int host_syncs_per_step = 0;    // as a framework profile's (1: before the optimizer, 2: also at
                                  // the step's end)
  std::int64_t params = 0;        // total parameters; 0: the layers' sum
  std::vector<WorkloadLayer> layers;
  std::vector<WorkloadKernel> optimizer;
  std::vector<WorkloadCollective> collectives;
};

// The kernel class a kernel's name suggests (README "Kernel classes of an imported workload").
sim::KernelClass guess_kernel_class(std::string_view kernel_name);
// "replicated", "column", "row", "vocab", "split".
const char* imported_tp_role_name(ImportedTpRole role);
// True when the layer's forward runs a GEMM with a whole view of one matrix product (a linear
// layer's; batched products, attention scores, have batch > 1); its first such kernel, or null.
const WorkloadKernel* weight_gemm(const WorkloadLayer& l);

// True for NCCL's kernels (ncclKernel_*, ncclDevKernel_*).
bool is_collective_kernel(std::string_view kernel_name);

nlohmann::json workload_json(const Workload& w);
// Reads a workload document strictly; `source` names the file in errors.
Workload read_workload(const nlohmann::json& doc, std::shared_ptr<const sim::JsonSource> source);

// The workload as a model measured on `measuring` (its profile, named by w.accelerator).
ZooModel workload_model(const Workload& w, const sim::AcceleratorSpec& measuring);

}  // namespace trainsim::models
