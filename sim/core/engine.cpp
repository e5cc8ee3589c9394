#include "sim/core/engine.hpp"

namespace trainsim::sim {

namespace {
constexpr std::uint32_t kMaxSlots = std::uint32_t{1} << QueueKey::kSlotBits;
}  // namespace

std::uint32_t Engine::new_slot() {
  if (slots_used_ == kMaxSlots) {
    throw std::length_error("Engine: more than 2^24 events pending at once");
  }
  if ((slots_used_ & (kChunkSize - 1)) == 0) {
    chunks_.push_back(std::make_unique<Slot[]>(kChunkSize));
    slot_seq_.resize(slot_seq_.size() + kChunkSize, 0);
  }
  return slots_used_++;
}

EventId Engine::enqueue(Time t, std::uint32_t i) {
  const std::uint64_t seq = next_seq_++;
  slot_seq_[i] = seq;
  queue_.push(QueueKey{t.picoseconds(), (seq << QueueKey::kSlotBits) | i});
  ++live_;
  ++stats_.events_scheduled;
  return EventId{i, seq};
}

bool Engine::cancel(EventId id) {
  if (!id || id.slot >= slots_used_) return false;
  if (slot_seq_[id.slot] != id.seq) return false;
  slot(id.slot).callback.reset();
  slot_seq_[id.slot] = 0;
  free_slots_.push_back(id.slot);
  --live_;
  ++stale_;
  ++stats_.events_cancelled;
  compact_if_mostly_stale();
  return true;
}

void Engine::compact_if_mostly_stale() {
  if (stale_ < 1024 || stale_ * 2 < queue_.size()) return;
  queue_.remove_if([this](const QueueKey& k) { return slot_seq_[k.slot()] != k.seq(); });
  stale_ = 0;
}

void Engine::run_until(Time limit) {
  stopped_ = false;
  const auto wall_start = std::chrono::steady_clock::now();
  while (!stopped_ && !queue_.empty()) {
    const QueueKey key = queue_.top();
    // Only keys of cancelled events are stale; with none outstanding the check is skipped.
    if (stale_ != 0 && slot_seq_[key.slot()] != key.seq()) {
      queue_.pop();
      --stale_;
      continue;
    }
    if (key.time_ps > limit.picoseconds()) break;
    // Popped before the callback runs: the callback's own schedules then see a queue without
    // it, and the running event can no longer be cancelled or compacted away.
    queue_.pop();
    // Slots are scattered over the pool: start loading one a few events ahead so it is in
    // cache by the time it runs.
    if (const QueueKey* next = queue_.ahead(kPrefetchDistance))
      __builtin_prefetch(&slot(next->slot()));
    Slot& s = slot(key.slot());
    now_ = Time::ps(key.time_ps);
    slot_seq_[key.slot()] = 0;
    --live_;
    s.callback();
    s.callback.reset();
    free_slots_.push_back(key.slot());
    ++stats_.events_executed;
  }
  if (!stopped_ && limit != Time::max() && now_ < limit) now_ = limit;
  stats_.wall_s +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
}

}  // namespace trainsim::sim
