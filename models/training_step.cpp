#include "models/training_step.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "models/collective_cost.hpp"
#include "models/input_pipeline.hpp"
#include "models/kernel_plan.hpp"
#include "models/parallel/mesh_plan.hpp"
#include "models/parallel/pipeline_schedule.hpp"
#include "models/parallel/step_network.hpp"
#include "models/steady_state.hpp"
#include "sim/collectives/kernels.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/engine.hpp"
#include "sim/core/input_error.hpp"
#include "sim/hw/device_stream.hpp"
#include "sim/hw/kernel.hpp"
#include "sim/hw/kernel_model.hpp"
#include "sim/hw/stream.hpp"
#include "sim/net/transfer_stream.hpp"

namespace trainsim::models {

namespace {

using sim::Time;
namespace col = sim::collectives;

// Where a stage's compute stream time goes; busy categories and idle causes share one index
// space (sim::DeviceStream accounts every instant to one of them).
enum Category : int {
  kCompute = 0,  // forward and backward kernels (and Top-k selection)
  kRecompute,    // forwards re-run in backward
  kOptimizer,    // the optimizer step (with the gradient unscale)
  kTpComm,       // tensor-parallel collectives, in line with the kernels
  kIdleHost,     // nothing launched yet: the framework's host thread is behind
  kIdleInput,    // the host waits for an input batch
  kIdleComm,     // the optimizer waits for the gradient collectives
  kIdleBubble,   // waiting for another stage: an activation, a gradient, the optimizer sync
  kIdleZero,     // waiting for a ZeRO parameter all-gather
  kCategories
};

// CUDA queues at most about 1024 pending launches per context; a host thread that gets further
// ahead blocks in the launch call (estimate: NVIDIA CUDA C++ Programming Guide, "Asynchronous
// Concurrent Execution", and the commonly measured 1024-entry pushbuffer depth). It bounds how far
// a stage's host runs ahead of a device waiting on its neighbours.
constexpr std::size_t kLaunchQueueDepth = 1024;

std::string format_mb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  return buf;
}

// The tensor-parallel collectives a layer runs in a pass (models/zoo tensor_parallel).
const std::vector<TpCollective>& tp_collectives(const Layer& l, Pass pass) {
  return pass == Pass::forward ? l.tp_fwd : l.tp_bwd;
}

col::Op tp_op(TpCollectiveOp op) {
  switch (op) {
    case TpCollectiveOp::allreduce:
      return col::Op::allreduce;
    case TpCollectiveOp::all_gather:
      return col::Op::allgather;
    case TpCollectiveOp::reduce_scatter:
      return col::Op::reduce_scatter;
  }
  return col::Op::allreduce;
}

// A layer's work in one pass for one micro-batch size, launched as the framework launches it:
// tensor-parallel collectives before (at_start) and after its kernels.
// A tensor-parallel collective a pass runs (its Launch carries its standalone time).
struct TpTransfer {
  col::Op op = col::Op::allreduce;
  double bytes = 0;
  double standalone_s = 0;
};

struct PassWork {
  std::vector<Launch> before;  // tensor-parallel collectives at the pass's start
  std::vector<Launch> kernels;
  std::vector<Launch> after;          // tensor-parallel collectives at its end
  std::vector<TpTransfer> before_tp;  // one per entry of `before`
  std::vector<TpTransfer> after_tp;   // one per entry of `after`
};

struct LayerWork {
  PassWork forward;
  PassWork backward;
  PassWork recompute;  // what backward re-runs first (empty without recomputation)
};

// Which pipeline chunk a layer belongs to, and the global chunk index of a stage's local one.
struct MeshShape {
  int stages = 1;
  int chunks_per_stage = 1;
  int chunks() const { return stages * chunks_per_stage; }
  int global(int stage, int local) const { return local * stages + stage; }
};

// A scenario whose cluster is a communication group's view (mesh_plan.hpp group_view), for the
// costers that price that group's collectives.
Scenario group_scenario(const Scenario& s, int size, int stride) {
  Scenario g = s;
  g.cluster = group_view(s.cluster, size, stride);
  return g;
}

class MeshSim {
 public:
  MeshSim(const Scenario& s, const MeshPlan& plan, sim::TraceRecorder* trace)
      : s_(s),
        plan_(plan),
        trace_(trace),
        shape_{s.pipeline_stages, s.virtual_stages},
        total_micro_(s.microbatches * s.grad_accum),
        dp_scenario_(group_scenario(s, s.data_parallel, mesh_strides(s).data)),
        tp_scenario_(tp_group_scenario(s)),
        dp_(dp_scenario_, s.data_parallel),
        tp_(tp_scenario_, s.tensor_parallel, storage_dtype(s)),
        link_(stage_link(s)),
        ports_(engine_, s, s.pipeline_stages) {
    dp_port_ = ports_.group_port(s.data_parallel, mesh_strides(s).data);
    tp_port_ = ports_.group_port(s.tensor_parallel, mesh_strides(s).tensor);
    send_port_ = ports_.send_port(mesh_strides(s).pipeline);
    grad_bytes_ = gradient_bytes_per_param(s);
    ranks_ = s.data_parallel;
    big_micro_ = static_cast<int>(plan.batch % s.microbatches);
    sizes_[0] = static_cast<double>(plan.batch / s.microbatches);
    sizes_[1] = static_cast<double>((plan.batch + s.microbatches - 1) / s.microbatches);
    build_work();
    const int k_stages = shape_.stages;
    for (int k = 0; k < k_stages; ++k) {
      stages_.push_back(std::make_unique<StageDev>(engine_, ports_.network()));
      StageDev& st = *stages_.back();
      st.ops = stage_schedule(s.schedule, k, k_stages, s.microbatches, s.grad_accum, s.inference,
                              s.virtual_stages);
      // The last backward of each local chunk in a step reduces that chunk's gradients.
      st.last_backward.assign(static_cast<std::size_t>(shape_.chunks_per_stage), -1);
      for (std::size_t i = 0; i < st.ops.size(); ++i) {
        if (!st.ops[i].forward)
          st.last_backward[static_cast<std::size_t>(st.ops[i].chunk)] = static_cast<int>(i);
      }
      double params = 0;
      int tensors = 0;
      for (const Chunk& c : plan.chunks) {
        if (c.stage != k) continue;
        params += static_cast<double>(c.params);
        tensors += c.param_tensors;
      }
      st.params = params;
      if (!s.inference) {
        // ZeRO's optimizer updates this rank's 1/dp shard of the stage's parameters.
        const double shard = s.zero >= 1 ? s.data_parallel : 1.0;
        optimizer_launches(s, params / shard, tensors, st.optimizer);
      }
    }
    if (!s.inference && s.comm.compression != Compression::none && ranks_ > 1) plan_topk();
    const int gated_steps = s.steps;
    if (shape_.chunks() > 1) {
      // One arrival gate per (step, chunk, micro-batch, direction), armed for its one arrival.
      const std::size_t n = static_cast<std::size_t>(gated_steps) *
                            static_cast<std::size_t>(shape_.chunks()) *
                            static_cast<std::size_t>(total_micro_) * 2;
      for (std::size_t i = 0; i < n; ++i) {
        arrival_gates_.emplace_back(kIdleBubble);
        arrival_gates_.back().add();
      }
    }
    for (int i = 0; i < gated_steps; ++i) {
      sync_gates_.emplace_back(kIdleBubble);
      sync_gates_.back().add(k_stages);
    }
    step_end_.reserve(static_cast<std::size_t>(s.steps));
    // Replicas on one host share its pipeline workers and its storage bandwidth; each host feeds
    // the replicas whose first stage it holds.
    const int first_stages_per_host =
        std::max(1, s.cluster.accelerators_per_node / std::max(1, s.model_parallel()));
    upstream_ = upstream_stages(s, static_cast<double>(plan.batch),
                                std::min(first_stages_per_host, s.data_parallel));
    h2d_s_ = h2d_batch_s(s, static_cast<double>(plan.batch));
    h2d_bytes_ = h2d_batch_bytes(s, static_cast<double>(plan.batch));
    if (trace_ != nullptr) setup_trace();
  }

  StepReport run() {
    const auto wall0 = std::chrono::steady_clock::now();
    if (s_.input.enabled) produce();
    for (int k = 0; k < shape_.stages; ++k)
      host_step(k);
    engine_.run();
    StepReport r;
    r.step_time_s = steady_step_time_s(step_end_, s_.steps, s_.warmup_steps, "simulation");
    const int measured = s_.steps - s_.warmup_steps;
    const double k_stages = shape_.stages;
    for (int k = 0; k < shape_.stages; ++k) {
      const StageDev& st = stage(k);
      const auto diff = [&](int c) {
        return (st.end.totals[static_cast<std::size_t>(c)] -
                st.start.totals[static_cast<std::size_t>(c)]) /
               measured;
      };
      StageReport sr;
      sr.stage = k;
      const double parts[kCategories] = {diff(kCompute),  diff(kRecompute),  diff(kOptimizer),
                                         diff(kTpComm),   diff(kIdleHost),   diff(kIdleInput),
                                         diff(kIdleComm), diff(kIdleBubble), diff(kIdleZero)};
      double sum = 0;
      for (double p : parts)
        sum += p;
      // The stage's window is the global one: an item running across its edges (another stage
      // ended the step) is counted where it finished; the difference, at most one kernel per
      // measured window, goes to compute so that the parts add up to the step time.
      const double edge = r.step_time_s - sum;
      Breakdown& b = r.breakdown;
      b.compute_s += (parts[kCompute] + edge) / k_stages;
      b.recompute_s += parts[kRecompute] / k_stages;
      b.optimizer_s += parts[kOptimizer] / k_stages;
      b.tp_comm_s += parts[kTpComm] / k_stages;
      b.host_s += parts[kIdleHost] / k_stages;
      b.input_stall_s += parts[kIdleInput] / k_stages;
      b.exposed_comm_s += parts[kIdleComm] / k_stages;
      b.bubble_s += parts[kIdleBubble] / k_stages;
      b.zero_comm_s += parts[kIdleZero] / k_stages;
      sr.busy_s = parts[kCompute] + edge + parts[kRecompute] + parts[kOptimizer] + parts[kTpComm];
      sr.bubble_s = parts[kIdleBubble];
      sr.allreduce_s = (st.end.comm_s - st.start.comm_s) / measured;
      r.comm_time_s += sr.allreduce_s / k_stages;
      r.comm_interference_s +=
          (st.end.interference_s - st.start.interference_s) / measured / k_stages;
      r.kernels_per_step += (st.end.kernels - st.start.kernels) / measured / k_stages;
      r.host_busy_s += (st.end.host_s - st.start.host_s) / measured / k_stages;
      r.stages.push_back(sr);
    }
    const double copies = h2d_copies_end_ - h2d_copies_start_;
    r.h2d_copy_s = copies > 0 ? (h2d_busy_end_s_ - h2d_busy_start_s_) / copies : h2d_s_;
    // Per device: what its stage's data-parallel collectives carry (one tensor-parallel rank's
    // share of the stage; the whole model without model parallelism).
    r.gradient_bytes =
        s_.inference ? 0
                     : static_cast<double>(plan_.rank_model.params()) * grad_bytes_ / shape_.stages;
    r.buckets = buckets_per_step_;
    r.upstream_batch_s = upstream_.total_s();
    r.h2d_batch_s = h2d_s_;
    r.echo_factor = s_.input.enabled ? s_.input.echo_factor : 1;
    r.fresh_sample_fraction = 1.0 / r.echo_factor;
    // Engine events plus those of the flow-level collective runs that priced the collectives.
    r.events = engine_.stats().events_executed + dp_.events() + tp_.events();
    r.collective_model = dp_.model_name();
    r.shared_network = ports_.network() != nullptr;
    if (s_.tensor_parallel > 1 && dp_.model_name() == "none") r.collective_model = tp_.model_name();
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  }

  // Per-micro-batch times of each stage (the largest micro-batch), for the stage lines.
  void stage_costs(std::vector<StageReport>& out) const {
    for (std::size_t ci = 0; ci < plan_.chunks.size(); ++ci) {
      const Chunk& c = plan_.chunks[ci];
      StageReport& sr = out[static_cast<std::size_t>(c.stage)];
      for (int i = c.first_layer; i < c.first_layer + c.layers; ++i) {
        const LayerWork& w = work_[1][static_cast<std::size_t>(i)];
        sr.forward_s += pass_s(w.forward);
        sr.backward_s += pass_s(w.backward);
        sr.recompute_s += pass_s(w.recompute);
      }
      if (static_cast<int>(ci) + 1 < shape_.chunks()) {
        sr.send_bytes += send_bytes(static_cast<int>(ci), 1);
        sr.send_s += send_s(static_cast<int>(ci), 1);
      }
    }
  }

 private:
  struct Snapshot {
    std::array<double, sim::DeviceStream::kMaxCategories> totals{};
    double comm_s = 0;
    double host_s = 0;
    double interference_s = 0;
    double kernels = 0;
  };

  struct StageDev {
    StageDev(sim::Engine& e, sim::FlowNetwork* net)
        : host(e),
          compute(e, kIdleHost),
          comm(e, net),
          gather(e, net),
          tp(e, net),
          send_fwd(e, net),
          send_bwd(e, net),
          comm_gate(kIdleComm) {}
    sim::Stream host;  // the framework's dispatching thread
    sim::DeviceStream compute;
    sim::TransferStream comm;      // data-parallel collectives (ZeRO-1/2 parameter gathers too)
    sim::TransferStream gather;    // ZeRO-3's prefetched parameter all-gathers (FSDP's own stream)
    sim::TransferStream tp;        // tensor-parallel collectives (waited for by compute)
    sim::TransferStream send_fwd;  // activations to the next chunk's stage
    sim::TransferStream send_bwd;  // gradients to the previous chunk's stage
    sim::Gate comm_gate;
    std::vector<PipeOp> ops;
    std::vector<int> last_backward;  // per local chunk: index in ops of its last backward
    std::vector<Launch> optimizer;
    double params = 0;
    std::size_t next_op = 0;
    int host_step = 0;    // the step the host is launching (0-based)
    int device_step = 0;  // steps whose optimizer finished on the device
    bool host_waits_step_end = false;
    double bucket = 0;
    std::deque<sim::Gate> zero_gates;  // ZeRO: per gather, armed for its one completion
    std::deque<sim::Gate> tp_gates;    // tensor-parallel collectives' ends (a ring, tp_gate)
    std::size_t next_tp_gate = 0;
    std::deque<std::string> labels;
    struct Pending {
      Time duration;
      int category;
      std::string_view label;
      sim::Gate* gate;
      sim::DeviceStream::Done on_done;
      bool memory_bound;
      int launches = 1;  // kernels the item stands for (a Launch's count)
    };
    std::deque<Pending> pending;  // launched by the host, not yet handed to the device
    sim::TraceRecorder::TrackId compute_track = 0;
    sim::TraceRecorder::TrackId comm_track = 0;
    Snapshot start;
    Snapshot end;
  };

  static Scenario tp_group_scenario(const Scenario& s) {
    Scenario g = group_scenario(s, s.tensor_parallel, mesh_strides(s).tensor);
    // NCCL picks the algorithm for activations' collectives; the gradient algorithm is the
    // scenario's choice for the data-parallel ones.
    g.comm.algorithm = col::Algorithm::automatic;
    return g;
  }

  StageDev& stage(int k) { return *stages_[static_cast<std::size_t>(k)]; }
  const StageDev& stage(int k) const { return *stages_[static_cast<std::size_t>(k)]; }
  Time dur(double seconds) const { return Time::from_seconds(seconds); }
  bool measuring() const { return static_cast<int>(step_end_.size()) >= s_.warmup_steps; }
  // Micro-batch j's size class: the first N mod M of each round have ceil(N/M) samples.
  int size_class(int j) const {
    return (j % s_.microbatches) < big_micro_ || big_micro_ == 0 ? 1 : 0;
  }
  std::string_view keep(StageDev& st, std::string label) {
    st.labels.push_back(std::move(label));
    return st.labels.back();
  }

  // ---- the work, computed once per layer and micro-batch size ----
  static double pass_s(const PassWork& w) {
    return device_seconds(w.before) + device_seconds(w.kernels) + device_seconds(w.after);
  }

  void tp_launches(const Layer& l, Pass pass, double n, PassWork& w) {
    if (s_.tensor_parallel < 2) return;
    const double host = host_launch_s(s_, pass);
    for (const TpCollective& c : tp_collectives(l, pass)) {
      const double bytes = c.elements_per_sample * n * activation_bytes_per_element(s_);
      const double t = tp_.dense_s(tp_op(c.op), bytes);
      (c.at_start ? w.before : w.after)
          .push_back({c.what, sim::KernelClass::elementwise, t, host, 1});
      (c.at_start ? w.before_tp : w.after_tp).push_back({tp_op(c.op), bytes, t});
    }
  }

  void build_work() {
    const ZooModel& m = plan_.rank_model;
    for (int z = 0; z < 2; ++z) {
      const double n = sizes_[z];
      auto& layers = work_[z];
      layers.resize(m.layers.size());
      if (n <= 0) continue;
      for (std::size_t i = 0; i < m.layers.size(); ++i) {
        const Layer& l = m.layers[i];
        LayerWork& w = layers[i];
        layer_launches(s_, l, Pass::forward, n, w.forward.kernels);
        tp_launches(l, Pass::forward, n, w.forward);
        if (s_.inference) continue;
        layer_launches(s_, l, Pass::backward, n, w.backward.kernels);
        grad_accumulate_launch(s_, l, w.backward.kernels);
        tp_launches(l, Pass::backward, n, w.backward);
        if (s_.recompute == Recompute::full) {
          w.recompute = w.forward;
        } else if (s_.recompute == Recompute::selective && !s_.fused_attention) {
          // Selective recomputation re-runs the score-sized attention kernels only
          // (Korthikanti et al. 2022, Sec. 5): the unfused-only kernels of the entry.
          Layer core = l;
          core.params = 0;
          core.param_tensors = 0;
          core.fwd_kernels.clear();
          for (const KernelSpec& k : l.fwd_kernels) {
            if (k.form == AttentionForm::unfused_only) core.fwd_kernels.push_back(k);
          }
          if (!core.fwd_kernels.empty())
            layer_launches(s_, core, Pass::forward, n, w.recompute.kernels);
        }
      }
    }
  }

  void plan_topk() {
    // Selection reads gradient and residual, writes residual: priced by the collectives' kernel
    // costs (sim/collectives/kernels), the one Top-k cost.
    const double m = static_cast<double>(s_.model.params());
    col::KernelCosts kc;
    kc.accelerator = s_.cluster.accelerator;
    kc.host = s_.cluster.host;
    kc.dtype = sim::Dtype::fp32;
    const double k = std::max(1.0, std::ceil(s_.comm.density * m));
    const double select_s = kc.residual_s(m) + kc.topk_select_s(m, k);
    topk_.push_back({"top-k selection", sim::KernelClass::topk,
                     select_s + s_.cluster.accelerator.kernel_launch_overhead_s,
                     host_launch_s(s_, Pass::backward), 1});
  }

  // ---- sends between stages ----
  double send_bytes(int global_chunk, int z) const {
    const Chunk& c = plan_.chunks[static_cast<std::size_t>(global_chunk)];
    const Layer& last =
        plan_.rank_model.layers[static_cast<std::size_t>(c.first_layer + c.layers - 1)];
    // Megatron-LM sends each tensor-parallel rank's 1/tp slice and all-gathers it on arrival
    // (scatter-gather optimisation, Narayanan et al. 2021 Sec. 4.1); the output is replicated
    // across the group without sequence parallelism.
    // With sequence parallelism the output is already the rank's 1/tp sequence shard.
    const double split = s_.sequence_parallel ? 1.0 : s_.tensor_parallel;
    return sizes_[z] * last.output_elements * activation_bytes_per_element(s_) / split;
  }
  double send_s(int global_chunk, int z) const {
    if (shape_.chunks() < 2) return 0;
    return link_.latency_s + send_bytes(global_chunk, z) / link_.bw_bytes_per_s;
  }

  sim::Gate& arrival_gate(int step, int global_chunk, int micro, bool gradient) {
    const std::size_t i =
        ((static_cast<std::size_t>(step) * static_cast<std::size_t>(shape_.chunks()) +
          static_cast<std::size_t>(global_chunk)) *
             static_cast<std::size_t>(total_micro_) +
         static_cast<std::size_t>(micro)) *
            2 +
        (gradient ? 1 : 0);
    return arrival_gates_[i];
  }

  // ---- the host thread ----
  // The host launches one kernel (or a run of `count` identical ones): after its host time the
  // kernel joins the device queue. A run is launched as its first kernel followed by the rest at
  // the pace of the slower of host and device.
  void dispatch(int k, const Launch& l, int category, std::string_view label, sim::Gate* gate,
                sim::DeviceStream::Done on_done) {
    StageDev& st = stage(k);
    const std::string_view host_label = trace_ != nullptr ? label : std::string_view();
    double device_s = l.device_s;
    if (l.count > 1) {
      const double rest = l.count - 1;
      device_s = std::max(l.count * l.device_s, rest * l.host_s + l.device_s);
    }
    // Host items finish in submission order, so each launch takes the oldest pending kernel.
    st.pending.push_back({dur(device_s), category, label, gate, std::move(on_done),
                          !sim::is_compute_class(l.cls), l.count});
    st.host.submit(dur(l.host_s), host_label, "launch", [this, k] { hand_to_device(k); });
    if (l.count > 1) st.host.submit(dur((l.count - 1) * l.host_s), {}, {}, {});
  }

  // A zero-length device item behind everything launched so far: waits on `gate` (accounting
  // the wait to the gate's cause) and then calls `on_done`.
  void device_marker(int k, sim::Gate* gate, sim::DeviceStream::Done on_done,
                     int category = kCompute) {
    StageDev& st = stage(k);
    st.pending.push_back({Time::zero(), category, {}, gate, std::move(on_done), false});
    st.host.submit(Time::zero(), [this, k] { hand_to_device(k); });
  }

  // The oldest launched item joins the device queue (host items finish in submission order).
  void hand_to_device(int k) {
    StageDev& sd = stage(k);
    StageDev::Pending p = std::move(sd.pending.front());
    sd.pending.pop_front();
    sd.compute.enqueue(p.duration, p.category, p.label, trace_category(p.category),
                       std::move(p.on_done), p.gate, p.memory_bound, p.launches);
  }

  static std::string_view trace_category(int category) {
    switch (category) {
      case kRecompute:
        return "recompute";
      case kOptimizer:
        return "optimizer";
      case kTpComm:
        return "tp comm";
      default:
        return "compute";
    }
  }

  std::string_view label(int k, const char* pass, const std::string& layer, const Launch& l) {
    if (trace_ == nullptr) return {};
    return keep(stage(k), std::string(pass) + " " + layer + ": " + l.what +
                              (l.count > 1 ? " x" + std::to_string(l.count) : std::string()));
  }

  void host_step(int k) {
    StageDev& st = stage(k);
    if (st.host_step == s_.steps) return;
    st.next_op = 0;
    host_next(k);
  }

  // Launches the stage's next op (a forward or backward of one micro-batch through one chunk),
  // then continues with the next once the host has launched it.
  void host_next(int k) {
    StageDev& st = stage(k);
    if (st.next_op == st.ops.size()) {
      if (s_.inference) {
        device_marker(k, nullptr, [this, k] { stage_step_done(k); });
        host_end_of_step(k);
        return;
      }
      host_after_backward(k);
      return;
    }
    if (st.compute.queued() >= kLaunchQueueDepth) {
      st.compute.wake_below(kLaunchQueueDepth, [this, k] { host_next(k); });
      return;
    }
    const PipeOp op = st.ops[st.next_op];
    const int g = shape_.global(k, op.chunk);
    if (op.forward && g == 0 && s_.input.enabled && op.micro % s_.microbatches == 0) {
      if (ready_batches_ == 0) {
        host_waiting_input_ = true;
        st.compute.set_empty_queue_cause(kIdleInput);
        return;
      }
      --ready_batches_;
      produce();
      st.compute.set_empty_queue_cause(kIdleHost);
    }
    if (st.next_op == 0) {
      // Once per step: the data-loader hand-off, zero_grad and the loop's own work.
      st.host.submit(dur(s_.framework.host_per_step_s), trace_ != nullptr ? "step overhead" : "",
                     "host", {});
    }
    const int step = st.host_step;
    const std::size_t index = st.next_op++;
    if (op.forward) {
      launch_forward(k, step, g, op.micro);
    } else {
      launch_backward(
          k, step, g, op.micro,
          static_cast<int>(index) == st.last_backward[static_cast<std::size_t>(op.chunk)]);
    }
    st.host.submit(Time::zero(), [this, k] { host_next(k); });
  }

  // ZeRO-3: the host issues the all-gather of a layer's parameters on the communication stream
  // ahead of its kernels (FSDP's prefetch), and its first kernel waits for it.
  sim::Gate* zero_gather(int k, const Layer& l) {
    if (s_.zero < 3 || s_.data_parallel < 2 || l.params == 0) return nullptr;
    StageDev& st = stage(k);
    st.zero_gates.emplace_back(kIdleZero);
    sim::Gate* gate = &st.zero_gates.back();
    gate->add();
    const double bytes = static_cast<double>(l.params) * activation_bytes_per_element(s_);
    const double t = dp_.dense_s(col::Op::allgather, bytes);
    st.host.submit(Time::zero(), [this, k, gate, t, bytes] {
      stage(k).gather.submit(ports_.collective(k, dp_port_, col::Op::allgather, ranks_, bytes, t),
                             trace_ != nullptr ? "zero all-gather" : "", "comm",
                             [gate] { gate->done(); });
    });
    return gate;
  }

  void launch_pass(int k, const PassWork& w, int category, const char* what, const Layer& layer,
                   sim::Gate* gate, sim::DeviceStream::Done on_done) {
    // The first item waits on `gate`; `on_done` fires after the last.
    std::size_t left = w.before.size() + w.kernels.size() + w.after.size();
    const auto one = [&](const Launch& l, int cat) {
      --left;
      sim::Gate* g = gate;
      gate = nullptr;
      dispatch(k, l, cat, label(k, what, layer.name, l), g,
               left == 0 ? std::move(on_done) : sim::DeviceStream::Done());
    };
    // A tensor-parallel collective: a fixed-length item without the shared network; on it, the
    // NCCL kernel's launch starts the group's collective when the device reaches it, and the
    // stream waits until it ends (Megatron-LM runs them on the compute stream).
    const auto tp = [&](const Launch& l, const TpTransfer& x) {
      if (ports_.network() == nullptr) {
        one(l, kTpComm);
        return;
      }
      --left;
      sim::Gate* g = gate;
      gate = nullptr;
      sim::Gate* ended = tp_gate(k);
      Launch start = l;
      start.device_s = 0;
      const TpTransfer* xp = &x;
      dispatch(k, start, kTpComm, label(k, what, layer.name, l), g, [this, k, xp, ended] {
        stage(k).tp.submit(
            ports_.collective(k, tp_port_, xp->op, s_.tensor_parallel, xp->bytes, xp->standalone_s),
            trace_ != nullptr ? tp_label(xp->op, xp->bytes) : std::string(), "tp comm",
            [ended] { ended->done(); });
      });
      device_marker(k, ended, left == 0 ? std::move(on_done) : sim::DeviceStream::Done(), kTpComm);
    };
    for (std::size_t i = 0; i < w.before.size(); ++i)
      tp(w.before[i], w.before_tp[i]);
    for (const Launch& l : w.kernels)
      one(l, category);
    for (std::size_t i = 0; i < w.after.size(); ++i)
      tp(w.after[i], w.after_tp[i]);
    if (left == 0 && (gate != nullptr || on_done)) device_marker(k, gate, std::move(on_done));
  }

  std::string tp_label(col::Op op, double bytes) const {
    const char* name = op == col::Op::allreduce        ? "all-reduce "
                       : op == col::Op::allgather      ? "all-gather "
                       : op == col::Op::reduce_scatter ? "reduce-scatter "
                                                       : "collective ";
    return std::string("tensor-parallel ") + name + format_mb(bytes) + " x " +
           std::to_string(s_.tensor_parallel) + " ranks";
  }

  // The gate a tensor-parallel collective's end opens, from a ring per stage: the host runs at
  // most CUDA's launch queue ahead of the device, so a gate is reused long after its marker
  // passed.
  sim::Gate* tp_gate(int k) {
    static constexpr std::size_t kRing = 4096;
    StageDev& st = stage(k);
    if (st.tp_gates.size() < kRing) {
      st.tp_gates.emplace_back(kTpComm);
      st.tp_gates.back().add();
      return &st.tp_gates.back();
    }
    sim::Gate& g = st.tp_gates[st.next_tp_gate++ % kRing];
    if (!g.open()) throw std::logic_error("tensor-parallel gate ring overrun");
    g.reset();
    g.add();
    return &g;
  }

  void launch_forward(int k, int step, int g, int micro) {
    const Chunk& c = plan_.chunks[static_cast<std::size_t>(g)];
    const auto& layers = plan_.rank_model.layers;
    const auto& work = work_[size_class(micro)];
    sim::Gate* in = g > 0 ? &arrival_gate(step, g, micro, false) : nullptr;
    for (int i = c.first_layer; i < c.first_layer + c.layers; ++i) {
      const Layer& layer = layers[static_cast<std::size_t>(i)];
      if (sim::Gate* z = zero_gather(k, layer)) {
        if (in != nullptr) device_marker(k, in, {});
        in = z;
      }
      const bool last = i + 1 == c.first_layer + c.layers;
      sim::DeviceStream::Done done;
      if (last && g + 1 < shape_.chunks()) {
        done = [this, k, step, g, micro] { send(k, step, g, micro, true); };
      }
      launch_pass(k, work[static_cast<std::size_t>(i)].forward, kCompute, "fwd", layer, in,
                  std::move(done));
      in = nullptr;
    }
  }

  void launch_backward(int k, int step, int g, int micro, bool last_of_chunk) {
    StageDev& st = stage(k);
    const Chunk& c = plan_.chunks[static_cast<std::size_t>(g)];
    const auto& layers = plan_.rank_model.layers;
    const auto& work = work_[size_class(micro)];
    sim::Gate* in = g + 1 < shape_.chunks() ? &arrival_gate(step, g, micro, true) : nullptr;
    const bool dense = s_.comm.compression == Compression::none;
    // Gradient accumulation reduces only the last micro-batch's gradients (DDP's no_sync,
    // Megatron's distributed optimizer); ZeRO-2/3 keep only their shard, so every backward
    // reduce-scatters (DeepSpeed stage 2, FSDP without no_sync).
    const bool reduces = !s_.inference && dense && ranks_ > 1 && (last_of_chunk || s_.zero >= 2);
    for (int i = c.first_layer + c.layers; i-- > c.first_layer;) {
      const Layer& layer = layers[static_cast<std::size_t>(i)];
      const LayerWork& w = work[static_cast<std::size_t>(i)];
      if (sim::Gate* z = zero_gather(k, layer)) {
        if (in != nullptr) device_marker(k, in, {});
        in = z;
      }
      if (!w.recompute.kernels.empty()) {
        launch_pass(k, w.recompute, kRecompute, "recompute", layer, in, {});
        in = nullptr;
      }
      st.bucket += static_cast<double>(layer.params) * grad_bytes_;
      const bool flush = reduces && (st.bucket >= s_.comm.bucket_bytes ||
                                     (i == c.first_layer && st.bucket > 0) || s_.zero >= 3);
      const bool first_layer = i == c.first_layer;
      sim::DeviceStream::Done done;
      const double bytes = st.bucket;
      const bool send_back = first_layer && g > 0;
      if (flush || send_back) {
        done = [this, k, step, g, micro, flush, send_back, bytes] {
          if (flush) bucket_ready(k, bytes);
          if (send_back) send(k, step, g, micro, false);
        };
      }
      launch_pass(k, w.backward, kCompute, "bwd", layer, in, std::move(done));
      in = nullptr;
      if (flush || !reduces) st.bucket = 0;
    }
  }

  // An activation (forward) or gradient (backward) leaves chunk g for its neighbour's stage.
  void send(int k, int step, int g, int micro, bool forward) {
    StageDev& st = stage(k);
    const int z = size_class(micro);
    const int from = forward ? g : g - 1;  // the boundary after chunk `from`
    const int to_chunk = forward ? g + 1 : g - 1;
    const int to = plan_.chunks[static_cast<std::size_t>(to_chunk)].stage;
    sim::Gate* gate = &arrival_gate(step, to_chunk, micro, !forward);
    (forward ? st.send_fwd : st.send_bwd)
        .submit(ports_.send(k, to, send_port_, send_bytes(from, z), link_.latency_s,
                            link_.bw_bytes_per_s),
                trace_ != nullptr ? (forward ? "send activations" : "send gradients") : "",
                "transfer", [gate] { gate->done(); });
  }

  // ---- the data-parallel collectives ----
  void bucket_ready(int k, double bytes) {
    if (s_.comm.overlap) {
      submit_collective(k, bytes);
    } else {
      deferred_[static_cast<std::size_t>(k)].push_back(bytes);
    }
  }

  void submit_collective(int k, double bytes) {
    StageDev& st = stage(k);
    const col::Op op = s_.zero >= 1 ? col::Op::reduce_scatter : col::Op::allreduce;
    const double t = dp_.dense_s(op, bytes);
    if (step_end_.empty() && k == 0) ++buckets_per_step_;
    st.comm_gate.add();
    std::string what;
    if (trace_ != nullptr) {
      what = std::string(op == col::Op::allreduce
                             ? std::string(col::algorithm_name(s_.comm.algorithm)) + " allreduce "
                             : "reduce-scatter ") +
             format_mb(bytes) + " x " + std::to_string(ranks_) + " ranks";
    }
    // The collective's kernel shares the device from its start, for its standalone duration
    // (the contended one is known only at its end).
    sim::TransferStream::Done started;
    if (s_.comm.contention)
      started = [this, k, bytes, t] { share_device(k, bytes, engine_.now(), t); };
    const std::string_view link_label =
        trace_ != nullptr && k == 0 ? keep(st, what) : std::string_view();
    // A parameter-server worker pushes and pulls the bucket once each way, not a ring's
    // 2(n-1)/n (Li et al., "Scaling Distributed Machine Learning with the Parameter Server",
    // OSDI 2014, Sec. 3.2 "Range Push and Pull").
    const bool push_pull =
        op == col::Op::allreduce && s_.comm.algorithm == col::Algorithm::parameter_server;
    st.comm.submit(
        push_pull ? ports_.exchange(k, dp_port_, bytes, t)
                  : ports_.collective(k, dp_port_, op, ranks_, bytes, t),
        std::move(what), "comm",
        [this, k, link_label] {
          StageDev& sd = stage(k);
          if (!link_label.empty())
            trace_->span(link_track_, link_label, "link", sd.comm.finished_start(), engine_.now());
          sd.comm_gate.done();
        },
        std::move(started));
  }

  // The collective's kernel shares the device with the compute it overlaps. NCCL launches one
  // thread block per channel (NVIDIA/nccl src/enqueue.cc, ncclLaunchKernel: `dim3 grid =
  // {(unsigned)nChannels, 1, 1}`; the NCCL docs' NCCL_MIN_CTAS / NCCL_MAX_CTAS bound the same
  // count), and a block holds its SM for the whole collective, so compute kernels run on
  // compute_units - channels SMs. Its reductions stream (P-1)/P of the bucket through DRAM per
  // rank (read 2, write 1, as sim/collectives/kernels.hpp prices them) over the collective's
  // duration; memory-bound kernels get the rest of the bandwidth. Whether a kernel is compute-
  // or memory-bound is its class (sim::is_compute_class), the kernel-time model's own split.
  void share_device(int k, double bytes, Time start, double seconds) {
    if (seconds <= 0) return;
    const sim::AcceleratorSpec& acc = s_.cluster.accelerator;
    const int units = std::max(1, acc.compute_units);
    // At least one SM is left to compute (a profile with more channels than SMs).
    const int blocks = std::min(dp_.dense_allreduce_channels(bytes), units - 1);
    const double compute_slowdown =
        units > 1 ? static_cast<double>(units) / (units - std::max(0, blocks)) : 1.0;
    const col::KernelCosts kc{acc, s_.cluster.host, sim::Dtype::fp32, true};
    const double reduced = (ranks_ - 1.0) / ranks_ * bytes;
    const double dram_bytes_per_s = kc.reduction(reduced).bytes / seconds;
    // estimate: at most 90% of DRAM to the reduction, so memory-bound kernels keep progressing
    // (the fused reduction's flow cap, sim/collectives/algorithms.cpp, keeps it below the
    // accelerator's achieved memory rate anyway).
    const double memory_share = acc.memory_bw_bytes_per_s > 0
                                    ? std::min(0.9, dram_bytes_per_s / acc.memory_bw_bytes_per_s)
                                    : 0.0;
    stage(k).compute.share(start, start + dur(seconds), compute_slowdown, memory_share);
  }

  void sparse_exchange() {
    StageDev& st = stage(0);
    const double m = static_cast<double>(s_.model.params());
    const double t = dp_.sparse_allreduce_s(m);
    if (step_end_.empty()) buckets_per_step_ = 1;
    st.comm_gate.add();
    // Its messages are k-element slices (latency-bound): they share no port here.
    sim::Transfer x;
    x.standalone_s = t;
    st.comm.submit(x,
                   trace_ != nullptr
                       ? std::string(compression_name(s_.comm.compression)) + " sparse allreduce"
                       : "",
                   "comm", [this] { stage(0).comm_gate.done(); });
  }

  // ---- end of the step ----
  void host_after_backward(int k) {
    StageDev& st = stage(k);
    const int step = st.host_step;
    const bool sparse = s_.comm.compression != Compression::none && ranks_ > 1;
    if (sparse) {
      // Top-k needs the whole gradient: select after backward, then exchange.
      for (const Launch& l : topk_)
        dispatch(k, l, kCompute, trace_ != nullptr ? "top-k selection" : "", nullptr,
                 [this] { sparse_exchange(); });
    } else if (!s_.comm.overlap && ranks_ > 1) {
      // Without overlap the buckets are reduced once backward is done on the device.
      device_marker(k, nullptr, [this, k] {
        auto& d = deferred_[static_cast<std::size_t>(k)];
        for (double bytes : d)
          submit_collective(k, bytes);
        d.clear();
      });
    }
    // The stage's gradients are reduced: it joins the step's optimizer sync (Megatron-LM and
    // DeepSpeed reduce the gradient norm and the fp16 overflow flag over the model-parallel
    // group before stepping; a single stage just waits for its own collectives).
    sim::Gate* sync = &sync_gates_[static_cast<std::size_t>(step)];
    device_marker(k, &st.comm_gate, [sync] { sync->done(); });
    if (s_.framework.host_syncs_per_step >= 1) {
      // The host waits until the gradients are reduced everywhere (the grad-scaler's inf check
      // reads a device value).
      device_marker(k, sync, [this, k] { host_optimizer(k); });
    } else {
      host_optimizer(k);
    }
  }

  void host_optimizer(int k) {
    StageDev& st = stage(k);
    const int step = st.host_step;
    sim::Gate* sync = &sync_gates_[static_cast<std::size_t>(step)];
    const auto& opt = st.optimizer;
    // ZeRO-1/2: the updated shards are all-gathered back into every rank's parameters before
    // the next forward (Megatron-LM's distributed optimizer without --overlap-param-gather).
    const bool gather = s_.zero >= 1 && s_.zero < 3 && ranks_ > 1;
    sim::Gate* zgate = nullptr;
    if (gather) {
      st.zero_gates.emplace_back(kIdleZero);
      zgate = &st.zero_gates.back();
      zgate->add();
    }
    const auto finished = [this, k, zgate]() -> sim::DeviceStream::Done {
      if (zgate == nullptr) return [this, k] { stage_step_done(k); };
      return [this, k, zgate] {
        StageDev& sd = stage(k);
        const double bytes = sd.params * activation_bytes_per_element(s_);
        sd.comm.submit(ports_.collective(k, dp_port_, col::Op::allgather, ranks_, bytes,
                                         dp_.dense_s(col::Op::allgather, bytes)),
                       trace_ != nullptr ? "param all-gather" : "", "comm",
                       [zgate] { zgate->done(); });
      };
    };
    for (std::size_t i = 0; i < opt.size(); ++i) {
      const bool last = i + 1 == opt.size();
      // The first optimizer kernel waits for every stage's reduced gradients.
      dispatch(k, opt[i], kOptimizer, trace_ != nullptr ? opt[i].what : std::string_view(),
               i == 0 ? sync : nullptr, last ? finished() : sim::DeviceStream::Done());
    }
    if (opt.empty()) device_marker(k, sync, finished(), kOptimizer);
    if (zgate != nullptr)
      device_marker(
          k, zgate, [this, k] { stage_step_done(k); }, kOptimizer);
    st.host.submit(Time::zero(), [this, k] { host_end_of_step(k); });
  }

  void host_end_of_step(int k) {
    StageDev& st = stage(k);
    ++st.host_step;
    if (s_.framework.host_syncs_per_step >= 2 && st.device_step < st.host_step) {
      st.host_waits_step_end = true;  // loss.item(): the next step starts when this one is done
      return;
    }
    host_step(k);
  }

  void stage_step_done(int k) {
    StageDev& st = stage(k);
    ++st.device_step;
    if (st.device_step > static_cast<int>(step_end_.size())) {
      int done = 0;
      for (const auto& sd : stages_)
        done += sd->device_step > static_cast<int>(step_end_.size()) ? 1 : 0;
      if (done == shape_.stages) step_done();
    }
    if (st.host_waits_step_end && st.device_step >= st.host_step) {
      st.host_waits_step_end = false;
      host_step(k);
    }
  }

  Snapshot snapshot(const StageDev& st) const {
    Snapshot sn;
    sn.totals = st.compute.totals();
    sn.comm_s = st.comm.busy_time().seconds() + st.gather.busy_time().seconds();
    sn.host_s = st.host.busy_time().seconds();
    sn.interference_s = st.compute.interference();
    // A Launch of count n is n kernels; the tensor-parallel NCCL kernels on the network too.
    sn.kernels = static_cast<double>(st.compute.launches() + st.tp.items());
    return sn;
  }

  void step_done() {
    step_end_.push_back(engine_.now().seconds());
    if (trace_ != nullptr) {
      trace_->instant(stage(0).compute_track, "step " + std::to_string(step_end_.size()) + " end",
                      engine_.now());
    }
    const int n = static_cast<int>(step_end_.size());
    if (n == s_.warmup_steps || n == s_.steps) {
      for (auto& sd : stages_)
        (n == s_.warmup_steps ? sd->start : sd->end) = snapshot(*sd);
      (n == s_.warmup_steps ? h2d_busy_start_s_ : h2d_busy_end_s_) = h2d_.busy_time().seconds();
      (n == s_.warmup_steps ? h2d_copies_start_ : h2d_copies_end_) =
          static_cast<double>(h2d_.items());
    }
  }

  // ---- host input pipeline: workers make fresh batches, copied to the device ahead of use ----
  void produce() {
    // The prefetch queue holds prefetch_batches fresh groups, each worth echo_factor batches.
    if (producing_ || ready_batches_ + copying_ >= s_.input.prefetch_batches * s_.input.echo_factor)
      return;
    producing_ = true;
    const bool named = trace_ != nullptr;
    workers_.submit(dur(upstream_.read_s), named ? "read" : "", "input", {});
    workers_.submit(dur(upstream_.decode_s), named ? "decode" : "", "input", {});
    workers_.submit(dur(upstream_.augment_s), named ? "augment" : "", "input", {});
    workers_.submit(dur(upstream_.batch_s), named ? "batch" : "", "input", [this] {
      producing_ = false;
      for (int i = 0; i < s_.input.echo_factor; ++i) {
        ++copying_;
        h2d_.submit(ports_.copy_in(0, h2d_bytes_, h2d_s_),
                    trace_ != nullptr ? (i == 0 ? "h2d batch" : "h2d echoed batch") : "", "h2d",
                    [this] { batch_copied(); });
      }
      produce();
    });
  }

  void batch_copied() {
    --copying_;
    ++ready_batches_;
    if (host_waiting_input_) {
      host_waiting_input_ = false;
      host_next(0);
    }
  }

  void setup_trace() {
    // One data-parallel replica (and one tensor-parallel rank per stage) is simulated; the
    // others are identical, so its tracks stand for all.
    for (int k = 0; k < shape_.stages; ++k) {
      StageDev& st = stage(k);
      const std::string dev =
          shape_.stages > 1 ? "stage " + std::to_string(k) + " / gpu" : "replica 0 / gpu0";
      const std::string host =
          shape_.stages > 1 ? "stage " + std::to_string(k) + " / host" : "replica 0 / host0";
      st.compute_track = trace_->track(dev, "compute");
      st.compute.trace_to(*trace_, st.compute_track);
      st.compute.trace_idle(kIdleBubble, "pipeline bubble", "bubble");
      st.compute.trace_idle(kIdleInput, "waiting for an input batch", "stall");
      st.compute.trace_idle(kIdleComm, "waiting for gradient collectives", "stall");
      st.compute.trace_idle(kIdleZero, "waiting for a ZeRO all-gather", "stall");
      // On the shared network a tensor-parallel collective is the compute stream waiting for
      // its transfer (on the stream's own track).
      st.compute.trace_idle(kTpComm, "tensor-parallel collective", "tp comm");
      st.comm_track = trace_->track(dev, "comm (gradient collectives)");
      st.comm.trace_to(*trace_, st.comm_track);
      if (s_.zero >= 3)
        st.gather.trace_to(*trace_, trace_->track(dev, "comm (ZeRO-3 all-gathers)"));
      if (s_.tensor_parallel > 1 && ports_.network() != nullptr)
        st.tp.trace_to(*trace_, trace_->track(dev, "comm (tensor-parallel collectives)"));
      if (shape_.chunks() > 1) {
        st.send_fwd.trace_to(*trace_, trace_->track(dev, "send activations"));
        st.send_bwd.trace_to(*trace_, trace_->track(dev, "send gradients"));
      }
      st.host.trace_to(*trace_, trace_->track(host, "framework thread (launches)"));
    }
    if (ranks_ > 1 && !s_.inference) {
      link_track_ =
          trace_->track("links", ring_path_name(dp_scenario_.cluster, ranks_) + " (collectives)");
    }
    h2d_track_ =
        trace_->track(shape_.stages > 1 ? "stage 0 / gpu" : "replica 0 / gpu0", "h2d copy");
    h2d_.trace_to(*trace_, h2d_track_);
    workers_.trace_to(
        *trace_,
        trace_->track(shape_.stages > 1 ? "stage 0 / host" : "replica 0 / host0", "input workers"));
  }

  const Scenario& s_;
  const MeshPlan& plan_;
  sim::TraceRecorder* trace_;  // not owned; null: no trace
  sim::Engine engine_;
  MeshShape shape_;
  int total_micro_ = 1;
  Scenario dp_scenario_;
  Scenario tp_scenario_;
  CollectiveCoster dp_;
  CollectiveCoster tp_;
  StageLink link_;
  std::vector<std::unique_ptr<StageDev>> stages_;
  std::array<std::vector<LayerWork>, 2> work_;  // per micro-batch size class, per layer
  std::vector<Launch> topk_;                    // Top-k selection before a sparse exchange
  std::deque<sim::Gate> arrival_gates_;
  std::deque<sim::Gate> sync_gates_;  // per step: every stage's gradients reduced
  std::map<int, std::vector<double>> deferred_;
  double sizes_[2] = {0, 0};
  int big_micro_ = 0;
  // Input pipeline (feeds stage 0).
  StepNetwork ports_;           // the network all of the step's traffic shares
  Port dp_port_ = Port::nic;    // the port the data-parallel collectives cross
  Port send_port_ = Port::nic;  // the port pipeline sends cross
  Port tp_port_ = Port::intra;  // the port tensor-parallel collectives cross
  sim::TransferStream h2d_{engine_, ports_.network()};
  sim::Stream workers_{engine_};
  UpstreamStages upstream_;
  double h2d_s_ = 0;
  int ready_batches_ = 0;
  int copying_ = 0;
  bool producing_ = false;
  bool host_waiting_input_ = false;
  sim::TraceRecorder::TrackId h2d_track_ = 0;
  sim::TraceRecorder::TrackId link_track_ = 0;
  double h2d_bytes_ = 0;
  double h2d_busy_start_s_ = 0;
  double h2d_busy_end_s_ = 0;
  double h2d_copies_start_ = 0;
  double h2d_copies_end_ = 0;
  double grad_bytes_ = 4;
  int ranks_ = 1;
  int buckets_per_step_ = 0;
  std::vector<double> step_end_;
};

// With echoing, batches arrive in groups of echo_factor and steps take grad_accum of them:
// measure whole periods so the average is the steady-state rate, not a phase of the group.
Scenario with_whole_echo_periods(const Scenario& s) {
  Scenario m = s;
  if (s.input.enabled && s.input.echo_factor > 1) {
    const int period = s.input.echo_factor / std::gcd(s.input.echo_factor, s.grad_accum);
    const int n = s.steps - s.warmup_steps;
    m.steps = s.warmup_steps + (n + period - 1) / period * period;
  }
  return m;
}

double finite_or_zero(double v) {
  return std::isfinite(v) ? v : 0.0;
}

StepReport run_mesh(const Scenario& s, const MeshPlan& plan, sim::TraceRecorder* trace) {
  MeshSim sim(s, plan, trace);
  StepReport r = sim.run();
  sim.stage_costs(r.stages);
  return r;
}

// Long gradient accumulation: the rounds between the first and the last are identical in the
// steady state, so a step of G rounds costs T(a) + (G - a) (T(a + 1) - T(a)) for any a >= 2.
// Simulating a and a + 1 and extending linearly gives the G-round step (and its breakdown) at the
// cost of a + 1 rounds; the report says it did so. Traces and echoing (whose period depends on G)
// are simulated in full.
constexpr int kMaxSimulatedMicroSteps = 8;

StepReport run_accumulated(const Scenario& s, const MeshPlan& plan, sim::TraceRecorder* trace) {
  if (s.grad_accum <= kMaxSimulatedMicroSteps || trace != nullptr ||
      (s.input.enabled && s.input.echo_factor > 1)) {
    StepReport r = run_mesh(s, plan, trace);
    r.micro_steps_simulated = s.grad_accum;
    return r;
  }
  const int a = kMaxSimulatedMicroSteps / 2;
  Scenario sa = s;
  sa.grad_accum = a;
  Scenario sb = s;
  sb.grad_accum = a + 1;
  StepReport r = run_mesh(sa, plan, nullptr);
  const StepReport rb = run_mesh(sb, plan, nullptr);
  const double extra = s.grad_accum - a;
  const auto extend = [&](double& v, double vb) { v += extra * (vb - v); };
  extend(r.step_time_s, rb.step_time_s);
  extend(r.breakdown.compute_s, rb.breakdown.compute_s);
  extend(r.breakdown.recompute_s, rb.breakdown.recompute_s);
  extend(r.breakdown.host_s, rb.breakdown.host_s);
  extend(r.breakdown.exposed_comm_s, rb.breakdown.exposed_comm_s);
  extend(r.breakdown.input_stall_s, rb.breakdown.input_stall_s);
  extend(r.breakdown.bubble_s, rb.breakdown.bubble_s);
  extend(r.breakdown.optimizer_s, rb.breakdown.optimizer_s);
  extend(r.breakdown.tp_comm_s, rb.breakdown.tp_comm_s);
  extend(r.breakdown.zero_comm_s, rb.breakdown.zero_comm_s);
  extend(r.comm_time_s, rb.comm_time_s);
  extend(r.comm_interference_s, rb.comm_interference_s);
  extend(r.kernels_per_step, rb.kernels_per_step);
  extend(r.host_busy_s, rb.host_busy_s);
  for (std::size_t k = 0; k < r.stages.size(); ++k) {
    extend(r.stages[k].busy_s, rb.stages[k].busy_s);
    extend(r.stages[k].bubble_s, rb.stages[k].bubble_s);
  }
  r.events += rb.events;
  r.wall_s += rb.wall_s;
  r.micro_steps_simulated = a + 1;
  return r;
}

MemoryReport memory_report(const Scenario& s, const MeshPlan& plan) {
  std::size_t worst = 0;
  for (std::size_t k = 0; k < plan.memory.size(); ++k) {
    if (plan.memory[k].peak_bytes > plan.memory[worst].peak_bytes) worst = k;
  }
  const StageMemory& wm = plan.memory[worst];
  MemoryReport m;
  m.weights_bytes = wm.weights_bytes;
  m.gradients_bytes = wm.gradients_bytes;
  m.optimizer_state_bytes = wm.optimizer_state_bytes;
  m.activations_bytes = wm.activations_bytes;
  m.workspace_bytes = wm.workspace_bytes;
  m.peak_bytes_per_device = wm.peak_bytes;
  m.capacity_bytes = wm.capacity_bytes;
  m.fits = true;
  for (const StageMemory& sm : plan.memory)
    m.fits = m.fits && sm.fits;
  m.max_batch_that_fits = plan.max_batch_that_fits;
  m.max_microbatch_that_fits = (plan.max_batch_that_fits + s.microbatches - 1) / s.microbatches;
  return m;
}

void check_supported(const Scenario& s) {
  if (s.comm.compression != Compression::none && s.data_parallel > 1 &&
      (s.pipeline_stages > 1 || s.tensor_parallel > 1 || s.zero > 0)) {
    throw InputError("scenario " + s.name + ": communication.compression",
                     "sparsified gradient exchange (" +
                         std::string(compression_name(s.comm.compression)) +
                         ") is modelled for data parallelism only, not with pipeline or tensor "
                         "parallelism or ZeRO");
  }
}

}  // namespace

MemoryReport estimate_memory(const Scenario& s) {
  return memory_report(s, plan_mesh(s));
}

StepReport simulate_training(const Scenario& s, sim::TraceRecorder* trace) {
  check_supported(s);
  const MeshPlan plan = plan_mesh(s);
  Scenario run = with_whole_echo_periods(s);
  run.batch_per_replica = static_cast<int>(plan.batch);
  StepReport r = run_accumulated(run, plan, trace);
  if (s.input.enabled && s.input.echo_factor > 1) {
    // The speedup echoing buys: the same scenario without echoing, simulated the same way.
    Scenario plain = run;
    plain.steps = s.steps;
    plain.input.echo_factor = 1;
    const StepReport b = run_mesh(plain, plan, nullptr);
    r.echo_speedup = b.step_time_s / r.step_time_s;
    r.events += b.events;
    r.wall_s += b.wall_s;
  }
  r.scenario = s.name;
  r.model = s.model.name;
  r.cluster = s.cluster.name;
  r.accelerator = s.cluster.accelerator.name;
  r.precision = sim::dtype_name(s.precision);
  r.framework = s.framework.name;
  r.devices = s.devices();
  r.data_parallel = s.data_parallel;
  r.tensor_parallel = s.tensor_parallel;
  r.pipeline_stages = s.pipeline_stages;
  r.zero = s.zero;
  r.global_batch = plan.batch * s.data_parallel * s.grad_accum;
  r.throughput_samples_per_s =
      r.step_time_s > 0 ? static_cast<double>(r.global_batch) / r.step_time_s : 0.0;
  r.echo_speedup = finite_or_zero(r.echo_speedup);
  r.memory = memory_report(s, plan);
  const double passes = s.inference ? 1.0 : 3.0;
  r.model_flops_per_step = passes * 2 * s.model.fwd_macs() * static_cast<double>(r.global_batch);
  const auto peak = s.cluster.accelerator.peak(s.precision);
  r.mfu = peak && r.step_time_s > 0
              ? finite_or_zero(r.model_flops_per_step / (r.step_time_s * r.devices * *peak))
              : 0.0;
  r.sustained_clock = sim::sustained_clock_fraction(s.cluster.accelerator, s.precision);
  r.dilated_conv_fp32_math = dilated_conv_fp32_math(s);
  r.simulated = "one data-parallel replica";
  if (s.tensor_parallel > 1) r.simulated += ", one tensor-parallel rank per stage";
  r.simulated += " (the others are identical)";
  if (s.model.measured) r.workload_note = measured_scaling(s, r.workload_scaled);

  PipelineSummary& p = r.pipeline;
  p.stages = s.pipeline_stages;
  p.microbatches = s.microbatches;
  p.grad_accum = s.grad_accum;
  p.schedule = s.pipeline_stages > 1 ? schedule_name(s.schedule) : "none";
  if (s.virtual_stages > 1) p.schedule = "interleaved 1f1b";
  p.recompute = s.recompute != Recompute::none;
  p.recompute_mode = recompute_name(s.recompute);
  p.virtual_stages = s.virtual_stages;
  p.batch_per_replica = plan.batch;
  p.batch_source = plan.batch_was_max ? "largest that fits" : "given";
  p.max_batch_that_fits = plan.max_batch_that_fits;
  p.ideal_bubble_fraction =
      s.pipeline_stages > 1 ? ideal_bubble_fraction(s.schedule, s.pipeline_stages, s.microbatches,
                                                    s.grad_accum, s.virtual_stages)
                            : 0.0;
  for (std::size_t ci = 0; ci < plan.chunks.size(); ++ci) {
    const Chunk& c = plan.chunks[ci];
    StageReport& sr = r.stages[static_cast<std::size_t>(c.stage)];
    if (ci < static_cast<std::size_t>(s.pipeline_stages)) {
      sr.first_layer = c.first_layer;
      sr.first_layer_name = plan.rank_model.layers[static_cast<std::size_t>(c.first_layer)].name;
    }
    sr.last_layer_name =
        plan.rank_model.layers[static_cast<std::size_t>(c.first_layer + c.layers - 1)].name;
    sr.layers += c.layers;
    sr.params += c.params;
  }
  for (std::size_t k = 0; k < r.stages.size(); ++k) {
    StageReport& sr = r.stages[k];
    sr.memory = plan.memory[k];
    sr.in_flight = sr.memory.in_flight;
    if (s.data_parallel < 2) sr.allreduce_s = 0;
  }
  return r;
}

}  // namespace trainsim::models
