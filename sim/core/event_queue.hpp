#pragma once
// Pending-event priority queue: a ladder queue (after Tang, Goh & Thng, 2005) of 16-byte POD
// keys ordered by (time, insertion sequence), so ties pop in FIFO order and every run is
// bit-identical. The key packs the sequence number (high 40 bits) with the event's slot index
// (low 24 bits); the sequence dominates, so comparing the packed word compares sequences.
//
// Why a ladder and not a heap: a heap pays a sift over log(n) levels of a large array per
// event; here an insert is an O(1) append to a time bucket, and a bucket is sorted only when
// simulated time reaches it, in linear time, while it is small and hot. Time is split into
// nested regions:
//   fifo    keys at exactly the current time (zero-delay events): O(1), already in order,
//           because every such key was inserted after all other keys with that time;
//   bottom  a sorted array (descending, so the minimum pops from the back) owning the times
//           in [current, bottom_last_]; filled by counting-sorting one reached bucket;
//   rungs   rung 0 splits a time range into power-of-two-wide buckets; a bucket found too
//           full when time reaches it becomes a finer rung of its own (rungs 1, 2, ...);
//   top     an unsorted array for everything beyond rung 0, spread into a new rung 0 (width
//           from the keys' spread and count) when the rungs run dry.
// Every region owns a contiguous time range and each range lies after the previous one, so an
// insert goes to the first region whose range covers its time, and no key ever moves back.
// Buckets are block lists from one pooled free list, so memory stays O(keys).
// Nothing here assumes a distribution: widths come from the keys themselves; clustered or
// far-future keys only cost extra, bounded re-bucketing (at most kMaxRungs levels), a mass of
// equal times is sorted once, and a bottom overfull from short delays spills into a rung.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace trainsim::sim {

struct QueueKey {
  std::int64_t time_ps;
  std::uint64_t seq_slot;  // (sequence << kSlotBits) | slot

  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  std::uint32_t slot() const { return static_cast<std::uint32_t>(seq_slot & kSlotMask); }
  std::uint64_t seq() const { return seq_slot >> kSlotBits; }
  // Branch-free: equal times are common (picosecond ties), so a short-circuit would mispredict.
  bool operator<(const QueueKey& o) const {
    return (time_ps < o.time_ps) | ((time_ps == o.time_ps) & (seq_slot < o.seq_slot));
  }
};

// Keys must be pushed with increasing sequence numbers and with times no earlier than the
// last popped key (a discrete-event engine never schedules into the past).
class EventQueue {
 public:
  // Rungs are reserved up front so references into them survive opening a deeper one.
  EventQueue() { rungs_.reserve(kMaxRungs); }
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // The smallest key; requires !empty(). Not const: it may bring the next bucket down.
  const QueueKey& top() {
    if (bottom_.empty()) {
      // No region other than the fifo can hold a key at the current time when the bottom is
      // empty, so a non-empty fifo holds the minimum.
      if (fifo_head_ != fifo_.size()) return fifo_[fifo_head_];
      refill();
    }
    const QueueKey& b = bottom_.back();
    if (fifo_head_ != fifo_.size() && fifo_[fifo_head_] < b) return fifo_[fifo_head_];
    return b;
  }

  // Removes top(); requires !empty().
  void pop() {
    const QueueKey& t = top();
    if (!bottom_.empty() && &t == &bottom_.back()) {
      current_ = t.time_ps;
      bottom_.pop_back();
    } else if (++fifo_head_ == fifo_.size()) {
      fifo_.clear();
      fifo_head_ = 0;
    }
    --size_;
  }

  // A key about `d` places after the current top, when cheaply known: from the sorted bottom,
  // then (unordered) from the next bucket. Lets the caller prefetch what coming events touch.
  const QueueKey* ahead(std::size_t d) const {
    if (d < bottom_.size()) return &bottom_[bottom_.size() - 1 - d];
    if (rung_count_ == 0) return nullptr;
    d -= bottom_.size();
    const Rung& g = rungs_[rung_count_ - 1];
    if (g.current == g.bucket_count) return nullptr;
    // Only the next bucket's first block: enough for a prefetch distance of a few events.
    const Bucket& next = g.buckets[g.current];
    if (d >= std::min(next.size, kBlockKeys)) return nullptr;
    return &blocks_[next.head].keys[d];
  }

  void push(QueueKey key) {
    ++size_;
    const std::int64_t t = key.time_ps;
    if (t <= bottom_last_) {
      if (t == current_) {
        fifo_.push_back(key);
      } else {
        insert_bottom(key);
      }
      return;
    }
    // Deepest rung first: new events cluster near the current time.
    for (std::size_t r = rung_count_; r-- > 0;) {
      Rung& g = rungs_[r];
      const std::uint64_t off = static_cast<std::uint64_t>(t) - static_cast<std::uint64_t>(g.start);
      if (off <= g.last_offset) {
        append(g.buckets[off >> g.shift], key);
        return;
      }
    }
    top_.push_back(key);
  }

  // Drops every key for which `dead(key)` holds; keeps every region's order.
  template <typename Pred>
  void remove_if(Pred dead) {
    const auto erase_dead = [&](std::vector<QueueKey>& v, std::size_t from) {
      const auto first = v.begin() + static_cast<std::ptrdiff_t>(from);
      const auto kept = std::remove_if(first, v.end(), dead);
      size_ -= static_cast<std::size_t>(v.end() - kept);
      v.erase(kept, v.end());
    };
    erase_dead(fifo_, fifo_head_);
    erase_dead(bottom_, 0);
    for (std::size_t r = 0; r < rung_count_; ++r) {
      Rung& g = rungs_[r];
      for (std::size_t b = g.current; b < g.bucket_count; ++b) {
        // Rare (cancel compaction): drain through a scratch vector and append the survivors.
        scratch_.clear();
        drain(g.buckets[b], [this](const QueueKey& k) { scratch_.push_back(k); });
        erase_dead(scratch_, 0);
        for (const QueueKey& k : scratch_)
          append(g.buckets[b], k);
      }
    }
    erase_dead(top_, 0);
  }

  void clear() {
    fifo_.clear();
    fifo_head_ = 0;
    bottom_.clear();
    for (std::size_t r = 0; r < rung_count_; ++r) {
      for (Bucket& b : rungs_[r].buckets)
        drain(b, [](const QueueKey&) {});
    }
    rung_count_ = 0;
    top_.clear();
    size_ = 0;
  }

 private:
  // Keys per bucket aimed for when rung 0 is laid out from the spread of the top. A reached
  // bucket of up to kSplit keys is counting-sorted into the bottom (linear, in cache); a
  // fuller one becomes a finer rung first.
  static constexpr std::size_t kTarget = 32;
  static constexpr std::size_t kSplit = 2048;
  static constexpr std::size_t kMaxBuckets = std::size_t{1} << 20;
  static constexpr std::size_t kMaxRungs = 16;
  static constexpr std::size_t kBottomSpill = 2 * kSplit;

  // Buckets are singly linked lists of fixed blocks from one pool with a LIFO free list:
  // memory stays O(keys) however many buckets exist, and a block freed by the bucket just
  // consumed is the next one filled, so appends mostly write to cache-hot lines.
  static constexpr std::uint32_t kNoBlock = std::numeric_limits<std::uint32_t>::max();
  // Only a bucket's tail block is partly filled, so fill counts follow from the bucket's size,
  // and links live in a dense array of their own: an append touches one line of its block.
  static constexpr std::uint32_t kBlockKeys = 32;
  struct alignas(64) Block {
    QueueKey keys[kBlockKeys];
  };
  static_assert(sizeof(Block) == 512);
  struct Bucket {
    std::uint32_t head = kNoBlock;
    std::uint32_t tail = kNoBlock;
    std::uint32_t size = 0;
  };

  struct Rung {
    std::int64_t start = 0;
    std::uint64_t last_offset = 0;  // inclusive: the rung covers [start, start + last_offset]
    int shift = 0;                  // bucket width is 2^shift picoseconds
    std::size_t bucket_count = 0;
    std::size_t current = 0;  // buckets before this one are consumed
    std::vector<Bucket> buckets;
  };

  std::uint32_t new_block() {
    std::uint32_t b = free_block_;
    if (b != kNoBlock) {
      free_block_ = next_block_[b];
    } else {
      b = static_cast<std::uint32_t>(blocks_.size());
      blocks_.emplace_back();
      next_block_.push_back(kNoBlock);
    }
    next_block_[b] = kNoBlock;
    return b;
  }

  void append(Bucket& k, QueueKey key) {
    const std::uint32_t used = k.size % kBlockKeys;
    if (used == 0) {
      const std::uint32_t b = new_block();
      (k.tail == kNoBlock ? k.head : next_block_[k.tail]) = b;
      k.tail = b;
    }
    blocks_[k.tail].keys[used] = key;
    ++k.size;
  }

  // Visits a bucket's keys in insertion order (by value: `f` may append elsewhere and grow
  // the pool), freeing each block once read.
  template <typename F>
  void drain(Bucket& k, F f) {
    std::uint32_t left = k.size;
    for (std::uint32_t b = k.head; b != kNoBlock;) {
      const std::uint32_t used = std::min(left, kBlockKeys);
      left -= used;
      for (std::uint32_t i = 0; i < used; ++i)
        f(QueueKey(blocks_[b].keys[i]));
      const std::uint32_t next = next_block_[b];
      next_block_[b] = free_block_;
      free_block_ = b;
      b = next;
    }
    k = Bucket{};
  }

  static bool later(const QueueKey& a, const QueueKey& b) { return b < a; }

  void insert_bottom(QueueKey key) {
    // Descending order; the new key's place is found from the back, where near-term keys sit.
    auto pos = std::upper_bound(bottom_.begin(), bottom_.end(), key, later);
    bottom_.insert(pos, key);
    if (bottom_.size() > kBottomSpill) spill_bottom();
  }

  // The bottom grew past kBottomSpill through direct inserts: hand the part after the current
  // time to a new deepest rung so inserts stay cheap.
  void spill_bottom() {
    if (rung_count_ == kMaxRungs || bottom_.front().time_ps == current_) return;
    const std::int64_t start = current_ + 1;
    const std::uint64_t span =
        static_cast<std::uint64_t>(bottom_last_) - static_cast<std::uint64_t>(start);
    Rung& g = open_rung(start, span, bottom_.size());
    // Keys at the current time stay: the fifo relies on the bottom holding all of them.
    const auto later_part_end = std::partition_point(
        bottom_.begin(), bottom_.end(), [this](const QueueKey& k) { return k.time_ps > current_; });
    for (auto it = bottom_.begin(); it != later_part_end; ++it) {
      append(
          g.buckets[(static_cast<std::uint64_t>(it->time_ps) - static_cast<std::uint64_t>(start)) >>
                    g.shift],
          *it);
    }
    bottom_.erase(bottom_.begin(), later_part_end);
    bottom_last_ = current_;
  }

  // Lays out rung number rung_count_ over [start, start + span] for about `count` keys.
  Rung& open_rung(std::int64_t start, std::uint64_t span, std::size_t count) {
    const std::size_t want = std::clamp<std::size_t>(count / kTarget, 1, kMaxBuckets);
    int shift = 0;
    while (shift < 63 && (span >> shift) >= want)
      ++shift;
    return open_rung_with_shift(start, span, shift);
  }

  Rung& open_rung_with_shift(std::int64_t start, std::uint64_t span, int shift) {
    if (rungs_.size() == rung_count_) rungs_.emplace_back();
    Rung& g = rungs_[rung_count_++];
    g.start = start;
    g.shift = shift;
    g.bucket_count = static_cast<std::size_t>(span >> shift) + 1;
    // Exactly the range given, not rounded up to whole buckets: a spilled bottom's rung must
    // not reach into its parent's range.
    g.last_offset = span;
    g.current = 0;
    if (g.buckets.size() < g.bucket_count)
      g.buckets.resize(g.bucket_count);  // empty beyond `current`
    return g;
  }

  // Brings the next non-empty bucket down into the (empty) bottom; requires size_ > fifo size.
  void refill() {
    for (;;) {
      if (rung_count_ == 0) rebuild_from_top();
      Rung& g = rungs_[rung_count_ - 1];
      while (g.current < g.bucket_count && g.buckets[g.current].size == 0)
        ++g.current;
      if (g.current == g.bucket_count) {
        --rung_count_;
        continue;
      }
      Bucket& b = g.buckets[g.current];
      // The last bucket may be cut short by the rung's end (ranges never overlap).
      const std::uint64_t first_off = static_cast<std::uint64_t>(g.current) << g.shift;
      const std::uint64_t last_off =
          std::min(first_off + ((std::uint64_t{1} << g.shift) - 1), g.last_offset);
      const std::int64_t bucket_start =
          static_cast<std::int64_t>(static_cast<std::uint64_t>(g.start) + first_off);
      const std::int64_t bucket_last =
          static_cast<std::int64_t>(static_cast<std::uint64_t>(g.start) + last_off);
      ++g.current;
      if (b.size > kSplit && g.shift > 0 && rung_count_ < kMaxRungs) {
        // Too full to sort cheaply: a finer rung over exactly this bucket's range.
        const std::size_t want = std::bit_ceil(std::clamp<std::size_t>(b.size / kTarget, 2, 4096));
        const int bits = std::min(g.shift, std::countr_zero(want));
        Rung& child = open_rung_with_shift(bucket_start, last_off - first_off, g.shift - bits);
        drain(b, [this, &child, bucket_start](const QueueKey& k) {
          append(child.buckets[(static_cast<std::uint64_t>(k.time_ps) -
                                static_cast<std::uint64_t>(bucket_start)) >>
                               child.shift],
                 k);
        });
        // Skipped empty buckets before this one are nobody's range now: the bottom takes them.
        bottom_last_ = bucket_start - 1;
        continue;
      }
      sort_into_bottom(b, bucket_start, g.shift);
      bottom_last_ = bucket_last;
      return;
    }
  }

  // Counting sort on the high bits of the time offset (about one key per sub-bucket), then an
  // insertion pass that only fixes order inside sub-buckets: linear for spread-out keys, and
  // linear for equal times too, as a bucket holds its keys in insertion (= sequence) order.
  void sort_into_bottom(Bucket& b, std::int64_t start, int shift) {
    const std::size_t n = b.size;
    bottom_.resize(n);
    const int bits = std::min(shift, static_cast<int>(std::bit_width(n)));
    const int sub = shift - bits;
    counts_.assign((std::size_t{1} << bits) + 1, 0);
    const auto index = [start, sub](const QueueKey& k) {
      return static_cast<std::size_t>(
          (static_cast<std::uint64_t>(k.time_ps) - static_cast<std::uint64_t>(start)) >> sub);
    };
    std::uint32_t left = b.size;
    for (std::uint32_t blk = b.head; blk != kNoBlock; blk = next_block_[blk]) {
      const std::uint32_t used = std::min(left, kBlockKeys);
      left -= used;
      for (std::uint32_t i = 0; i < used; ++i)
        ++counts_[index(blocks_[blk].keys[i])];
    }
    // Descending: sub-bucket j ends where the keys of all later sub-buckets end.
    std::uint32_t end = 0;
    for (std::size_t j = counts_.size() - 1; j-- > 0;) {
      end += counts_[j];
      counts_[j] = end;
    }
    // Filling each sub-bucket from its end puts equal times in descending sequence order.
    drain(b, [this, &index](const QueueKey& k) { bottom_[--counts_[index(k)]] = k; });
    if (n > kBottomSpill) {
      std::sort(bottom_.begin(), bottom_.end(), later);  // an unsplittable crowd: bound the cost
      return;
    }
    for (std::size_t i = 1; i < n; ++i) {
      if (!(bottom_[i - 1] < bottom_[i])) continue;
      const QueueKey k = bottom_[i];
      std::size_t j = i;
      do {
        bottom_[j] = bottom_[j - 1];
      } while (--j > 0 && bottom_[j - 1] < k);
      bottom_[j] = k;
    }
  }

  // The rungs ran dry: spread the top over a new rung 0 whose bucket width follows the rate
  // at which simulated time advanced per event since the last rebuild (or, the first time,
  // the spread of the keys themselves).
  void rebuild_from_top() {
    std::int64_t lo = top_.front().time_ps;
    std::int64_t hi = lo;
    for (const QueueKey& k : top_) {
      lo = std::min(lo, k.time_ps);
      hi = std::max(hi, k.time_ps);
    }
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    Rung& g = open_rung(lo, span, top_.size());
    for (const QueueKey& k : top_) {
      append(g.buckets[(static_cast<std::uint64_t>(k.time_ps) - static_cast<std::uint64_t>(lo)) >>
                       g.shift],
             k);
    }
    top_.clear();
    bottom_last_ = lo - 1;  // lo > bottom_last_ already: the gap before lo belongs to the bottom
  }

  std::vector<QueueKey> fifo_;
  std::size_t fifo_head_ = 0;
  std::vector<QueueKey> bottom_;
  std::int64_t bottom_last_ = std::numeric_limits<std::int64_t>::min();
  std::int64_t current_ = std::numeric_limits<std::int64_t>::min();  // time of the last pop
  std::vector<Rung> rungs_;
  std::size_t rung_count_ = 0;
  std::vector<QueueKey> top_;
  std::vector<Block> blocks_;
  std::vector<std::uint32_t> next_block_;  // per block: the next in its bucket or free list
  std::uint32_t free_block_ = kNoBlock;
  std::vector<std::uint32_t> counts_;  // sort_into_bottom's scratch
  std::vector<QueueKey> scratch_;      // remove_if's scratch
  std::size_t size_ = 0;
};

}  // namespace trainsim::sim
