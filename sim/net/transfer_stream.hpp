#pragma once
// A serial queue of transfers (a CUDA stream of NCCL kernels, a copy engine, a send stream):
// one transfer at a time in submission order, as sim::Stream runs work items, but a transfer's
// duration comes out of the flow network it shares with every other transfer of the
// simulation: it starts when its predecessor finishes, pays its route latency, then moves its
// bytes at its max-min share (FlowNetwork). Without a network (or for a transfer with no route)
// it takes its standalone duration, so the same caller code runs with and without contention.

#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <utility>

#include "sim/core/engine.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace trainsim::sim {

struct Transfer {
  double standalone_s = 0;  // its duration alone on its route (and without a network)
  // Its links (not owned, outlives the transfer; null: it shares none). The route's own latency
  // is paid too, after latency_s.
  const Route* route = nullptr;
  double latency_s = 0;  // paid first, without using bandwidth
  double bytes = 0;
  double max_rate_bytes_per_s = 0;  // its own cap (0: none)
};

class TransferStream {
 public:
  using Done = InlineCallback<40>;
  // `net` may be null: every transfer then takes its standalone duration.
  TransferStream(Engine& engine, FlowNetwork* net) : engine_(engine), net_(net) {}
  TransferStream(const TransferStream&) = delete;
  TransferStream& operator=(const TransferStream&) = delete;

  void trace_to(TraceRecorder& trace, TraceRecorder::TrackId track) {
    trace_ = &trace;
    track_ = track;
  }

  // Runs `t` after everything already submitted; `on_start` fires when it starts, `on_done` when
  // its last byte arrives. A labelled transfer is recorded as a span in `category` when it ends.
  void submit(Transfer t, std::string label, const char* category, Done on_done,
              Done on_start = {}) {
    queue_.push_back(
        {std::move(t), std::move(label), category, std::move(on_done), std::move(on_start)});
    if (!running_) start_next();
  }

  bool idle() const { return !running_ && queue_.empty(); }
  Time busy_time() const { return busy_; }
  std::uint64_t items() const { return items_; }
  // The start of the transfer whose completion callback is running.
  Time finished_start() const { return finished_start_; }

 private:
  struct Item {
    Transfer t;
    std::string label;
    const char* category = "";
    Done on_done;
    Done on_start;
  };

  void start_next() {
    if (queue_.empty()) return;
    running_ = true;
    current_ = std::move(queue_.front());
    queue_.pop_front();
    start_ = engine_.now();
    if (current_.on_start) {
      Done started = std::move(current_.on_start);
      started();
    }
    const Transfer& t = current_.t;
    if (net_ != nullptr && t.route != nullptr && !t.route->hops.empty()) {
      if (t.latency_s > 0) {
        engine_.after(Time::from_seconds(t.latency_s), [this] { flow(); });
      } else {
        flow();
      }
    } else {
      engine_.after(Time::from_seconds(t.standalone_s), [this] { finish(); });
    }
  }

  void flow() {
    const Transfer& t = current_.t;
    const double cap = t.max_rate_bytes_per_s > 0 ? t.max_rate_bytes_per_s
                                                  : std::numeric_limits<double>::infinity();
    net_->start_flow(*t.route, t.bytes, cap, 1.0, [this] { finish(); });
  }

  void finish() {
    busy_ += engine_.now() - start_;
    ++items_;
    if (trace_ != nullptr && !current_.label.empty())
      trace_->span(track_, current_.label, current_.category, start_, engine_.now());
    running_ = false;
    finished_start_ = start_;
    Done cb = std::move(current_.on_done);
    start_next();
    if (cb) cb();
  }

  Engine& engine_;
  FlowNetwork* net_;
  TraceRecorder* trace_ = nullptr;  // not owned; null: no trace
  TraceRecorder::TrackId track_ = 0;
  std::deque<Item> queue_;
  Item current_;
  bool running_ = false;
  Time start_ = Time::zero();
  Time finished_start_ = Time::zero();
  Time busy_ = Time::zero();
  std::uint64_t items_ = 0;
};

}  // namespace trainsim::sim
