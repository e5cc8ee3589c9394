#pragma once
// The discrete-event engine: an ordinary object (never global) owning simulated time and the
// pending events. Scheduling never allocates per event: callbacks live inline in slots that
// are recycled through a free list, and slots sit in fixed-size chunks so a running callback
// never moves while it schedules more events. Cancel is O(1): the slot's sequence number is
// cleared and the stale queue key is skipped when it surfaces.

#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/inline_callback.hpp"
#include "sim/core/time.hpp"

namespace trainsim::sim {

// Identifies one scheduled event; stays valid (and harmless to cancel) after the event ran.
struct EventId {
  std::uint32_t slot = 0;
  std::uint64_t seq = 0;  // 0: no event
  explicit operator bool() const { return seq != 0; }
};

struct EngineStats {
  std::uint64_t events_executed = 0;
  std::uint64_t events_scheduled = 0;
  std::uint64_t events_cancelled = 0;
  double wall_s = 0.0;  // wall-clock seconds spent inside run()/run_until()
  double events_per_s() const {
    return wall_s > 0 ? static_cast<double>(events_executed) / wall_s : 0;
  }
};

class Engine {
 public:
  static constexpr std::size_t kCallbackBytes = 48;
  using Callback = InlineCallback<kCallbackBytes>;

  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Time now() const { return now_; }

  // Schedules `f` at absolute time `t` (t >= now()).
  template <typename F>
  EventId at(Time t, F&& f) {
    if (t < now_) throw std::logic_error("Engine::at: time is in the past");
    return schedule(t, std::forward<F>(f));
  }
  // Schedules `f` after `delay` (delay >= 0).
  template <typename F>
  EventId after(Time delay, F&& f) {
    if (delay < Time::zero()) throw std::logic_error("Engine::after: negative delay");
    return schedule(now_ + delay, std::forward<F>(f));
  }
  // Returns true when the event was still pending and is now cancelled.
  bool cancel(EventId id);

  // Runs until no event is pending or stop() is called.
  void run() { run_until(Time::max()); }
  // Runs every event with time <= limit; then, unless stopped, advances now() to limit.
  void run_until(Time limit);
  // Makes the current run()/run_until() return after the event that is executing.
  void stop() { stopped_ = true; }

  std::size_t pending() const { return live_; }
  const EngineStats& stats() const { return stats_; }

 private:
  // Exactly one cache line, so running an event touches one line of the pool; the sequence
  // numbers live apart in slot_seq_, dense enough to stay in cache for the cancel checks.
  struct alignas(64) Slot {
    Callback callback;
  };
  static_assert(sizeof(Slot) == 64);
  static constexpr std::uint64_t kMaxSeq = (std::uint64_t{1} << (64 - QueueKey::kSlotBits)) - 1;
  static constexpr std::uint32_t kChunkBits = 12;
  static constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr std::size_t kPrefetchDistance = 16;

  Slot& slot(std::uint32_t i) { return chunks_[i >> kChunkBits][i & (kChunkSize - 1)]; }
  std::uint32_t acquire_slot() {
    if (free_slots_.empty()) return new_slot();
    const std::uint32_t i = free_slots_.back();
    free_slots_.pop_back();
    return i;
  }
  std::uint32_t new_slot();
  // The callable is built straight into its slot (its type is known here, so no indirect move);
  // the rest is out of line.
  template <typename F>
  EventId schedule(Time t, F&& f) {
    if (next_seq_ > kMaxSeq) throw std::length_error("Engine: event sequence space exhausted");
    const std::uint32_t i = acquire_slot();
    // A free slot's callback is empty; constructing over it (rather than move-assigning a
    // temporary) keeps the capture copy inline instead of an indirect move call.
    Callback& cb = slot(i).callback;
    cb.~Callback();
    try {
      ::new (static_cast<void*>(&cb)) Callback(std::forward<F>(f));
    } catch (...) {
      ::new (static_cast<void*>(&cb)) Callback();
      free_slots_.push_back(i);  // a throwing capture copy leaves the engine as it was
      throw;
    }
    return enqueue(t, i);
  }
  EventId enqueue(Time t, std::uint32_t i);
  void compact_if_mostly_stale();

  Time now_ = Time::zero();
  EventQueue queue_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::vector<std::uint64_t> slot_seq_;  // sequence of the event in each slot; 0 when free
  std::vector<std::uint32_t> free_slots_;
  std::uint32_t slots_used_ = 0;
  std::uint64_t next_seq_ = 1;
  std::size_t live_ = 0;   // pending, not cancelled
  std::size_t stale_ = 0;  // cancelled keys still in the queue
  bool stopped_ = false;
  EngineStats stats_;
};

}  // namespace trainsim::sim
