#include "models/training_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "models/collective_cost.hpp"
#include "models/parallel/pipeline_sim.hpp"
#include "sim/core/engine.hpp"
#include "sim/hw/roofline.hpp"
#include "sim/hw/stream.hpp"

namespace trainsim::models {

namespace {

using sim::Time;

double activation_bytes_per_element(const Scenario& s) { return sim::dtype_bytes(s.precision); }

double optimizer_state_bytes_per_param(Optimizer o) {
  switch (o) {
    case Optimizer::sgd: return 0;
    case Optimizer::momentum: return 4;  // one fp32 buffer
    case Optimizer::adam: return 8;      // two fp32 moments
  }
  return 0;
}

bool mixed_precision(const Scenario& s) {
  return s.precision == sim::Dtype::fp16 || s.precision == sim::Dtype::bf16;
}

// Per-sample bytes kept for backward, with recomputation keeping only every sqrt(L)-th layer's
// output plus one segment's activations at a time (Chen et al. 2016).
double saved_bytes_per_sample(const Scenario& s) {
  const double width = activation_bytes_per_element(s);
  const auto& layers = s.model.layers;
  if (!s.recompute || layers.size() < 2) return s.model.saved_bytes(width);
  const std::size_t segment = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(layers.size()))));
  double checkpoints = 0;
  double worst_segment = 0;
  for (std::size_t start = 0; start < layers.size(); start += segment) {
    double seg = 0;
    for (std::size_t i = start; i < std::min(layers.size(), start + segment); ++i) seg += layers[i].saved_bytes(width);
    worst_segment = std::max(worst_segment, seg);
    checkpoints += layers[start].input_elements * width;
  }
  return checkpoints + worst_segment;
}

class ReplicaSim {
 public:
  explicit ReplicaSim(const Scenario& s)
      : s_(s), compute_(engine_), comm_(engine_), h2d_(engine_), host_(engine_) {
    act_bytes_ = activation_bytes_per_element(s);
    grad_bytes_ = sim::dtype_bytes(s.precision);
    ranks_ = s.data_parallel;
    step_end_.reserve(static_cast<std::size_t>(s.steps));
    if (s.input.enabled) {
      const auto& in = s.input;
      const double b = s.batch_per_replica;
      const int e = in.echo_factor;
      // Replicas on one host share its pipeline workers and its storage bandwidth.
      const double replicas_per_host = std::min(s.cluster.accelerators_per_node, s.data_parallel);
      const double workers = std::max(1.0, in.workers / replicas_per_host);
      const double cpu_s = b * (in.read_s_per_sample + in.decode_s_per_sample) +
                           b * in.augment_s_per_sample * (in.echo_before_augment ? e : 1) +
                           b * in.batch_s_per_sample * e;
      const double storage_s = b * in.storage_bytes_per_sample * replicas_per_host /
                               s.cluster.host.storage_read_bw_bytes_per_s;
      upstream_s_ = std::max(cpu_s / workers, storage_s);
      const double in_bytes = b * s.model.input_bytes_per_sample() * (in.input_dtype == "fp32" ? 4.0 : 1.0) /
                              dtype_bytes(s.model.input_dtype);
      h2d_s_ = s.cluster.host_link.latency_s + in_bytes / s.cluster.host_link.bw_bytes_per_s;
    }
  }

  StepReport run() {
    const auto wall0 = std::chrono::steady_clock::now();
    if (s_.input.enabled) produce();
    try_start_step();
    engine_.run();
    if (static_cast<int>(step_end_.size()) != s_.steps) throw std::runtime_error("simulation stalled");
    StepReport r;
    const int measured = s_.steps - s_.warmup_steps;
    const double t0 = s_.warmup_steps == 0 ? 0.0 : step_end_[static_cast<std::size_t>(s_.warmup_steps - 1)];
    r.step_time_s = (step_end_.back() - t0) / measured;
    r.breakdown = measured_;
    for (double* v : {&r.breakdown.compute_s, &r.breakdown.recompute_s, &r.breakdown.exposed_comm_s,
                      &r.breakdown.input_stall_s, &r.breakdown.bubble_s, &r.breakdown.optimizer_s}) {
      *v /= measured;
    }
    r.comm_time_s = comm_measured_s_ / measured;
    r.gradient_bytes = static_cast<double>(s_.model.params()) * grad_bytes_;
    r.buckets = buckets_per_step_;
    r.upstream_batch_s = upstream_s_;
    r.fresh_sample_fraction = s_.input.enabled ? 1.0 / s_.input.echo_factor : 1.0;
    r.events = engine_.stats().events_executed;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  }

 private:
  double kernel_s(double flops, double bytes) const {
    return sim::kernel_time_s(s_.cluster.accelerator, s_.precision, flops, bytes);
  }
  Time dur(double seconds) const { return Time::from_seconds(seconds); }
  bool measuring() const { return static_cast<int>(step_end_.size()) >= s_.warmup_steps; }

  // Host side: make one fresh batch upstream, then hand out `echo_factor` copies of it.
  void produce() {
    // The prefetch buffer sits upstream of the echo stage: it holds prefetch_batches fresh
    // batches, each worth echo_factor batches downstream.
    if (producing_ || ready_batches_ + copying_ >= s_.input.prefetch_batches * s_.input.echo_factor) return;
    producing_ = true;
    host_.submit(dur(upstream_s_), [this] {
      producing_ = false;
      for (int i = 0; i < s_.input.echo_factor; ++i) {
        ++copying_;
        h2d_.submit(dur(h2d_s_), [this] {
          --copying_;
          ++ready_batches_;
          try_start_step();
        });
      }
      produce();
    });
  }

  void try_start_step() {
    if (step_running_ || static_cast<int>(step_end_.size()) == s_.steps) return;
    if (s_.input.enabled && ready_batches_ == 0) {
      if (!waiting_) {
        waiting_ = true;
        wait_start_ = engine_.now();
      }
      return;
    }
    if (waiting_) {
      waiting_ = false;
      if (measuring()) measured_.input_stall_s += (engine_.now() - wait_start_).seconds();
    }
    if (s_.input.enabled) {
      --ready_batches_;
      produce();
    }
    step_running_ = true;
    if (step_end_.empty() && !s_.input.enabled) wait_start_ = engine_.now();
    run_microstep(0);
  }

  void run_microstep(int micro) {
    const auto& layers = s_.model.layers;
    const double b = s_.batch_per_replica;
    const bool last_micro = micro == s_.grad_accum - 1;
    for (const Layer& l : layers) {
      const double t = kernel_s(b * l.fwd_flops,
                                (b * (l.input_elements + l.output_elements)) * act_bytes_ + l.params * act_bytes_);
      if (measuring()) measured_.compute_s += t;
      compute_.submit(dur(t), {});
    }
    if (s_.inference) {
      compute_.submit(Time::zero(), [this] { finish_step(); });
      return;
    }
    double bucket = 0;
    for (std::size_t i = layers.size(); i-- > 0;) {
      const Layer& l = layers[i];
      if (s_.recompute) {
        const double t = kernel_s(b * l.fwd_flops,
                                  (b * (l.input_elements + l.output_elements)) * act_bytes_ + l.params * act_bytes_);
        if (measuring()) measured_.recompute_s += t;
        compute_.submit(dur(t), {});
      }
      const double t = kernel_s(b * l.bwd_flops(), 2 * (b * (l.input_elements + l.output_elements)) * act_bytes_ +
                                                       2 * l.params * act_bytes_);
      if (measuring()) measured_.compute_s += t;
      bucket += static_cast<double>(l.params) * grad_bytes_;
      const bool last_layer = i == 0;
      const bool dense = s_.comm.compression == "none";
      if (last_micro && dense && ranks_ > 1 && (bucket >= s_.comm.bucket_bytes || (last_layer && bucket > 0))) {
        const double bytes = bucket;
        bucket = 0;
        ++pending_comm_;
        compute_.submit(dur(t), [this, bytes] { launch_allreduce(bytes); });
      } else {
        compute_.submit(dur(t), {});
      }
    }
    compute_.submit(Time::zero(), [this, micro, last_micro] {
      if (!last_micro) {
        run_microstep(micro + 1);
        return;
      }
      backward_done_ = true;
      backward_end_ = engine_.now();
      if (s_.comm.compression != "none" && ranks_ > 1) {
        sparse_exchange();
      } else if (!s_.comm.overlap) {
        for (double bytes : deferred_) submit_allreduce(bytes);
        deferred_.clear();
      }
      maybe_optimize();
    });
  }

  void launch_allreduce(double bytes) {
    if (s_.comm.overlap) {
      submit_allreduce(bytes);
    } else {
      deferred_.push_back(bytes);
    }
  }

  void submit_allreduce(double bytes) {
    const double t = allreduce_time_s(s_.cluster, s_.comm, ranks_, bytes);
    if (measuring()) comm_measured_s_ += t;
    if (step_end_.empty()) ++buckets_per_step_;
    comm_.submit(dur(t), [this] {
      --pending_comm_;
      maybe_optimize();
    });
  }

  // Top-k / gTop-k: select k of m gradients (with error-feedback residual) on the device, then
  // exchange the sparse values; needs the whole gradient, so it follows backward.
  void sparse_exchange() {
    const double m = static_cast<double>(s_.model.params());
    // Selection reads gradient and residual, writes residual: about 3 passes over m elements.
    const double select_s = kernel_s(4 * m, 3 * m * grad_bytes_);
    if (measuring()) measured_.compute_s += select_s;
    ++pending_comm_;
    compute_.submit(dur(select_s), [this, m] {
      const double t = sparse_allreduce_time_s(s_.cluster, s_.comm, ranks_, m, grad_bytes_);
      if (measuring()) comm_measured_s_ += t;
      if (step_end_.empty()) buckets_per_step_ = 1;
      comm_.submit(dur(t), [this] {
        --pending_comm_;
        maybe_optimize();
      });
    });
  }

  void maybe_optimize() {
    if (!backward_done_ || pending_comm_ > 0) return;
    backward_done_ = false;
    if (measuring()) measured_.exposed_comm_s += (engine_.now() - backward_end_).seconds();
    const double p = static_cast<double>(s_.model.params());
    // Read and write fp32 weights, state and the gradient once each.
    const double bytes = 2 * p * (4 + optimizer_state_bytes_per_param(s_.optimizer)) + p * grad_bytes_;
    const double t = kernel_s(4 * p, bytes);
    if (measuring()) measured_.optimizer_s += t;
    compute_.submit(dur(t), [this] { finish_step(); });
  }

  void finish_step() {
    step_end_.push_back(engine_.now().seconds());
    step_running_ = false;
    try_start_step();
  }

  const Scenario& s_;
  sim::Engine engine_;
  sim::Stream compute_;
  sim::Stream comm_;
  sim::Stream h2d_;
  sim::Stream host_;
  double act_bytes_ = 4;
  int grad_bytes_ = 4;
  int ranks_ = 1;
  double upstream_s_ = 0;
  double h2d_s_ = 0;
  int ready_batches_ = 0;
  int copying_ = 0;
  bool producing_ = false;
  bool step_running_ = false;
  bool waiting_ = false;
  Time wait_start_ = Time::zero();
  bool backward_done_ = false;
  Time backward_end_ = Time::zero();
  int pending_comm_ = 0;
  std::vector<double> deferred_;
  int buckets_per_step_ = 0;
  double comm_measured_s_ = 0;
  Breakdown measured_;
  std::vector<double> step_end_;
};

}  // namespace

MemoryReport estimate_memory(const Scenario& s) {
  MemoryReport m;
  const double p = static_cast<double>(s.model.params());
  m.weights_bytes = p * 4 + (mixed_precision(s) ? p * 2 : 0);  // fp32 master (+16-bit copy)
  m.gradients_bytes = s.inference ? 0 : p * sim::dtype_bytes(s.precision);
  m.optimizer_state_bytes = s.inference ? 0 : p * optimizer_state_bytes_per_param(s.optimizer);
  const double per_sample = s.inference ? 0 : saved_bytes_per_sample(s);
  m.activations_bytes = per_sample * s.batch_per_replica;
  m.workspace_bytes = s.workspace_bytes;
  const double fixed = m.weights_bytes + m.gradients_bytes + m.optimizer_state_bytes + m.workspace_bytes;
  m.peak_bytes_per_device = fixed + m.activations_bytes;
  m.capacity_bytes = s.cluster.accelerator.memory_capacity_bytes;
  m.fits = m.peak_bytes_per_device <= m.capacity_bytes;
  if (per_sample <= 0) {
    m.max_batch_that_fits = fixed <= m.capacity_bytes ? s.batch_per_replica : 0;
  } else {
    m.max_batch_that_fits = fixed >= m.capacity_bytes
                                ? 0
                                : static_cast<std::int64_t>(std::floor((m.capacity_bytes - fixed) / per_sample));
  }
  return m;
}

StepReport simulate_training(const Scenario& s, sim::TraceRecorder* trace) {
  if (s.pipeline_stages > 1 || s.microbatches > 1 || s.batch_max) return simulate_pipeline(s, trace);
  // With echoing, batches arrive in groups of echo_factor: measure whole groups so the average
  // is the steady-state rate, not a phase of the group.
  Scenario measured = s;
  if (s.input.enabled && s.input.echo_factor > 1) {
    const int e = s.input.echo_factor;
    const int n = s.steps - s.warmup_steps;
    measured.steps = s.warmup_steps + (n + e - 1) / e * e;
  }
  ReplicaSim sim(measured);
  StepReport r = sim.run();
  r.scenario = s.name;
  r.model = s.model.name;
  r.cluster = s.cluster.name;
  r.accelerator = s.cluster.accelerator.name;
  r.precision = sim::dtype_name(s.precision);
  r.devices = s.data_parallel * s.pipeline_stages;
  r.data_parallel = s.data_parallel;
  r.global_batch = static_cast<std::int64_t>(s.batch_per_replica) * s.data_parallel * s.grad_accum;
  r.throughput_samples_per_s = r.global_batch / r.step_time_s;
  r.memory = estimate_memory(s);
  return r;
}

}  // namespace trainsim::models
