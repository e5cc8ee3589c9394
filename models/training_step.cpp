#include "models/training_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/collective_cost.hpp"
#include "models/input_pipeline.hpp"
#include "models/parallel/pipeline_sim.hpp"
#include "models/steady_state.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/engine.hpp"
#include "sim/hw/roofline.hpp"
#include "sim/hw/stream.hpp"

namespace trainsim::models {

namespace {

using sim::Time;

double activation_bytes_per_element(const Scenario& s) {
  return sim::dtype_bytes(s.precision);
}

double optimizer_state_bytes_per_param(Optimizer o) {
  switch (o) {
    case Optimizer::sgd:
      return 0;
    case Optimizer::momentum:
      return 4;  // one fp32 buffer
    case Optimizer::adam:
      return 8;  // two fp32 moments
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
  const std::size_t segment =
      static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(layers.size()))));
  double checkpoints = 0;
  double worst_segment = 0;
  for (std::size_t start = 0; start < layers.size(); start += segment) {
    double seg = 0;
    for (std::size_t i = start; i < std::min(layers.size(), start + segment); ++i)
      seg += layers[i].saved_bytes(width);
    worst_segment = std::max(worst_segment, seg);
    checkpoints += layers[start].input_elements * width;
  }
  return checkpoints + worst_segment;
}

std::string format_mb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  return buf;
}

class ReplicaSim {
 public:
  ReplicaSim(const Scenario& s, sim::TraceRecorder* trace)
      : s_(s),
        trace_(trace),
        compute_(engine_),
        comm_(engine_),
        h2d_(engine_),
        host_(engine_),
        collectives_(s, s.data_parallel) {
    act_bytes_ = activation_bytes_per_element(s);
    grad_bytes_ = sim::dtype_bytes(s.precision);
    ranks_ = s.data_parallel;
    step_end_.reserve(static_cast<std::size_t>(s.steps));
    // Replicas on one host share its pipeline workers and its storage bandwidth.
    stages_ = upstream_stages(s, s.batch_per_replica,
                              std::min(s.cluster.accelerators_per_node, s.data_parallel));
    h2d_s_ = h2d_batch_s(s, s.batch_per_replica);
    if (trace_ != nullptr) {
      // One replica is simulated; the others are identical, so its tracks stand for all.
      compute_track_ = trace_->track("replica 0 / gpu0", "compute");
      compute_.trace_to(*trace_, compute_track_);
      comm_.trace_to(*trace_, trace_->track("replica 0 / gpu0", "comm (gradient collectives)"));
      h2d_.trace_to(*trace_, trace_->track("replica 0 / gpu0", "h2d copy"));
      host_.trace_to(*trace_, trace_->track("replica 0 / host0", "input workers"));
      link_track_ = trace_->track("links", ring_path_name(s.cluster, ranks_) + " (collectives)");
    }
  }

  StepReport run() {
    const auto wall0 = std::chrono::steady_clock::now();
    if (s_.input.enabled) produce();
    start_step();
    engine_.run();
    StepReport r;
    r.step_time_s = steady_step_time_s(step_end_, s_.steps, s_.warmup_steps, "simulation");
    const int measured = s_.steps - s_.warmup_steps;
    r.breakdown = measured_;
    for (double* v :
         {&r.breakdown.compute_s, &r.breakdown.recompute_s, &r.breakdown.exposed_comm_s,
          &r.breakdown.input_stall_s, &r.breakdown.bubble_s, &r.breakdown.optimizer_s}) {
      *v /= measured;
    }
    r.comm_time_s = comm_measured_s_ / measured;
    r.gradient_bytes = s_.inference ? 0 : static_cast<double>(s_.model.params()) * grad_bytes_;
    r.buckets = buckets_per_step_;
    r.upstream_batch_s = stages_.total_s();
    r.h2d_batch_s = h2d_s_;
    r.echo_factor = s_.input.enabled ? s_.input.echo_factor : 1;
    r.fresh_sample_fraction = 1.0 / r.echo_factor;
    // Engine events plus those of the flow-level collective runs that priced the buckets.
    r.events = engine_.stats().events_executed + collectives_.events();
    r.collective_model = collectives_.model_name();
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  }

 private:
  double kernel_s(double flops, double bytes) const {
    return sim::kernel_time_s(s_.cluster.accelerator, s_.precision, flops, bytes);
  }
  Time dur(double seconds) const { return Time::from_seconds(seconds); }
  bool measuring() const { return static_cast<int>(step_end_.size()) >= s_.warmup_steps; }
  // Labels are built only when a trace is recorded.
  std::string label(const char* what, const std::string& name) const {
    return trace_ == nullptr ? std::string() : std::string(what) + " " + name;
  }

  // Host side: the worker pool runs the stages of one fresh group, then echo_factor copies of
  // the batch go to the device.
  void produce() {
    // The prefetch queue holds prefetch_batches fresh groups, each worth echo_factor batches.
    if (producing_ || ready_batches_ + copying_ >= s_.input.prefetch_batches * s_.input.echo_factor)
      return;
    producing_ = true;
    const bool named = trace_ != nullptr;
    host_.submit(dur(stages_.read_s), named ? "read" : "", "input", {});
    host_.submit(dur(stages_.decode_s), named ? "decode" : "", "input", {});
    host_.submit(dur(stages_.augment_s), named ? "augment" : "", "input", {});
    host_.submit(dur(stages_.batch_s), named ? "batch" : "", "input", [this] {
      producing_ = false;
      for (int i = 0; i < s_.input.echo_factor; ++i) {
        ++copying_;
        h2d_.submit(dur(h2d_s_),
                    trace_ != nullptr ? (i == 0 ? "h2d batch" : "h2d echoed batch") : "", "h2d",
                    [this] {
                      --copying_;
                      ++ready_batches_;
                      if (waiting_) begin_micro();
                    });
      }
      produce();
    });
  }

  void start_step() {
    if (static_cast<int>(step_end_.size()) == s_.steps) return;
    micro_ = 0;
    begin_micro();
  }

  // A micro-step needs one input batch; the accelerator idles ("input stall") until it has one.
  void begin_micro() {
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
      if (trace_ != nullptr && engine_.now() > wait_start_)
        trace_->span(compute_track_, "input stall (queue empty)", "stall", wait_start_,
                     engine_.now());
    }
    if (s_.input.enabled) {
      --ready_batches_;
      produce();
    }
    run_microstep(micro_);
  }

  double fwd_s(const Layer& l) const {
    const double b = s_.batch_per_replica;
    return kernel_s(b * l.fwd_flops, (b * (l.input_elements + l.output_elements)) * act_bytes_ +
                                         l.params * act_bytes_);
  }

  void run_microstep(int micro) {
    const auto& layers = s_.model.layers;
    const double b = s_.batch_per_replica;
    const bool last_micro = micro == s_.grad_accum - 1;
    for (const Layer& l : layers) {
      const double t = fwd_s(l);
      if (measuring()) measured_.compute_s += t;
      compute_.submit(dur(t), label("fwd", l.name), "compute", {});
    }
    if (s_.inference) {
      compute_.submit(Time::zero(), [this, last_micro] { end_micro(last_micro); });
      return;
    }
    double bucket = 0;
    for (std::size_t i = layers.size(); i-- > 0;) {
      const Layer& l = layers[i];
      if (s_.recompute) {
        const double t = fwd_s(l);
        if (measuring()) measured_.recompute_s += t;
        compute_.submit(dur(t), label("recompute", l.name), "recompute", {});
      }
      const double t = kernel_s(b * l.bwd_flops(),
                                2 * (b * (l.input_elements + l.output_elements)) * act_bytes_ +
                                    2 * l.params * act_bytes_);
      if (measuring()) measured_.compute_s += t;
      bucket += static_cast<double>(l.params) * grad_bytes_;
      const bool last_layer = i == 0;
      const bool dense = s_.comm.compression == "none";
      // Gradient accumulation: only the last micro-step's gradients are reduced.
      if (last_micro && dense && ranks_ > 1 &&
          (bucket >= s_.comm.bucket_bytes || (last_layer && bucket > 0))) {
        const double bytes = bucket;
        bucket = 0;
        ++pending_comm_;
        compute_.submit(dur(t), label("bwd", l.name), "compute",
                        [this, bytes] { launch_allreduce(bytes); });
      } else {
        compute_.submit(dur(t), label("bwd", l.name), "compute", {});
      }
    }
    compute_.submit(Time::zero(), [this, last_micro] { end_micro(last_micro); });
  }

  void end_micro(bool last_micro) {
    if (!last_micro) {
      ++micro_;
      begin_micro();
      return;
    }
    if (s_.inference) {
      finish_step();
      return;
    }
    backward_done_ = true;
    backward_end_ = engine_.now();
    if (s_.comm.compression != "none" && ranks_ > 1) {
      sparse_exchange();
    } else if (!s_.comm.overlap) {
      for (double bytes : deferred_)
        submit_allreduce(bytes);
      deferred_.clear();
    }
    maybe_optimize();
  }

  void launch_allreduce(double bytes) {
    if (s_.comm.overlap) {
      submit_allreduce(bytes);
    } else {
      deferred_.push_back(bytes);
    }
  }

  void trace_link(double seconds, const std::string& what) {
    if (trace_ == nullptr) return;
    const Time start = comm_.busy_until() > engine_.now() ? comm_.busy_until() : engine_.now();
    trace_->span(link_track_, what, "link", start, start + dur(seconds));
  }

  void submit_allreduce(double bytes) {
    const double t = collectives_.dense_allreduce_s(bytes);
    if (measuring()) comm_measured_s_ += t;
    if (step_end_.empty()) ++buckets_per_step_;
    const std::string what = trace_ == nullptr
                                 ? std::string()
                                 : s_.comm.algorithm + " allreduce " + format_mb(bytes) + " x " +
                                       std::to_string(ranks_) + " ranks";
    trace_link(t, what);
    comm_.submit(dur(t), what, "comm", [this] {
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
    compute_.submit(
        dur(select_s), trace_ != nullptr ? "top-k selection" : "", "compute", [this, m] {
          backward_end_ = engine_.now();  // the selection is compute; exposed comm starts after it
          const double t = collectives_.sparse_allreduce_s(m);
          if (measuring()) comm_measured_s_ += t;
          if (step_end_.empty()) buckets_per_step_ = 1;
          const std::string what =
              trace_ == nullptr ? std::string() : s_.comm.compression + " sparse allreduce";
          trace_link(t, what);
          comm_.submit(dur(t), what, "comm", [this] {
            --pending_comm_;
            maybe_optimize();
          });
        });
  }

  void maybe_optimize() {
    if (!backward_done_ || pending_comm_ > 0) return;
    backward_done_ = false;
    if (measuring()) measured_.exposed_comm_s += (engine_.now() - backward_end_).seconds();
    if (trace_ != nullptr && engine_.now() > backward_end_)
      trace_->span(compute_track_, "waiting for gradients (exposed comm)", "exposed_comm",
                   backward_end_, engine_.now());
    const double p = static_cast<double>(s_.model.params());
    // Read and write fp32 weights, state and the gradient once each.
    const double bytes =
        2 * p * (4 + optimizer_state_bytes_per_param(s_.optimizer)) + p * grad_bytes_;
    const double t = kernel_s(4 * p, bytes);
    if (measuring()) measured_.optimizer_s += t;
    compute_.submit(dur(t), trace_ != nullptr ? "optimizer update" : "", "optimizer",
                    [this] { finish_step(); });
  }

  void finish_step() {
    step_end_.push_back(engine_.now().seconds());
    if (trace_ != nullptr)
      trace_->instant(compute_track_, "step " + std::to_string(step_end_.size()) + " end",
                      engine_.now());
    start_step();
  }

  const Scenario& s_;
  sim::TraceRecorder* trace_;  // not owned; null: no trace
  sim::Engine engine_;
  sim::Stream compute_;
  sim::Stream comm_;
  sim::Stream h2d_;
  sim::Stream host_;
  CollectiveCoster collectives_;
  sim::TraceRecorder::TrackId compute_track_ = 0;
  sim::TraceRecorder::TrackId link_track_ = 0;
  double act_bytes_ = 4;
  int grad_bytes_ = 4;
  int ranks_ = 1;
  UpstreamStages stages_;
  double h2d_s_ = 0;
  int ready_batches_ = 0;
  int copying_ = 0;
  bool producing_ = false;
  int micro_ = 0;
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
  const double width = activation_bytes_per_element(s);
  // Training keeps fp32 master weights (+ the 16-bit compute copy in mixed precision);
  // inference keeps only the compute copy.
  m.weights_bytes =
      s.inference ? p * sim::dtype_bytes(s.precision) : p * 4 + (mixed_precision(s) ? p * 2 : 0);
  m.gradients_bytes = s.inference ? 0 : p * sim::dtype_bytes(s.precision);
  // Sparsified exchange keeps an fp32 error-feedback residual per parameter.
  const double residual = s.comm.compression == "none" || s.data_parallel < 2 ? 0 : p * 4;
  m.optimizer_state_bytes =
      s.inference ? 0 : p * optimizer_state_bytes_per_param(s.optimizer) + residual;
  const double per_sample = s.inference ? 0 : saved_bytes_per_sample(s);
  // The layer being computed holds its input and output at once, saved or not.
  double live_per_sample = 0;
  for (const Layer& l : s.model.layers)
    live_per_sample = std::max(live_per_sample, (l.input_elements + l.output_elements) * width);
  m.activations_bytes = per_sample * s.batch_per_replica;
  m.workspace_bytes = s.workspace_bytes + live_per_sample * s.batch_per_replica;
  const double fixed =
      m.weights_bytes + m.gradients_bytes + m.optimizer_state_bytes + s.workspace_bytes;
  const double per_sample_total = per_sample + live_per_sample;
  m.peak_bytes_per_device = fixed + per_sample_total * s.batch_per_replica;
  m.capacity_bytes = s.cluster.accelerator.memory_capacity_bytes;
  m.fits = m.peak_bytes_per_device <= m.capacity_bytes;
  if (per_sample_total <= 0) {
    m.max_batch_that_fits = fixed <= m.capacity_bytes ? s.batch_per_replica : 0;
  } else {
    m.max_batch_that_fits =
        fixed >= m.capacity_bytes
            ? 0
            // Capped at the batch limit (sim/config/limits.hpp): beyond it the count means
            // nothing, and a huge capacity would overflow the integer.
            : static_cast<std::int64_t>(
                  std::min(std::floor((m.capacity_bytes - fixed) / per_sample_total),
                           static_cast<double>(sim::limits::kMaxBatchPerReplica)));
  }
  return m;
}

namespace {

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

}  // namespace

StepReport simulate_training(const Scenario& s, sim::TraceRecorder* trace) {
  if (s.pipeline_stages > 1 || s.microbatches > 1 || s.batch_max) {
    return simulate_pipeline(s, trace);
  }
  const Scenario measured = with_whole_echo_periods(s);
  ReplicaSim sim(measured, trace);
  StepReport r = sim.run();
  if (s.input.enabled && s.input.echo_factor > 1) {
    // The speedup echoing buys: the same scenario without echoing, simulated the same way.
    Scenario plain = s;
    plain.input.echo_factor = 1;
    ReplicaSim baseline(plain, nullptr);
    const StepReport b = baseline.run();
    r.echo_speedup = b.step_time_s / r.step_time_s;
    r.events += b.events;
    r.wall_s += b.wall_s;
  }
  r.scenario = s.name;
  r.model = s.model.name;
  r.cluster = s.cluster.name;
  r.accelerator = s.cluster.accelerator.name;
  r.precision = sim::dtype_name(s.precision);
  r.devices = s.data_parallel * s.pipeline_stages;
  r.data_parallel = s.data_parallel;
  r.global_batch = static_cast<std::int64_t>(s.batch_per_replica) * s.data_parallel * s.grad_accum;
  r.throughput_samples_per_s = r.step_time_s > 0 ? r.global_batch / r.step_time_s : 0.0;
  r.echo_speedup = finite_or_zero(r.echo_speedup);
  r.memory = estimate_memory(s);
  // One stage, one micro-batch per micro-step: the same summary keys as a pipelined run.
  r.pipeline.schedule = "none";
  r.pipeline.grad_accum = s.grad_accum;
  r.pipeline.recompute = s.recompute;
  r.pipeline.batch_per_replica = s.batch_per_replica;
  r.pipeline.batch_source = "given";
  r.pipeline.max_batch_that_fits = r.memory.max_batch_that_fits;
  return r;
}

}  // namespace trainsim::models
