#pragma once
// What a training step launches, kernel by kernel: a layer's forward or backward kernels (the
// zoo's KernelSpecs in the scenario's precision and attention form, plus mixed-precision weight
// casts, fused as the framework fuses), the optimizer's kernels, each with its device time (the
// one kernel-time model, sim/hw/kernel_model.hpp) and the host time the framework spends
// launching it. Both step simulators build their work from these launches.

#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "models/zoo/zoo_model.hpp"

namespace trainsim::models {

enum class Pass { forward, backward };

struct Launch {
  const char* what = "";
  sim::KernelClass cls = sim::KernelClass::elementwise;
  double device_s = 0;  // one launch on the device, the device gap included
  double host_s = 0;    // host time to launch it
  int count = 1;        // launched this many times in a row
};

// Appends the kernels layer `l` launches in `pass` for `batch` samples to `out`.
void layer_launches(const Scenario& s, const Layer& l, Pass pass, double batch,
                    std::vector<Launch>& out);

// Appends the optimizer step's kernels for `params` parameters held in `tensors` tensors (with
// the mixed-precision gradient unscale where the framework scales the loss).
// With more than one micro-batch per step (gradient accumulation, pipeline micro-batches), the
// kernels that add one micro-batch's weight gradients of layer `l` into the step's sum (none
// otherwise).
void grad_accumulate_launch(const Scenario& s, const Layer& l, std::vector<Launch>& out);
void optimizer_launches(const Scenario& s, double params, int tensors, std::vector<Launch>& out);

// For an imported workload (s.model.measured): where its kernels were measured and how they are
// moved to the scenario's device, precision and batch; `scaled` is set when the kernel model
// rescales them (another device, precision or batch). Empty for the zoo's models.
std::string measured_scaling(const Scenario& s, bool& scaled);

// Device seconds of all launches; host seconds to launch them all.
double device_seconds(const std::vector<Launch>& launches);
double host_seconds(const std::vector<Launch>& launches);
// Seconds from the host's first launch to the device's last completion when one host thread
// launches the kernels back to back and the device runs each as soon as it is launched and the
// previous one is done (the device idle at the start).
double dispatched_seconds(const std::vector<Launch>& launches);

// Bytes per parameter of the gradients (what the data-parallel collectives carry), of the
// weights kept on the device, and of the optimizer state, under the scenario's precision,
// framework (autocast keeps fp32 weights and gradients; master weights keep 16-bit weights and
// gradients plus an fp32 copy) and optimizer.
double gradient_bytes_per_param(const Scenario& s);
double weight_bytes_per_param(const Scenario& s);
double optimizer_state_bytes_per_param(const Scenario& s);

// A kernel class a step runs, with the dtype its compute path runs in (memory-bound classes are
// priced by bytes alone, whatever the dtype).
struct KernelUse {
  sim::KernelClass cls = sim::KernelClass::elementwise;
  sim::Dtype dtype = sim::Dtype::fp32;
};

// The kernel classes a step of `s` runs, each once, in class order: its layers' launches in both
// passes and the optimizer's (element-wise kernels fused into their producers included: they are
// priced at their own class's memory efficiency), plus the reductions, top-k selections and
// scatters its collectives run on the device. Which entries of the kernels profile a result
// depends on.
std::vector<KernelUse> kernel_uses(const Scenario& s);

// Whether the model's dilated convolutions compute in fp32 math in the scenario's precision: the
// run's library has no tensor-core algorithm for dilation (the kernels profile's or the
// scenario's dilated_conv_tensor_cores; sim/hw/kernel_model.hpp, math_dtype).
bool dilated_conv_fp32_math(const Scenario& s);
// Whether any of the model's convolutions (the dilated ones alone with `dilated_only`) computes
// in fp32 math in the scenario's precision (math_dtype: dilation without a tensor-core
// algorithm, or few input channels on a library that runs those on SIMT kernels).
bool conv_fp32_math(const Scenario& s, bool dilated_only);

// The dtype activations and the weights' working copies are stored in: the precision, bf16 under
// fp8 (fp8 runs only the GEMMs in 8 bits).
sim::Dtype storage_dtype(const Scenario& s);
// Its width: bytes per activation element, and per parameter of the weights a ZeRO all-gather
// or a tensor-parallel collective carries.
double activation_bytes_per_element(const Scenario& s);

// True when the scenario computes in 16 bits (fp16, bf16; fp8 GEMMs keep 16-bit elsewhere).
bool low_precision(const Scenario& s);

// The dispatching host's time to launch one kernel of `pass`: the framework's per-kernel cost
// (none for a captured graph), plus its mixed-precision layer's in a 16-bit forward.
double host_launch_s(const Scenario& s, Pass pass);

// The dispatching host's time for one launch of kernel `k` in `pass`: the framework's
// library_launch for a kernel a library launches inside one op (KernelSpec::library_launch),
// host_launch_s for any other; none for a captured graph.
double kernel_host_s(const Scenario& s, const KernelSpec& k, Pass pass);

// The host's setup of the library call that kernel `k` starts (KernelSpec::library_call), paid
// once before its first launch: the framework's library_call; none for other kernels and for a
// captured graph.
double library_call_host_s(const Scenario& s, const KernelSpec& k);

// Whether TensorFlow's AMP graph rewrite (framework `amp_fp32_ops: graph_rewrite`) keeps layer
// `l`'s memory-bound ops in fp32: a 16-bit step of a layer whose forward runs a deny-list op (a
// softmax, a norm other than batch norm). The memory model keeps such layers' saved activations
// 16-bit: DeepLearningExamples' TensorFlow BERT recipes double the batch per GPU under AMP (64
// against 32 at length 128 on V100 32GB, 16 against 8 on 16GB), which fp32 activations would
// not leave room for.
bool rewrite_keeps_fp32(const Scenario& s, const Layer& l);

}  // namespace trainsim::models
