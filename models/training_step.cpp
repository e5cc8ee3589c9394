#include "models/training_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <string_view>

#include "models/collective_cost.hpp"
#include "models/input_pipeline.hpp"
#include "models/kernel_plan.hpp"
#include "models/parallel/pipeline_sim.hpp"
#include "models/steady_state.hpp"
#include "sim/collectives/kernels.hpp"
#include "sim/collectives/process.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/engine.hpp"
#include "sim/hw/device_stream.hpp"
#include "sim/hw/kernel.hpp"
#include "sim/hw/stream.hpp"
#include "sim/net/cluster_layout.hpp"
#include "sim/net/cluster_topology.hpp"
#include "sim/net/flow_network.hpp"

namespace trainsim::models {

namespace {

using sim::Time;

// Where the compute stream's time goes; busy categories and idle causes share one index space
// (sim::DeviceStream accounts every instant to one of them).
enum Category : int {
  kCompute = 0,  // forward and backward kernels (and Top-k selection)
  kRecompute,    // forwards re-run in backward
  kOptimizer,    // the optimizer step (with the gradient unscale)
  kIdleHost,     // nothing launched yet: the framework's host thread is behind
  kIdleInput,    // the host waits for an input batch
  kIdleComm,     // the optimizer waits for the gradient collectives
};

double activation_bytes_per_element(const Scenario& s) {
  return sim::dtype_bytes(s.precision == sim::Dtype::fp8 ? sim::Dtype::bf16 : s.precision);
}

// Per-sample bytes kept for backward, with recomputation keeping only every sqrt(L)-th layer's
// output plus one segment's activations at a time (Chen et al. 2016).
double saved_bytes_per_sample(const Scenario& s) {
  const double width = activation_bytes_per_element(s);
  const auto& layers = s.model.layers;
  const auto saved = [&](const Layer& l) { return l.saved_bytes(width, s.fused_attention); };
  double all = 0;
  for (const Layer& l : layers)
    all += saved(l);
  if (s.recompute != Recompute::full || layers.size() < 2) return all;
  const std::size_t segment =
      static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(layers.size()))));
  double checkpoints = 0;
  double worst_segment = 0;
  for (std::size_t start = 0; start < layers.size(); start += segment) {
    double seg = 0;
    for (std::size_t i = start; i < std::min(layers.size(), start + segment); ++i)
      seg += saved(layers[i]);
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

// The launches of one micro-step, computed once: forward per layer, backward per layer (with its
// recomputed forward first), the optimizer step.
struct StepLaunches {
  std::vector<std::vector<Launch>> forward;
  std::vector<std::vector<Launch>> backward;
  std::vector<Launch> optimizer;
  std::vector<Launch> topk;  // Top-k selection before a sparse exchange
};

StepLaunches plan_launches(const Scenario& s) {
  StepLaunches p;
  const double b = s.batch_per_replica;
  for (const Layer& l : s.model.layers) {
    p.forward.emplace_back();
    layer_launches(s, l, Pass::forward, b, p.forward.back());
    p.backward.emplace_back();
    if (!s.inference) layer_launches(s, l, Pass::backward, b, p.backward.back());
  }
  if (!s.inference) {
    optimizer_launches(s, static_cast<double>(s.model.params()), s.model.param_tensors(),
                       p.optimizer);
  }
  if (s.comm.compression != "none" && s.data_parallel > 1 && !s.inference) {
    // Selection reads gradient and residual, writes residual: priced by the collectives' kernel
    // costs (sim/collectives/kernels), the one Top-k cost.
    const double m = static_cast<double>(s.model.params());
    sim::collectives::KernelCosts kc;
    kc.accelerator = s.cluster.accelerator;
    kc.host = s.cluster.host;
    kc.dtype = sim::Dtype::fp32;
    const double k = std::max(1.0, std::ceil(s.comm.density * m));
    const double select_s = kc.residual_s(m) + kc.topk_select_s(m, k);
    p.topk.push_back({"top-k selection", sim::KernelClass::topk,
                      select_s + s.cluster.accelerator.kernel_launch_overhead_s,
                      s.framework.graph_launch ? 0 : s.framework.host_backward_per_kernel_s, 1});
  }
  return p;
}

// Where the step's traffic runs on a network of its own engine (so that it contends): without
// peer-to-peer, intra-node collective messages are staged through host memory over the host
// links the input batches' host-to-device copies also use. Restricted to collectives within the
// replica's node (ranks <= accelerators per node), priced flow-level, with contention on; every
// other case prices each collective standalone (CollectiveCoster), which costs one run per
// distinct bucket size instead of one per bucket per step.
bool uses_step_network(const Scenario& s) {
  return s.comm.contention && s.comm.model == CommModel::flow_level && !s.cluster.p2p &&
         !s.inference && s.comm.compression == "none" && s.data_parallel > 1 &&
         s.data_parallel <= s.cluster.accelerators_per_node;
}

class ReplicaSim {
 public:
  ReplicaSim(const Scenario& s, sim::TraceRecorder* trace)
      : s_(s),
        trace_(trace),
        host_(engine_),
        compute_(engine_, kIdleHost),
        comm_(engine_),
        h2d_(engine_),
        workers_(engine_),
        comm_gate_(kIdleComm),
        collectives_(s, s.data_parallel),
        launches_(plan_launches(s)) {
    grad_bytes_ = gradient_bytes_per_param(s);
    ranks_ = s.data_parallel;
    step_end_.reserve(static_cast<std::size_t>(s.steps));
    // Replicas on one host share its pipeline workers and its storage bandwidth.
    stages_ = upstream_stages(s, s.batch_per_replica,
                              std::min(s.cluster.accelerators_per_node, s.data_parallel));
    h2d_s_ = h2d_batch_s(s, s.batch_per_replica);
    if (uses_step_network(s)) {
      // The replica's node as a network of the step's own engine: its collectives' staged
      // messages and its host-to-device copies are flows on the same host links.
      node_cluster_ = s.cluster;
      node_cluster_.nodes = 1;
      layout_ = std::make_unique<sim::ClusterLayout>(node_cluster_);
      // Built in place (a prvalue initialises the new object directly): a Topology must not be
      // moved, its link ids are edge descriptors into its own graph's storage, which Boost's
      // adjacency_list copies rather than moves (ASan: use after free of the copied-from edges).
      topology_.reset(new sim::ClusterTopology(sim::build_cluster_topology(node_cluster_)));
      net_ = std::make_unique<sim::FlowNetwork>(engine_, topology_->topology);
      h2d_bytes_ = h2d_batch_bytes(s, s.batch_per_replica);
    }
    if (trace_ != nullptr) {
      // One replica is simulated; the others are identical, so its tracks stand for all.
      compute_track_ = trace_->track("replica 0 / gpu0", "compute");
      compute_.trace_to(*trace_, compute_track_);
      comm_track_ = trace_->track("replica 0 / gpu0", "comm (gradient collectives)");
      comm_.trace_to(*trace_, comm_track_);
      h2d_track_ = trace_->track("replica 0 / gpu0", "h2d copy");
      h2d_.trace_to(*trace_, h2d_track_);
      host_.trace_to(*trace_, trace_->track("replica 0 / host0", "framework thread (launches)"));
      workers_.trace_to(*trace_, trace_->track("replica 0 / host0", "input workers"));
      link_track_ = trace_->track("links", ring_path_name(s.cluster, ranks_) + " (collectives)");
    }
  }

  StepReport run() {
    const auto wall0 = std::chrono::steady_clock::now();
    if (s_.input.enabled) produce();
    host_step();
    engine_.run();
    StepReport r;
    r.step_time_s = steady_step_time_s(step_end_, s_.steps, s_.warmup_steps, "simulation");
    const int measured = s_.steps - s_.warmup_steps;
    const auto diff = [&](int c) {
      return (end_totals_[static_cast<std::size_t>(c)] -
              start_totals_[static_cast<std::size_t>(c)]) /
             measured;
    };
    r.breakdown.compute_s = diff(kCompute);
    r.breakdown.recompute_s = diff(kRecompute);
    r.breakdown.optimizer_s = diff(kOptimizer);
    r.breakdown.host_s = diff(kIdleHost);
    r.breakdown.input_stall_s = diff(kIdleInput);
    r.breakdown.exposed_comm_s = diff(kIdleComm);
    r.comm_time_s = (comm_end_s_ - comm_start_s_) / measured;
    r.comm_interference_s = (interference_end_s_ - interference_start_s_) / measured;
    const double copies = h2d_copies_end_ - h2d_copies_start_;
    r.h2d_copy_s = net_ && copies > 0 ? (h2d_busy_end_s_ - h2d_busy_start_s_) / copies : h2d_s_;
    r.gradient_bytes = s_.inference ? 0 : static_cast<double>(s_.model.params()) * grad_bytes_;
    r.buckets = buckets_per_step_;
    r.kernels_per_step = static_cast<double>(kernels_end_ - kernels_start_) / measured;
    r.host_busy_s = (host_end_s_ - host_start_s_) / measured;
    r.upstream_batch_s = stages_.total_s();
    r.h2d_batch_s = h2d_s_;
    r.echo_factor = s_.input.enabled ? s_.input.echo_factor : 1;
    r.fresh_sample_fraction = 1.0 / r.echo_factor;
    // Engine events plus those of the flow-level collective runs that priced the buckets.
    r.events = engine_.stats().events_executed + collectives_.events();
    r.collective_model =
        net_ && ranks_ > 1 ? "flow-level (in-step network of the node)" : collectives_.model_name();
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  }

 private:
  Time dur(double seconds) const { return Time::from_seconds(seconds); }
  // Trace labels live as long as the simulation; none are built without a trace.
  std::string_view keep(std::string label) {
    labels_.push_back(std::move(label));
    return labels_.back();
  }

  // The host thread launches one kernel (or a run of `count` identical ones): after its host
  // time the kernel joins the device queue. A run is launched as its first kernel followed by
  // the rest at the pace of the slower of host and device.
  void dispatch(const Launch& l, int category, std::string_view label, sim::Gate* gate,
                sim::DeviceStream::Done on_done) {
    const std::string_view host_label = trace_ != nullptr ? label : std::string_view();
    double device_s = l.device_s;
    if (l.count > 1) {
      const double rest = l.count - 1;
      device_s = std::max(l.count * l.device_s, rest * l.host_s + l.device_s);
    }
    // Host items finish in submission order, so each launch takes the oldest pending kernel.
    pending_.push_back(
        {dur(device_s), category, label, gate, std::move(on_done), !sim::is_compute_class(l.cls)});
    host_.submit(dur(l.host_s), host_label, "launch", [this] {
      Pending p = std::move(pending_.front());
      pending_.pop_front();
      compute_.enqueue(p.duration, p.category, p.label, trace_category(p.category),
                       std::move(p.on_done), p.gate, p.memory_bound);
    });
    if (l.count > 1) host_.submit(dur((l.count - 1) * l.host_s), {}, {}, {});
  }

  static std::string_view trace_category(int category) {
    switch (category) {
      case kRecompute:
        return "recompute";
      case kOptimizer:
        return "optimizer";
      default:
        return "compute";
    }
  }

  std::string_view label(const char* pass, const std::string& layer, const Launch& l) {
    if (trace_ == nullptr) return {};
    return keep(std::string(pass) + " " + layer + ": " + l.what +
                (l.count > 1 ? " x" + std::to_string(l.count) : std::string()));
  }

  bool measuring() const { return static_cast<int>(step_end_.size()) >= s_.warmup_steps; }

  // ---- host input pipeline: workers make fresh batches, copied to the device ahead of use ----
  void produce() {
    // The prefetch queue holds prefetch_batches fresh groups, each worth echo_factor batches.
    if (producing_ || ready_batches_ + copying_ >= s_.input.prefetch_batches * s_.input.echo_factor)
      return;
    producing_ = true;
    const bool named = trace_ != nullptr;
    workers_.submit(dur(stages_.read_s), named ? "read" : "", "input", {});
    workers_.submit(dur(stages_.decode_s), named ? "decode" : "", "input", {});
    workers_.submit(dur(stages_.augment_s), named ? "augment" : "", "input", {});
    workers_.submit(dur(stages_.batch_s), named ? "batch" : "", "input", [this] {
      producing_ = false;
      for (int i = 0; i < s_.input.echo_factor; ++i) {
        ++copying_;
        if (net_) {
          ++h2d_waiting_;
          start_copy();
        } else {
          h2d_.submit(dur(h2d_s_),
                      trace_ != nullptr ? (i == 0 ? "h2d batch" : "h2d echoed batch") : "", "h2d",
                      [this] { batch_copied(); });
        }
      }
      produce();
    });
  }

  void batch_copied() {
    --copying_;
    ++ready_batches_;
    if (host_waiting_input_) {
      host_waiting_input_ = false;
      if (trace_ != nullptr && engine_.now() > wait_start_) {
        trace_->span(host_track(), "waiting for an input batch", "stall", wait_start_,
                     engine_.now());
      }
      host_micro();
    }
  }

  // On the step's network: one copy at a time per replica (the copy stream), and every replica
  // of the node copies its batch at the same time as this one (they are identical), each over
  // its own accelerator's host link, which the staged collective messages also cross.
  void start_copy() {
    if (h2d_flows_left_ > 0 || h2d_waiting_ == 0) return;
    --h2d_waiting_;
    h2d_start_ = engine_.now();
    const int local = std::max(1, std::min(ranks_, s_.cluster.accelerators_per_node));
    h2d_flows_left_ = local;
    for (int r = 0; r < local; ++r) {
      net_->start_flow(layout_->route(layout_->host(0), layout_->accelerator(r)), h2d_bytes_,
                       [this] {
                         if (--h2d_flows_left_ > 0) return;
                         h2d_busy_s_ += (engine_.now() - h2d_start_).seconds();
                         ++h2d_copies_;
                         if (trace_ != nullptr)
                           trace_->span(h2d_track_, "h2d batch", "h2d", h2d_start_, engine_.now());
                         batch_copied();
                         start_copy();
                       });
    }
  }
  sim::TraceRecorder::TrackId host_track() const { return compute_track_; }

  // ---- the framework's host thread: one step's program ----
  void host_step() {
    if (steps_started_ == s_.steps) return;
    ++steps_started_;
    micro_ = 0;
    host_micro();
  }

  // One micro-step: wait for an input batch, launch forward and backward.
  void host_micro() {
    if (s_.input.enabled) {
      if (ready_batches_ == 0) {
        host_waiting_input_ = true;
        wait_start_ = engine_.now();
        compute_.set_empty_queue_cause(kIdleInput);
        return;
      }
      --ready_batches_;
      produce();
    }
    compute_.set_empty_queue_cause(kIdleHost);
    // Once per step, after the first batch arrives: the data-loader hand-off, zero_grad and the
    // loop's own work.
    if (micro_ == 0) {
      host_.submit(dur(s_.framework.host_per_step_s), trace_ != nullptr ? "step overhead" : "",
                   "host", {});
    }
    const auto& layers = s_.model.layers;
    const bool last_micro = micro_ == s_.grad_accum - 1;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      for (const Launch& l : launches_.forward[i])
        dispatch(l, kCompute, label("fwd", layers[i].name, l), nullptr, {});
    }
    if (!s_.inference) {
      double bucket = 0;
      const bool dense = s_.comm.compression == "none";
      for (std::size_t i = layers.size(); i-- > 0;) {
        const Layer& layer = layers[i];
        if (s_.recompute == Recompute::full) {
          for (const Launch& l : launches_.forward[i])
            dispatch(l, kRecompute, label("recompute", layer.name, l), nullptr, {});
        }
        bucket += static_cast<double>(layer.params) * grad_bytes_;
        // Gradient accumulation: only the last micro-step's gradients are reduced (DDP's
        // no_sync); a full bucket is reduced as soon as its last gradient kernel is done.
        const bool reduce = last_micro && dense && ranks_ > 1 &&
                            (bucket >= s_.comm.bucket_bytes || (i == 0 && bucket > 0));
        const auto& bwd = launches_.backward[i];
        for (std::size_t k = 0; k < bwd.size(); ++k) {
          const bool last_kernel = k + 1 == bwd.size();
          if (reduce && last_kernel) {
            const double bytes = bucket;
            dispatch(bwd[k], kCompute, label("bwd", layer.name, bwd[k]), nullptr,
                     [this, bytes] { bucket_ready(bytes); });
          } else {
            dispatch(bwd[k], kCompute, label("bwd", layer.name, bwd[k]), nullptr, {});
          }
        }
        if (reduce) bucket = 0;
      }
    }
    host_.submit(Time::zero(), [this, last_micro] {
      if (!last_micro) {
        ++micro_;
        host_micro();
        return;
      }
      if (s_.inference) {
        host_end_of_step();
        return;
      }
      host_after_backward();
    });
  }

  void bucket_ready(double bytes) {
    if (s_.comm.overlap) {
      submit_allreduce(bytes);
    } else {
      deferred_.push_back(bytes);
    }
  }

  void host_after_backward() {
    const bool sparse = s_.comm.compression != "none" && ranks_ > 1;
    if (sparse) {
      // Top-k needs the whole gradient: select after backward, then exchange.
      for (const Launch& l : launches_.topk)
        dispatch(l, kCompute, trace_ != nullptr ? "top-k selection" : "", nullptr,
                 [this] { sparse_exchange(); });
    } else if (!s_.comm.overlap && ranks_ > 1) {
      // Without overlap the buckets are reduced once backward is done on the device.
      host_.submit(Time::zero(), [this] {
        compute_.enqueue(Time::zero(), kCompute, {}, {}, [this] {
          for (double bytes : deferred_)
            submit_allreduce(bytes);
          deferred_.clear();
        });
      });
    }
    if (s_.framework.host_syncs_per_step >= 1) {
      // The host waits until the gradients are reduced and backward is done (the grad-scaler's
      // inf check reads a device value).
      host_.submit(Time::zero(), [this] {
        compute_.enqueue(
            Time::zero(), kCompute, {}, {}, [this] { host_optimizer(); }, &comm_gate_);
      });
    } else {
      host_.submit(Time::zero(), [this] { host_optimizer(); });
    }
  }

  void host_optimizer() {
    const auto& opt = launches_.optimizer;
    for (std::size_t k = 0; k < opt.size(); ++k) {
      const bool last = k + 1 == opt.size();
      // The first optimizer kernel waits for every gradient collective (DDP's final wait).
      dispatch(opt[k], kOptimizer, trace_ != nullptr ? opt[k].what : std::string_view(),
               k == 0 ? &comm_gate_ : nullptr,
               last ? sim::DeviceStream::Done([this] { step_done(); }) : sim::DeviceStream::Done());
    }
    if (opt.empty()) {
      host_.submit(Time::zero(), [this] {
        compute_.enqueue(
            Time::zero(), kOptimizer, {}, {}, [this] { step_done(); }, &comm_gate_);
      });
    }
    host_.submit(Time::zero(), [this] { host_end_of_step(); });
  }

  void host_end_of_step() {
    if (s_.inference) {
      host_.submit(Time::zero(), [this] {
        compute_.enqueue(Time::zero(), kCompute, {}, {}, [this] { step_done(); });
      });
    }
    if (s_.framework.host_syncs_per_step >= 2) {
      host_waits_step_end_ = true;  // loss.item(): the next step starts when this one is done
      return;
    }
    host_step();
  }

  void step_done() {
    step_end_.push_back(engine_.now().seconds());
    if (trace_ != nullptr) {
      trace_->instant(compute_track_, "step " + std::to_string(step_end_.size()) + " end",
                      engine_.now());
    }
    const auto totals = compute_.totals();
    const double comm_busy = net_ ? comm_busy_s_ : comm_.busy_time().seconds();
    const double host_busy = host_.busy_time().seconds();
    if (static_cast<int>(step_end_.size()) == s_.warmup_steps) {
      start_totals_ = totals;
      comm_start_s_ = comm_busy;
      host_start_s_ = host_busy;
      interference_start_s_ = compute_.interference();
      h2d_busy_start_s_ = h2d_busy_s_;
      h2d_copies_start_ = h2d_copies_;
      kernels_start_ = compute_.items();
    }
    if (static_cast<int>(step_end_.size()) == s_.steps) {
      end_totals_ = totals;
      comm_end_s_ = comm_busy;
      host_end_s_ = host_busy;
      interference_end_s_ = compute_.interference();
      h2d_busy_end_s_ = h2d_busy_s_;
      h2d_copies_end_ = h2d_copies_;
      kernels_end_ = compute_.items();
    }
    if (host_waits_step_end_) {
      host_waits_step_end_ = false;
      host_step();
    }
  }

  void trace_link(double seconds, const std::string& what) {
    if (trace_ == nullptr) return;
    const Time start = comm_.busy_until() > engine_.now() ? comm_.busy_until() : engine_.now();
    trace_->span(link_track_, what, "link", start, start + dur(seconds));
  }

  void submit_allreduce(double bytes) {
    const double t = collectives_.dense_allreduce_s(bytes);
    if (step_end_.empty()) ++buckets_per_step_;
    const std::string what = trace_ == nullptr
                                 ? std::string()
                                 : s_.comm.algorithm + " allreduce " + format_mb(bytes) + " x " +
                                       std::to_string(ranks_) + " ranks";
    comm_gate_.add();
    if (net_) {
      comm_queue_.push_back(bytes);
      start_collective();
      return;
    }
    trace_link(t, what);
    const Time start = comm_.busy_until() > engine_.now() ? comm_.busy_until() : engine_.now();
    if (s_.comm.contention) share_device(bytes, start, t);
    comm_.submit(dur(t), what, "comm", [this] { comm_gate_.done(); });
  }

  // On the step's network the comm stream runs one bucket's CollectiveProcess at a time (NCCL
  // kernels on one stream run in order); its duration comes out of the flows it shares.
  void start_collective() {
    if (collective_running_ || comm_queue_.empty()) return;
    const double bytes = comm_queue_.front();
    comm_queue_.pop_front();
    auto [it, fresh] = plans_.try_emplace(bytes);
    if (fresh) {
      sim::collectives::CollectiveSpec spec;
      spec.op = sim::collectives::Op::allreduce;
      spec.algorithm =
          sim::collectives::parse_algorithm(s_.comm.algorithm, "communication.algorithm");
      spec.bytes = bytes;
      spec.dtype = collectives_.gradient_dtype();
      spec.ranks = ranks_;
      it->second = sim::collectives::plan_collective(node_cluster_, spec);
    }
    // Processes finished before the one that just completed (whose callback may be running) are
    // no longer referenced by the engine.
    while (processes_.size() > 1 && processes_.front()->finished())
      processes_.pop_front();
    collective_running_ = true;
    // The device share is declared at the start for the standalone run's duration (the
    // contended one is known only at the end).
    if (s_.comm.contention)
      share_device(bytes, engine_.now(), collectives_.dense_allreduce_s(bytes));
    processes_.push_back(std::make_unique<sim::collectives::CollectiveProcess>(
        engine_, *net_, *layout_, it->second));
    sim::collectives::CollectiveProcess* p = processes_.back().get();
    p->start([this, p, bytes] {
      collective_running_ = false;
      comm_busy_s_ += p->duration_s();
      if (trace_ != nullptr) {
        const std::string what = s_.comm.algorithm + " allreduce " + format_mb(bytes) + " x " +
                                 std::to_string(ranks_) + " ranks";
        trace_->span(comm_track_, keep(what), "comm", p->start_time(), p->finish_time());
        trace_->span(link_track_, keep(what), "link", p->start_time(), p->finish_time());
      }
      comm_gate_.done();
      start_collective();
    });
  }

  // The allreduce's kernel shares the device with the compute it overlaps. NCCL launches one
  // thread block per channel (NVIDIA/nccl src/enqueue.cc, ncclLaunchKernel: `dim3 grid =
  // {(unsigned)nChannels, 1, 1}`; the NCCL docs' NCCL_MIN_CTAS / NCCL_MAX_CTAS bound the same
  // count), and a block holds its SM for the whole collective, so compute kernels run on
  // compute_units - channels SMs. Its reductions stream (P-1)/P of the bucket through DRAM per rank
  // (read 2, write 1, as sim/collectives/kernels.hpp prices them) over the collective's duration;
  // memory-bound kernels get the rest of the bandwidth. Whether a kernel is compute- or
  // memory-bound is its class (sim::is_compute_class), the kernel-time model's own split.
  void share_device(double bytes, Time start, double seconds) {
    if (seconds <= 0) return;
    const sim::AcceleratorSpec& acc = s_.cluster.accelerator;
    const int units = std::max(1, acc.compute_units);
    // At least one SM is left to compute (a profile with more channels than SMs).
    const int blocks = std::min(collectives_.dense_allreduce_channels(bytes), units - 1);
    const double compute_slowdown =
        units > 1 ? static_cast<double>(units) / (units - std::max(0, blocks)) : 1.0;
    const sim::collectives::KernelCosts kc{acc, s_.cluster.host, sim::Dtype::fp32, true};
    const double reduced = (ranks_ - 1.0) / ranks_ * bytes;
    const double dram_bytes_per_s = kc.reduction(reduced).bytes / seconds;
    // estimate: at most 90% of DRAM to the reduction, so memory-bound kernels keep progressing
    // (the fused reduction's flow cap, sim/collectives/algorithms.cpp, keeps it below the
    // accelerator's achieved memory rate anyway).
    const double memory_share = acc.memory_bw_bytes_per_s > 0
                                    ? std::min(0.9, dram_bytes_per_s / acc.memory_bw_bytes_per_s)
                                    : 0.0;
    compute_.share(start, start + dur(seconds), compute_slowdown, memory_share);
  }

  void sparse_exchange() {
    const double m = static_cast<double>(s_.model.params());
    const double t = collectives_.sparse_allreduce_s(m);
    if (step_end_.empty()) buckets_per_step_ = 1;
    const std::string what =
        trace_ == nullptr ? std::string() : s_.comm.compression + " sparse allreduce";
    trace_link(t, what);
    comm_gate_.add();
    comm_.submit(dur(t), what, "comm", [this] { comm_gate_.done(); });
  }

  const Scenario& s_;
  sim::TraceRecorder* trace_;  // not owned; null: no trace
  sim::Engine engine_;
  sim::Stream host_;  // the framework's dispatching thread
  sim::DeviceStream compute_;
  sim::Stream comm_;
  sim::Stream h2d_;
  sim::Stream workers_;  // input-pipeline workers
  sim::Gate comm_gate_;
  CollectiveCoster collectives_;
  StepLaunches launches_;
  // The step's own network (uses_step_network): null where collectives are priced standalone.
  sim::ClusterSpec node_cluster_;
  std::unique_ptr<sim::ClusterLayout> layout_;
  std::unique_ptr<sim::ClusterTopology> topology_;
  std::unique_ptr<sim::FlowNetwork> net_;
  std::map<double, sim::collectives::Plan> plans_;  // per bucket size
  std::deque<std::unique_ptr<sim::collectives::CollectiveProcess>> processes_;
  std::deque<double> comm_queue_;  // buckets waiting for the comm stream
  bool collective_running_ = false;
  double comm_busy_s_ = 0;
  double h2d_bytes_ = 0;
  int h2d_waiting_ = 0;
  int h2d_flows_left_ = 0;
  Time h2d_start_ = Time::zero();
  double h2d_busy_s_ = 0;
  double h2d_copies_ = 0;
  double h2d_busy_start_s_ = 0;
  double h2d_busy_end_s_ = 0;
  double h2d_copies_start_ = 0;
  double h2d_copies_end_ = 0;
  sim::TraceRecorder::TrackId comm_track_ = 0;
  sim::TraceRecorder::TrackId h2d_track_ = 0;
  std::deque<std::string> labels_;
  struct Pending {
    Time duration;
    int category;
    std::string_view label;
    sim::Gate* gate;
    sim::DeviceStream::Done on_done;
    bool memory_bound;
  };
  std::deque<Pending> pending_;  // launched by the host, not yet handed to the device
  sim::TraceRecorder::TrackId compute_track_ = 0;
  sim::TraceRecorder::TrackId link_track_ = 0;
  double grad_bytes_ = 4;
  int ranks_ = 1;
  UpstreamStages stages_;
  double h2d_s_ = 0;
  int ready_batches_ = 0;
  int copying_ = 0;
  bool producing_ = false;
  bool host_waiting_input_ = false;
  bool host_waits_step_end_ = false;
  Time wait_start_ = Time::zero();
  int micro_ = 0;
  int steps_started_ = 0;
  std::vector<double> deferred_;
  int buckets_per_step_ = 0;
  std::array<double, sim::DeviceStream::kMaxCategories> start_totals_{};
  std::array<double, sim::DeviceStream::kMaxCategories> end_totals_{};
  double comm_start_s_ = 0;
  double comm_end_s_ = 0;
  double host_start_s_ = 0;
  double host_end_s_ = 0;
  double interference_start_s_ = 0;
  double interference_end_s_ = 0;
  std::uint64_t kernels_start_ = 0;
  std::uint64_t kernels_end_ = 0;
  std::vector<double> step_end_;
};

}  // namespace

MemoryReport estimate_memory(const Scenario& s) {
  MemoryReport m;
  const double p = static_cast<double>(s.model.params());
  const double width = activation_bytes_per_element(s);
  // Weights and gradients as the framework keeps them (models/kernel_plan.hpp).
  m.weights_bytes = p * weight_bytes_per_param(s);
  m.gradients_bytes = s.inference ? 0 : p * gradient_bytes_per_param(s);
  // Sparsified exchange keeps an fp32 error-feedback residual per parameter.
  const double residual = s.comm.compression == "none" || s.data_parallel < 2 ? 0 : p * 4;
  m.optimizer_state_bytes = s.inference ? 0 : p * optimizer_state_bytes_per_param(s) + residual;
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

// Long gradient accumulation: the micro-steps between the first and the last are identical in
// the steady state, so a step of G micro-steps costs T(a) + (G - a) (T(a + 1) - T(a)) for any
// a >= 2. Simulating a and a + 1 and extending linearly gives the G-micro-step step (and its
// breakdown) at the cost of a + 1 micro-steps; the report says it did so. Traces and echoing
// (whose period depends on G) are simulated in full.
constexpr int kMaxSimulatedMicroSteps = 8;

StepReport run_replica(const Scenario& s, sim::TraceRecorder* trace) {
  if (s.grad_accum <= kMaxSimulatedMicroSteps || trace != nullptr ||
      (s.input.enabled && s.input.echo_factor > 1)) {
    ReplicaSim sim(s, trace);
    StepReport r = sim.run();
    r.micro_steps_simulated = s.grad_accum;
    return r;
  }
  const int a = kMaxSimulatedMicroSteps / 2;
  Scenario sa = s;
  sa.grad_accum = a;
  Scenario sb = s;
  sb.grad_accum = a + 1;
  StepReport r = ReplicaSim(sa, nullptr).run();
  const StepReport rb = ReplicaSim(sb, nullptr).run();
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
  extend(r.comm_time_s, rb.comm_time_s);
  extend(r.comm_interference_s, rb.comm_interference_s);
  extend(r.kernels_per_step, rb.kernels_per_step);
  extend(r.host_busy_s, rb.host_busy_s);
  r.events += rb.events;
  r.wall_s += rb.wall_s;
  r.micro_steps_simulated = a + 1;
  return r;
}

}  // namespace

StepReport simulate_training(const Scenario& s, sim::TraceRecorder* trace) {
  if (s.pipeline_stages > 1 || s.microbatches > 1 || s.batch_max) {
    return simulate_pipeline(s, trace);
  }
  StepReport r = run_replica(with_whole_echo_periods(s), trace);
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
  r.framework = s.framework.name;
  r.devices = s.data_parallel * s.pipeline_stages;
  r.data_parallel = s.data_parallel;
  r.global_batch = static_cast<std::int64_t>(s.batch_per_replica) * s.data_parallel * s.grad_accum;
  r.throughput_samples_per_s = r.step_time_s > 0 ? r.global_batch / r.step_time_s : 0.0;
  r.echo_speedup = finite_or_zero(r.echo_speedup);
  r.memory = estimate_memory(s);
  // One stage, one micro-batch per micro-step: the same summary keys as a pipelined run.
  r.pipeline.schedule = "none";
  r.pipeline.grad_accum = s.grad_accum;
  r.pipeline.recompute = s.recompute != Recompute::none;
  r.pipeline.batch_per_replica = s.batch_per_replica;
  r.pipeline.batch_source = "given";
  r.pipeline.max_batch_that_fits = r.memory.max_batch_that_fits;
  return r;
}

}  // namespace trainsim::models
