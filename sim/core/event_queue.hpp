#pragma once
// Pending-event priority queue: a 4-ary min-heap of 16-byte POD keys ordered by
// (time, insertion sequence), so ties pop in FIFO order and every run is bit-identical.
// The key packs the sequence number (high 40 bits) with the event's slot index (low 24 bits);
// the sequence dominates, so comparing the packed word compares sequences.
//
// `replace_top` fuses a pop with the push that usually follows it in a discrete-event loop
// (the hold model): one sift-down instead of a sift-down plus a sift-up.

#include <cstdint>
#include <vector>

namespace trainsim::sim {

struct QueueKey {
  std::int64_t time_ps;
  std::uint64_t seq_slot;  // (sequence << kSlotBits) | slot

  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  std::uint32_t slot() const { return static_cast<std::uint32_t>(seq_slot & kSlotMask); }
  std::uint64_t seq() const { return seq_slot >> kSlotBits; }
  bool operator<(const QueueKey& o) const {
    return time_ps < o.time_ps || (time_ps == o.time_ps && seq_slot < o.seq_slot);
  }
};

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const QueueKey& top() const { return heap_.front(); }

  void push(QueueKey key) {
    heap_.push_back(key);
    sift_up(heap_.size() - 1);
  }
  void pop() {
    const QueueKey last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0, last);
  }
  // Equivalent to pop() followed by push(key), in one sift.
  void replace_top(QueueKey key) { sift_down(0, key); }

  // Drops every key for which `dead(key)` holds and restores the heap in O(n).
  template <typename Pred>
  void remove_if(Pred dead) {
    std::size_t out = 0;
    for (const QueueKey& k : heap_) {
      if (!dead(k)) heap_[out++] = k;
    }
    heap_.resize(out);
    for (std::size_t i = heap_.size() / kArity + 1; i-- > 0;) {
      if (i < heap_.size()) sift_down(i, heap_[i]);
    }
  }
  void clear() { heap_.clear(); }

 private:
  static constexpr std::size_t kArity = 4;

  void sift_up(std::size_t i) {
    const QueueKey key = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!(key < heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = key;
  }
  // Places `key` at hole i and moves it down to its place.
  void sift_down(std::size_t i, QueueKey key) {
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t first = i * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t last = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < last; ++c) {
        if (heap_[c] < heap_[best]) best = c;
      }
      if (!(heap_[best] < key)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = key;
  }

  std::vector<QueueKey> heap_;
};

}  // namespace trainsim::sim
