#pragma once
// A device stream as CUDA runs one: work items (kernels, copies, collectives) execute one after
// another in enqueue order, each no earlier than it was enqueued (the host launches it), and an
// item may wait on a Gate (cudaStreamWaitEvent: an input copy, the gradient collectives). Every
// instant of the stream's life is accounted to a category: busy time to the item's category,
// idle time to the reason it idles (its head item's gate, or the empty queue's cause set by the
// owner, e.g. "the host has not launched anything yet"). So the parts of a step add up exactly.
//
// Kernels of another stream that run on the same device at the same time (a collective's kernel:
// NCCL runs one thread block per channel, each on its own SM, streaming its reductions through
// DRAM) take part of the device: the owner declares each such interval with share(), and an item
// starting while one is on is stretched for the part of it that overlaps: a compute-bound item
// runs on the SMs left (slowdown compute_units / (compute_units - blocks)), a memory-bound one on
// the DRAM bandwidth left (slowdown 1 / (1 - memory share)). The stretch is fixed when the item
// starts, from the intervals declared by then (a collective queued later does not slow an item
// already running), and is accounted to the item's own category; interference() sums it.

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/engine.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace trainsim::sim {

class DeviceStream;

// Opens when its pending count drops to zero; streams whose head item waits on it resume then.
class Gate {
 public:
  explicit Gate(int idle_cause) : cause_(idle_cause) {}
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  void add(int n = 1) { pending_ += n; }
  void reset() { pending_ = 0; }
  // One pending item finished; at zero the gate opens and wakes its waiters.
  void done();
  bool open() const { return pending_ <= 0; }
  int idle_cause() const { return cause_; }

 private:
  friend class DeviceStream;
  int pending_ = 0;
  int cause_ = 0;
  std::vector<DeviceStream*> waiters_;
};

class DeviceStream {
 public:
  using Done = InlineCallback<40>;
  static constexpr int kMaxCategories = 12;

  DeviceStream(Engine& engine, int empty_queue_cause)
      : engine_(engine), empty_cause_(empty_queue_cause) {}
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;

  void trace_to(TraceRecorder& trace, TraceRecorder::TrackId track) {
    trace_ = &trace;
    track_ = track;
  }
  // Idle intervals with this cause appear in the trace as `label` spans of `category` (e.g. a
  // pipeline bubble); other idle time is left blank.
  void trace_idle(int cause, std::string_view label, std::string_view category) {
    idle_labels_[static_cast<std::size_t>(cause)] = {label, category};
  }

  // Runs `duration` of work accounted to `category` after everything enqueued before it, once
  // `gate` (if any) is open; `on_done` fires at its end. `label` is recorded in the trace.
  // `memory_bound`: the item is limited by DRAM bandwidth, not by the SMs (how share() slows it).
  // `launches`: how many kernels the item stands for (a run of identical launches as one item).
  void enqueue(Time duration, int category, std::string_view label, std::string_view trace_category,
               Done on_done, Gate* gate = nullptr, bool memory_bound = false, int launches = 1);

  // Another stream's kernel occupies part of the device from `from` to `until` (intervals declared
  // in time order; one starting before the previous ends starts at its end): compute-bound items
  // run `compute_slowdown` (>= 1) times slower during it, memory-bound ones 1 / (1 - memory_share)
  // (memory_share in [0, 1)) slower.
  void share(Time from, Time until, double compute_slowdown, double memory_share);
  // Seconds items were stretched by share() so far (included in their categories' totals).
  double interference() const { return interference_s_; }

  // What an idle stream with an empty queue is waiting for, from now on (e.g. the host is blocked
  // on the input queue rather than dispatching).
  void set_empty_queue_cause(int cause);

  // Cumulative seconds per category (busy categories and idle causes share one index space),
  // including the current idle interval up to now.
  std::array<double, kMaxCategories> totals() const;
  bool idle() const { return !running_; }
  std::size_t queued() const { return queue_.size(); }
  // Calls `wake` once, when an item finishes and fewer than `depth` remain queued (a host thread
  // blocked on a full launch queue resumes then). One waiter at a time.
  void wake_below(std::size_t depth, Done wake) {
    wake_depth_ = depth;
    wake_ = std::move(wake);
  }
  // Work items started so far (zero-length markers excluded), and the kernels they stand for.
  std::uint64_t items() const { return items_; }
  std::uint64_t launches() const { return launches_; }

 private:
  struct Item {
    Time duration;
    int category;
    std::string_view label;
    std::string_view trace_category;
    Done on_done;
    Gate* gate;
    bool memory_bound;
    int launches;
  };
  struct Share {
    Time from;
    Time until;
    double compute_slowdown;
    double memory_slowdown;
  };
  friend class Gate;

  // The duration of `work` (at full device speed) starting at `start` under the declared shares.
  Time stretched(Time start, Time work, bool memory_bound);

  void pump();
  void finish();
  void close_idle(Time now);
  int current_idle_cause() const;

  Engine& engine_;
  TraceRecorder* trace_ = nullptr;
  TraceRecorder::TrackId track_ = 0;
  std::deque<Item> queue_;
  bool running_ = false;
  Time idle_since_ = Time::zero();
  int empty_cause_;
  std::array<double, kMaxCategories> totals_{};
  std::uint64_t items_ = 0;
  std::uint64_t launches_ = 0;
  std::deque<Share> shares_;  // declared, not yet over at the last item start
  std::array<std::pair<std::string_view, std::string_view>, kMaxCategories> idle_labels_{};
  std::size_t wake_depth_ = 0;
  Done wake_;
  double interference_s_ = 0;
};

inline void Gate::done() {
  if (pending_ == 1) {
    // The waiters idled on this gate until now: account that before it opens.
    for (DeviceStream* s : waiters_)
      s->close_idle(s->engine_.now());
  }
  if (--pending_ > 0) return;
  std::vector<DeviceStream*> waiters;
  waiters.swap(waiters_);
  for (DeviceStream* s : waiters)
    s->pump();
}

inline int DeviceStream::current_idle_cause() const {
  if (!queue_.empty() && queue_.front().gate != nullptr && !queue_.front().gate->open())
    return queue_.front().gate->idle_cause();
  return empty_cause_;
}

inline void DeviceStream::close_idle(Time now) {
  if (now > idle_since_) {
    const auto cause = static_cast<std::size_t>(current_idle_cause());
    totals_[cause] += (now - idle_since_).seconds();
    if (trace_ != nullptr && !idle_labels_[cause].first.empty())
      trace_->span(track_, idle_labels_[cause].first, idle_labels_[cause].second, idle_since_, now);
  }
  idle_since_ = now;
}

inline void DeviceStream::set_empty_queue_cause(int cause) {
  if (!running_ && queue_.empty()) close_idle(engine_.now());
  empty_cause_ = cause;
}

inline void DeviceStream::enqueue(Time duration, int category, std::string_view label,
                                  std::string_view trace_category, Done on_done, Gate* gate,
                                  bool memory_bound, int launches) {
  if (!running_ && queue_.empty()) close_idle(engine_.now());
  queue_.push_back({duration, category, label, trace_category, std::move(on_done), gate,
                    memory_bound, launches});
  pump();
}

inline void DeviceStream::share(Time from, Time until, double compute_slowdown,
                                double memory_share) {
  // An interval declared from an estimate may reach past the next one's start: the later one
  // begins where the earlier ends.
  if (!shares_.empty() && from < shares_.back().until) from = shares_.back().until;
  if (until <= from) return;
  shares_.push_back({from, until, compute_slowdown, 1 / (1 - memory_share)});
}

inline Time DeviceStream::stretched(Time start, Time work, bool memory_bound) {
  while (!shares_.empty() && shares_.front().until <= start)
    shares_.pop_front();
  if (shares_.empty() || work <= Time::zero() || shares_.front().from >= start + work) return work;
  // Walk the shares in time order: full speed between them, slowed inside them. Only
  // differences of times are scaled, so the result does not depend on where in time the item
  // runs (bit-identical when a whole run shifts).
  Time left = work;
  Time t = start;
  for (const Share& sh : shares_) {
    if (sh.from > t) {
      if (left <= sh.from - t) break;
      left -= sh.from - t;
      t = sh.from;
    }
    const double slowdown = memory_bound ? sh.memory_slowdown : sh.compute_slowdown;
    const Time span = sh.until - t;
    const Time needed = Time::from_seconds(left.seconds() * slowdown);
    if (needed <= span) {
      t += needed;
      left = Time::zero();
      break;
    }
    left -= Time::from_seconds(span.seconds() / slowdown);
    t = sh.until;
  }
  const Time d = t + left - start;
  return d > work ? d : work;
}

inline void DeviceStream::pump() {
  if (running_ || queue_.empty()) return;
  Item& head = queue_.front();
  if (head.gate != nullptr && !head.gate->open()) {
    auto& w = head.gate->waiters_;
    bool listed = false;
    for (DeviceStream* s : w)
      listed = listed || s == this;
    if (!listed) w.push_back(this);
    return;
  }
  const Time now = engine_.now();
  close_idle(now);
  running_ = true;
  if (head.duration > Time::zero()) {  // zero-length markers (syncs) are not work
    ++items_;
    launches_ += static_cast<std::uint64_t>(std::max(head.launches, 0));
  }
  const Time d = stretched(now, head.duration, head.memory_bound);
  interference_s_ += (d - head.duration).seconds();
  head.duration = d;
  if (trace_ != nullptr && !head.label.empty())
    trace_->span(track_, head.label, head.trace_category, now, now + head.duration);
  engine_.after(head.duration, [this] { finish(); });
}

inline void DeviceStream::finish() {
  Item item = std::move(queue_.front());
  queue_.pop_front();
  totals_[static_cast<std::size_t>(item.category)] += item.duration.seconds();
  running_ = false;
  idle_since_ = engine_.now();
  if (item.on_done) item.on_done();
  pump();
  if (wake_ && queue_.size() < wake_depth_) {
    Done wake = std::move(wake_);
    wake_ = Done();
    wake();
  }
}

inline std::array<double, DeviceStream::kMaxCategories> DeviceStream::totals() const {
  auto t = totals_;
  if (!running_ && engine_.now() > idle_since_)
    t[static_cast<std::size_t>(current_idle_cause())] += (engine_.now() - idle_since_).seconds();
  return t;
}

}  // namespace trainsim::sim
