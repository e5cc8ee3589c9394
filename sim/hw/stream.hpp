#pragma once
// A serial execution resource (a device's compute or communication stream, a host worker pool
// treated as one queue): work items run one after another in submission order, each for its
// duration; the completion callback fires when the item finishes. Busy time is accumulated so
// reports can say how long the stream worked.

#include <cstdint>
#include <deque>
#include <string_view>
#include <utility>

#include "sim/core/engine.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace trainsim::sim {

class Stream {
 public:
  using Done = InlineCallback<40>;

  explicit Stream(Engine& engine) : engine_(engine) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Records every labelled item as a span on `track` of `trace` from now on.
  void trace_to(TraceRecorder& trace, TraceRecorder::TrackId track) {
    trace_ = &trace;
    track_ = track;
  }

  // Runs `duration` of work after everything already submitted; `on_done` fires at its end.
  void submit(Time duration, Done on_done) { submit(duration, {}, {}, std::move(on_done)); }
  // The same, recorded in the trace (when one is attached) as `label` in `category`.
  void submit(Time duration, std::string_view label, std::string_view category, Done on_done) {
    const Time start = busy_until_ > engine_.now() ? busy_until_ : engine_.now();
    if (trace_ != nullptr && !label.empty())
      trace_->span(track_, label, category, start, start + duration);
    busy_until_ = start + duration;
    busy_ += duration;
    ++items_;
    pending_.push_back(std::move(on_done));
    engine_.at(busy_until_, [this] {
      Done cb = std::move(pending_.front());
      pending_.pop_front();
      if (cb) cb();
    });
  }
  Time busy_until() const { return busy_until_; }
  Time busy_time() const { return busy_; }
  std::uint64_t items() const { return items_; }

 private:
  Engine& engine_;
  TraceRecorder* trace_ = nullptr;  // not owned; null: no trace
  TraceRecorder::TrackId track_ = 0;
  Time busy_until_ = Time::zero();
  Time busy_ = Time::zero();
  std::uint64_t items_ = 0;
  std::deque<Done> pending_;  // completions in submission order (FIFO matches finish order)
};

}  // namespace trainsim::sim
