#include "models/parallel/pipeline_sim.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/input_pipeline.hpp"
#include "models/kernel_plan.hpp"
#include "models/parallel/pipeline_schedule.hpp"
#include "models/parallel/stage_plan.hpp"
#include "models/steady_state.hpp"
#include "models/zoo/zoo_model.hpp"
#include "sim/core/engine.hpp"
#include "sim/core/input_error.hpp"
#include "sim/hw/stream.hpp"

namespace trainsim::models {

namespace {

using sim::Time;

// Per stage, per step, what its device did; each stage's parts add up to the step time.
struct StageTally {
  double compute_s = 0;
  double recompute_s = 0;
  double optimizer_s = 0;
  double exposed_comm_s = 0;
  double bubble_s = 0;
  double input_stall_s = 0;
  double send_s = 0;
};

class PipelineSim {
 public:
  PipelineSim(const Scenario& s, const StagePlan& plan, sim::TraceRecorder* trace)
      : s_(s), plan_(plan), trace_(trace), host_(engine_), h2d_(engine_) {
    k_ = s.pipeline_stages;
    m_ = s.microbatches;
    total_micro_ = m_ * s.grad_accum;
    big_micro_ = static_cast<int>(plan.batch % m_);
    for (int k = 0; k < k_; ++k) {
      auto st = std::make_unique<Stage>(engine_);
      const StageCosts& c = plan.stages[static_cast<std::size_t>(k)];
      for (int z = 0; z < 2; ++z) {
        st->forward[z] = Time::from_seconds(c.forward_s[z]);
        st->backward[z] = Time::from_seconds(c.backward_s[z]);
        st->recompute[z] = Time::from_seconds(c.recompute_s[z]);
        st->send[z] = Time::from_seconds(c.send_s[z]);
      }
      st->allreduce = Time::from_seconds(c.allreduce_s);
      st->optimizer = Time::from_seconds(c.optimizer_s);
      st->ops = stage_schedule(s.schedule, k, k_, m_, s.grad_accum, s.inference);
      st->act_ready.assign(static_cast<std::size_t>(total_micro_), 0);
      st->grad_ready.assign(static_cast<std::size_t>(total_micro_), 0);
      if (trace_ != nullptr) {
        const std::string dev = "stage" + std::to_string(k) + " dev" + std::to_string(k);
        st->track = trace_->track(dev, "compute");
        st->compute.trace_to(*trace_, st->track);
        // Only the tracks a stage uses: no activations leave the last stage, no gradients the
        // first, and there is no allreduce without data-parallel peers.
        if (k + 1 < k_) st->send_fwd.trace_to(*trace_, trace_->track(dev, "send activations"));
        if (k > 0) st->send_bwd.trace_to(*trace_, trace_->track(dev, "send gradients"));
        if (s.data_parallel > 1 && !s.inference) {
          st->allreduce_stream.trace_to(*trace_, trace_->track(dev, "allreduce"));
        }
      }
      stages_.push_back(std::move(st));
    }
    if (s.input.enabled) setup_input();
    step_end_.reserve(static_cast<std::size_t>(s.steps));
  }

  StepReport run() {
    const auto wall0 = std::chrono::steady_clock::now();
    if (s_.input.enabled) produce();
    start_step();
    engine_.run();
    StepReport r;
    r.step_time_s = steady_step_time_s(step_end_, s_.steps, s_.warmup_steps, "pipeline simulation");
    const int measured = s_.steps - s_.warmup_steps;
    // The breakdown is the mean over stages (each stage's parts sum to the step time).
    for (const auto& st : stages_) {
      const StageTally& t = st->tally;
      r.breakdown.compute_s += t.compute_s / measured / k_;
      r.breakdown.recompute_s += t.recompute_s / measured / k_;
      r.breakdown.optimizer_s += t.optimizer_s / measured / k_;
      r.breakdown.exposed_comm_s += t.exposed_comm_s / measured / k_;
      r.breakdown.bubble_s += t.bubble_s / measured / k_;
      r.breakdown.input_stall_s += t.input_stall_s / measured / k_;
      r.comm_time_s += (t.send_s / measured + st->allreduce.seconds()) / k_;
    }
    r.upstream_batch_s = upstream_s_;
    r.fresh_sample_fraction = s_.input.enabled ? 1.0 / s_.input.echo_factor : 1.0;
    r.events = engine_.stats().events_executed;
    for (int k = 0; k < k_; ++k) {
      const StageTally& t = stages_[static_cast<std::size_t>(k)]->tally;
      StageReport sr;
      sr.busy_s = (t.compute_s + t.recompute_s + t.optimizer_s) / measured;
      sr.bubble_s = t.bubble_s / measured;
      r.stages.push_back(sr);
    }
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  }

 private:
  struct Stage {
    explicit Stage(sim::Engine& e) : compute(e), send_fwd(e), send_bwd(e), allreduce_stream(e) {}
    sim::Stream compute;
    sim::Stream send_fwd;  // activations to the next stage
    sim::Stream send_bwd;  // gradients to the previous stage
    sim::Stream allreduce_stream;
    Time forward[2];
    Time backward[2];
    Time recompute[2];
    Time send[2];
    Time allreduce;
    Time optimizer;
    std::vector<PipeOp> ops;
    std::size_t next = 0;
    bool busy = false;
    bool waiting = false;
    bool waiting_input = false;
    Time wait_start;
    Time done_at;
    Time last_backward_end;
    std::vector<char> act_ready;
    std::vector<char> grad_ready;
    sim::TraceRecorder::TrackId track = 0;
    StageTally tally;
  };

  bool measuring() const { return static_cast<int>(step_end_.size()) >= s_.warmup_steps; }
  // Micro-batch j's size class: the first N mod M of each round have ceil(N/M) samples.
  int size_class(int j) const { return (j % m_) < big_micro_ || big_micro_ == 0 ? 1 : 0; }
  Stage& stage(int k) { return *stages_[static_cast<std::size_t>(k)]; }

  void span(Stage& st, const char* label, const char* category, Time start, Time end) {
    if (trace_ != nullptr && end > start) trace_->span(st.track, label, category, start, end);
  }
  std::string op_label(const char* kind, int j) const {
    return trace_ == nullptr ? std::string() : std::string(kind) + " " + std::to_string(j);
  }

  void start_step() {
    done_stages_ = 0;
    for (auto& st : stages_) {
      st->next = 0;
      st->busy = false;
      std::fill(st->act_ready.begin(), st->act_ready.end(), 0);
      std::fill(st->grad_ready.begin(), st->grad_ready.end(), 0);
    }
    for (int k = 0; k < k_; ++k)
      try_run(k);
  }

  bool input_ready(int j) const {
    if (!s_.input.enabled || j % m_ != 0) return true;
    return ready_batches_ > 0;
  }

  void try_run(int k) {
    Stage& st = stage(k);
    if (st.busy || st.next == st.ops.size()) return;
    const PipeOp op = st.ops[st.next];
    const auto j = static_cast<std::size_t>(op.micro);
    bool ready = false;
    bool for_input = false;
    if (op.forward) {
      ready = k == 0 ? input_ready(op.micro) : st.act_ready[j] != 0;
      for_input = k == 0;
    } else {
      ready = k == k_ - 1 || st.grad_ready[j] != 0;
    }
    if (!ready) {
      if (!st.waiting) {
        st.waiting = true;
        st.waiting_input = for_input && s_.input.enabled;
        st.wait_start = engine_.now();
      }
      return;
    }
    const Time now = engine_.now();
    if (st.waiting) {
      st.waiting = false;
      const double idle = (now - st.wait_start).seconds();
      if (measuring()) (st.waiting_input ? st.tally.input_stall_s : st.tally.bubble_s) += idle;
      span(st, st.waiting_input ? "input stall" : (st.next == 0 ? "bubble (fill)" : "bubble"),
           st.waiting_input ? "stall" : "bubble", st.wait_start, now);
    }
    if (op.forward && k == 0 && s_.input.enabled && op.micro % m_ == 0) {
      --ready_batches_;
      produce();
    }
    st.busy = true;
    ++st.next;
    const int z = size_class(op.micro);
    const int micro = op.micro;
    if (op.forward) {
      if (measuring()) st.tally.compute_s += st.forward[z].seconds();
      st.compute.submit(st.forward[z], op_label("F", micro), "forward",
                        [this, k, micro] { forward_done(k, micro); });
      return;
    }
    if (st.recompute[z] > Time::zero()) {
      if (measuring()) st.tally.recompute_s += st.recompute[z].seconds();
      st.compute.submit(st.recompute[z], op_label("R", micro), "recompute", {});
    }
    if (measuring()) st.tally.compute_s += st.backward[z].seconds();
    st.compute.submit(st.backward[z], op_label("B", micro), "backward",
                      [this, k, micro] { backward_done(k, micro); });
  }

  void forward_done(int k, int micro) {
    Stage& st = stage(k);
    st.busy = false;
    if (k + 1 < k_) {
      const Time t = st.send[size_class(micro)];
      if (measuring()) st.tally.send_s += t.seconds();
      st.send_fwd.submit(t, op_label("act", micro), "transfer", [this, k, micro] {
        stage(k + 1).act_ready[static_cast<std::size_t>(micro)] = 1;
        try_run(k + 1);
      });
    }
    if (st.next == st.ops.size()) {
      stage_done(k);  // inference: the last forward ends the stage's step
      return;
    }
    try_run(k);
  }

  void backward_done(int k, int micro) {
    Stage& st = stage(k);
    st.busy = false;
    if (k > 0) {
      Stage& prev = stage(k - 1);
      const Time t = prev.send[size_class(micro)];
      if (measuring()) st.tally.send_s += t.seconds();
      st.send_bwd.submit(t, op_label("grad", micro), "transfer", [this, k, micro] {
        stage(k - 1).grad_ready[static_cast<std::size_t>(micro)] = 1;
        try_run(k - 1);
      });
    }
    if (st.next < st.ops.size()) {
      try_run(k);
      return;
    }
    st.last_backward_end = engine_.now();
    if (s_.data_parallel > 1) {
      st.allreduce_stream.submit(st.allreduce, "allreduce", "comm", [this, k] { update(k); });
    } else {
      update(k);
    }
  }

  void update(int k) {
    Stage& st = stage(k);
    if (measuring()) {
      st.tally.exposed_comm_s += (engine_.now() - st.last_backward_end).seconds();
      st.tally.optimizer_s += st.optimizer.seconds();
    }
    st.compute.submit(st.optimizer, "optimizer", "optimizer", [this, k] { stage_done(k); });
  }

  void stage_done(int k) {
    stage(k).done_at = engine_.now();
    if (++done_stages_ < k_) return;
    const Time end = engine_.now();
    for (auto& st : stages_) {
      if (measuring()) st->tally.bubble_s += (end - st->done_at).seconds();
      span(*st, "bubble (drain)", "bubble", st->done_at, end);
    }
    step_end_.push_back(end.seconds());
    if (static_cast<int>(step_end_.size()) < s_.steps) start_step();
  }

  // Host input: the host's pipeline workers make fresh batches of N samples for the replicas on
  // that host; each is copied to stage 0's device and serves one accumulation round.
  void setup_input() {
    const double b = static_cast<double>(plan_.batch);
    // Each host's workers feed the replicas whose stage 0 it holds.
    const int stage0_per_host = std::max(1, s_.cluster.accelerators_per_node / k_);
    const double replicas_per_host = std::min(stage0_per_host, s_.data_parallel);
    upstream_s_ = upstream_stages(s_, b, replicas_per_host).total_s();
    h2d_time_ = Time::from_seconds(h2d_batch_s(s_, b));
    upstream_time_ = Time::from_seconds(upstream_s_);
    if (trace_ != nullptr) {
      host_.trace_to(*trace_, trace_->track("host0", "input workers"));
      h2d_.trace_to(*trace_, trace_->track("stage0 dev0", "host-to-device"));
    }
  }

  void produce() {
    if (producing_ || ready_batches_ + copying_ >= s_.input.prefetch_batches * s_.input.echo_factor)
      return;
    producing_ = true;
    host_.submit(upstream_time_, trace_ ? "batch" : "", "input", [this] {
      producing_ = false;
      for (int i = 0; i < s_.input.echo_factor; ++i) {
        ++copying_;
        h2d_.submit(h2d_time_, trace_ ? "input copy" : "", "transfer", [this] {
          --copying_;
          ++ready_batches_;
          try_run(0);
        });
      }
      produce();
    });
  }

  const Scenario& s_;
  const StagePlan& plan_;
  sim::TraceRecorder* trace_;
  sim::Engine engine_;
  sim::Stream host_;
  sim::Stream h2d_;
  std::vector<std::unique_ptr<Stage>> stages_;
  int k_ = 1;
  int m_ = 1;
  int total_micro_ = 1;
  int big_micro_ = 0;
  int done_stages_ = 0;
  double upstream_s_ = 0;
  Time upstream_time_;
  Time h2d_time_;
  int ready_batches_ = 0;
  int copying_ = 0;
  bool producing_ = false;
  std::vector<double> step_end_;
};

}  // namespace

StepReport simulate_pipeline(const Scenario& s, sim::TraceRecorder* trace) {
  if (s.comm.compression != "none" && s.data_parallel > 1) {
    throw InputError(
        "scenario " + s.name + ": communication.compression",
        "sparsified gradient exchange is not modelled with pipeline parallelism or micro-batches");
  }
  const StagePlan plan = plan_stages(s);
  // With echoing, batches arrive in groups of echo_factor: measure whole groups (as the
  // single-device step does) so the average is the steady state.
  Scenario measured = s;
  if (s.input.enabled && s.input.echo_factor > 1) {
    const int e = s.input.echo_factor;
    const int n = s.steps - s.warmup_steps;
    measured.steps = s.warmup_steps + (n + e - 1) / e * e;
  }
  PipelineSim sim(measured, plan, trace);
  StepReport r = sim.run();
  r.scenario = s.name;
  r.model = s.model.name;
  r.cluster = s.cluster.name;
  r.accelerator = s.cluster.accelerator.name;
  r.precision = sim::dtype_name(s.precision);
  r.devices = s.data_parallel * s.pipeline_stages;
  r.data_parallel = s.data_parallel;
  r.global_batch = plan.batch * s.data_parallel * s.grad_accum;
  r.throughput_samples_per_s = static_cast<double>(r.global_batch) / r.step_time_s;
  r.gradient_bytes =
      s.inference ? 0 : static_cast<double>(s.model.params()) * gradient_bytes_per_param(s);
  r.framework = s.framework.name;
  r.micro_steps_simulated = s.grad_accum;
  r.buckets = s.data_parallel > 1 && !s.inference ? s.pipeline_stages : 0;
  // Stage peers are strided across the cluster, so their allreduce uses the alpha-beta form.
  r.collective_model = r.buckets > 0 ? "alpha-beta (per-stage allreduce)" : "none";

  PipelineSummary& p = r.pipeline;
  p.stages = s.pipeline_stages;
  p.microbatches = s.microbatches;
  p.grad_accum = s.grad_accum;
  p.schedule = schedule_name(s.schedule);
  p.recompute = s.recompute != Recompute::none;
  p.batch_per_replica = plan.batch;
  p.batch_source = plan.batch_was_max ? "largest that fits" : "given";
  p.max_batch_that_fits = plan.max_batch_that_fits;
  p.ideal_bubble_fraction =
      ideal_bubble_fraction(s.schedule, s.pipeline_stages, s.microbatches, s.grad_accum);

  // Stage details; the step's memory line is the stage with the highest peak.
  std::size_t worst = 0;
  for (std::size_t k = 0; k < plan.stages.size(); ++k) {
    const StageCosts& c = plan.stages[k];
    StageReport& sr = r.stages[k];
    sr.stage = static_cast<int>(k);
    sr.first_layer = c.first_layer;
    sr.layers = c.layers;
    sr.first_layer_name = s.model.layers[static_cast<std::size_t>(c.first_layer)].name;
    sr.last_layer_name =
        s.model.layers[static_cast<std::size_t>(c.first_layer + c.layers - 1)].name;
    sr.params = c.params;
    sr.forward_s = c.forward_s[1];
    sr.backward_s = c.backward_s[1];
    sr.recompute_s = c.recompute_s[1];
    sr.send_bytes = c.send_bytes[1];
    sr.send_s = c.send_s[1];
    sr.allreduce_s = s.data_parallel > 1 ? c.allreduce_s : 0;
    sr.in_flight = c.in_flight;
    sr.memory = c.memory;
    if (c.memory.peak_bytes > plan.stages[worst].memory.peak_bytes) worst = k;
  }
  const StageMemory& wm = plan.stages[worst].memory;
  MemoryReport& m = r.memory;
  m.weights_bytes = wm.weights_bytes;
  m.gradients_bytes = wm.gradients_bytes;
  m.optimizer_state_bytes = wm.optimizer_state_bytes;
  m.activations_bytes = wm.activations_bytes;
  m.workspace_bytes = wm.workspace_bytes;
  m.peak_bytes_per_device = wm.peak_bytes;
  m.capacity_bytes = wm.capacity_bytes;
  m.fits = true;
  for (const StageCosts& c : plan.stages)
    m.fits = m.fits && c.memory.fits;
  m.max_batch_that_fits = plan.max_batch_that_fits;
  return r;
}

}  // namespace trainsim::models
