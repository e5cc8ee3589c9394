#pragma once
// Pending-event priority queue: a 4-ary min-heap of 16-byte POD keys ordered by
// (time, insertion sequence), so ties pop in FIFO order and every run is bit-identical.
// The key packs the sequence number (high 40 bits) with the event's slot index (low 24 bits);
// the sequence dominates, so comparing the packed word compares sequences.
//
// Layout: the heap starts 3 entries into a 64-byte-aligned buffer, so the four children of any
// node share one cache line. `replace_top` fuses a pop with the push that usually follows it in
// a discrete-event loop (the hold model): one sift-down instead of a sift-down plus a sift-up.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

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
  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;
  ~EventQueue() { std::free(buffer_); }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const QueueKey& top() const { return heap_[0]; }

  void push(QueueKey key) {
    if (size_ == capacity_) grow();
    sift_up(size_++, key);
  }
  void pop() {
    const QueueKey last = heap_[--size_];
    if (size_ != 0) sift_down(0, last);
  }
  // Equivalent to pop() followed by push(key), in one sift.
  void replace_top(QueueKey key) { sift_down(0, key); }

  // Drops every key for which `dead(key)` holds and restores the heap in O(n).
  template <typename Pred>
  void remove_if(Pred dead) {
    std::size_t out = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      if (!dead(heap_[i])) heap_[out++] = heap_[i];
    }
    size_ = out;
    for (std::size_t i = size_ / kArity + 1; i-- > 0;) {
      if (i < size_) sift_down(i, heap_[i]);
    }
  }
  void clear() { size_ = 0; }

 private:
  static constexpr std::size_t kArity = 4;
  static constexpr std::size_t kOffset = 3;  // heap_[i] = buffer_[i + 3]: children 4i+1.. align

  void grow() {
    const std::size_t new_capacity = capacity_ == 0 ? 1021 : 2 * capacity_ + kOffset;
    const std::size_t bytes = ((new_capacity + kOffset) * sizeof(QueueKey) + 63) / 64 * 64;
    auto* fresh = static_cast<QueueKey*>(std::aligned_alloc(64, bytes));
    if (fresh == nullptr) throw std::bad_alloc();
    if (size_ != 0) std::memcpy(fresh + kOffset, heap_, size_ * sizeof(QueueKey));
    std::free(buffer_);
    buffer_ = fresh;
    heap_ = fresh + kOffset;
    capacity_ = new_capacity;
  }

  void sift_up(std::size_t i, QueueKey key) {
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
    const std::size_t n = size_;
    for (;;) {
      const std::size_t first = i * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + kArity <= n) {
        // Full family: a branch-light tournament over the four children.
        const std::size_t a = heap_[first + 1] < heap_[first] ? first + 1 : first;
        const std::size_t b = heap_[first + 3] < heap_[first + 2] ? first + 3 : first + 2;
        best = heap_[b] < heap_[a] ? b : a;
      } else {
        for (std::size_t c = first + 1; c < n; ++c) {
          if (heap_[c] < heap_[best]) best = c;
        }
      }
      if (!(heap_[best] < key)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = key;
  }

  QueueKey* buffer_ = nullptr;
  QueueKey* heap_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace trainsim::sim
