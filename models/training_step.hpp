#pragma once
// The one step simulator: a training (or inference) job on its device mesh, data x tensor x
// pipeline parallel, with ZeRO/FSDP sharding, on the event engine. Every pipeline stage is a
// device with its framework host thread (launching each kernel at its dispatch cost, running
// ahead of the device up to CUDA's launch queue), its compute stream, its data-parallel
// communication stream and its activation/gradient send streams; micro-batches flow through the
// stages in the schedule's order (GPipe, 1F1B, interleaved 1F1B), tensor-parallel collectives run
// in line with the kernels, gradient buckets (allreduce, or reduce-scatter under ZeRO) go to the
// communication stream as backward produces them, ZeRO-3 gathers each layer's parameters ahead of
// use, input batches come from the host pipeline (with data echoing), and the optimizer steps once
// every stage's gradients are reduced. Data-parallel replicas and the ranks of a tensor-parallel
// group are identical, so one of each is simulated per stage and the collectives are costed for
// all ranks (a symmetry reduction: the cost of a run does not grow with the replica count).

#include <cstdint>
#include <string>
#include <vector>

#include "models/parallel/stage_report.hpp"
#include "models/scenario.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace trainsim::models {

struct Breakdown {
  double compute_s = 0;
  double recompute_s = 0;
  double host_s = 0;  // the device idle because the framework's host thread had not launched
                      // its next kernel (dispatch overhead, per-step host work)
  double exposed_comm_s = 0;
  double input_stall_s = 0;
  double bubble_s = 0;  // waiting for another stage (pipeline fill, drain, imbalance, sync)
  double optimizer_s = 0;
  double tp_comm_s = 0;    // tensor-parallel collectives in line with the kernels
  double zero_comm_s = 0;  // waiting for ZeRO parameter all-gathers
};

struct MemoryReport {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_state_bytes = 0;
  double activations_bytes = 0;
  double workspace_bytes = 0;
  double peak_bytes_per_device = 0;
  double capacity_bytes = 0;
  bool fits = true;
  std::int64_t max_batch_that_fits = 0;       // per replica, 0 if not even one sample fits
  std::int64_t max_microbatch_that_fits = 0;  // samples per micro-batch at that batch
};

struct StepReport {
  std::string scenario;
  std::string model;
  std::string cluster;
  std::string accelerator;
  std::string precision;
  int devices = 0;
  int data_parallel = 0;
  int tensor_parallel = 1;
  int pipeline_stages = 1;
  int zero = 0;
  std::int64_t global_batch = 0;
  double step_time_s = 0;
  double throughput_samples_per_s = 0;
  // Model FLOPs utilisation (Chowdhery et al. 2022, "PaLM", App. B): the model's matmul FLOPs
  // per step (3 x 2 x multiply-adds per sample for training, recomputation not counted) over
  // step time x devices x the accelerator's peak in the scenario's precision.
  double model_flops_per_step = 0;
  double mfu = 0;
  // The share of its rated boost clock the accelerator sustains under dense math in the
  // scenario's precision (sim/hw/kernel_model.hpp, sustained_clock_fraction): below 1 where its
  // power limit cannot feed that clock.
  double sustained_clock = 1;
  // The model has dilated convolutions that compute in fp32 math in the scenario's precision:
  // its library has no tensor-core algorithm for dilation (the kernels profile's or the
  // scenario's dilated_conv_tensor_cores; sim/hw/kernel_model.hpp, math_dtype).
  bool dilated_conv_fp32_math = false;
  std::string simulated;  // what the symmetry reduction simulated (one replica, one tp rank)
  // An imported workload (model.workload): where its kernels were measured and how they were
  // moved to this device and batch; `workload_scaled` when the kernel model rescaled them.
  std::string workload_note;
  bool workload_scaled = false;
  Breakdown breakdown;
  std::string collective_model;  // what priced the collectives (flow-level or alpha-beta)
  // True when the step's transfers shared its network (communication.contention): collectives,
  // pipeline sends and input copies slowed each other down where they met on a port.
  bool shared_network = false;
  double comm_time_s = 0;  // communication stream busy time per step
  // Seconds of compute lost per step to overlapping collectives (their kernels' SMs and DRAM
  // traffic); already inside breakdown.compute_s / recompute_s, not an extra part of the step.
  double comm_interference_s = 0;
  double gradient_bytes = 0;  // per step per device (its stage's share of a tp rank's gradients)
  int buckets = 0;
  std::string framework;
  double kernels_per_step = 0;  // device kernels (and copies) launched per step per replica
  double host_busy_s = 0;       // the framework's host thread busy time per step
  MemoryReport memory;
  double fresh_sample_fraction = 1;  // fresh (not echoed) samples per step / samples per step
  int echo_factor = 1;
  double echo_speedup = 1;      // step time with echo factor 1 / step time with this factor
  double upstream_batch_s = 0;  // host time to produce one fresh batch (0 without a pipeline)
  double h2d_batch_s = 0;       // host-to-device copy of one batch (0 without a pipeline)
  // The copies as they ran: mean seconds per batch copy in the measured steps, slower than
  // h2d_batch_s where they share the host link with staged collectives (in-step network).
  double h2d_copy_s = 0;
  std::uint64_t events = 0;
  double wall_s = 0;
  // Micro-steps per step actually simulated: fewer than grad_accum when a long accumulation was
  // extended linearly from two shorter runs (identical middle micro-steps).
  int micro_steps_simulated = 1;
  PipelineSummary pipeline;  // pipelined runs only (`stages` is empty otherwise)
  std::vector<StageReport> stages;
};

// Simulates `s.steps` steps of one replica and reports the steady state (warm-up excluded).
// With `trace`, records one replica's streams, host workers and link activity into it.
StepReport simulate_training(const Scenario& s, sim::TraceRecorder* trace = nullptr);
// The memory of the stage with the highest peak (models/parallel/mesh_plan.hpp).
MemoryReport estimate_memory(const Scenario& s);

}  // namespace trainsim::models
