// Differential tests of the ladder event queue (and of the engine on top of it) against a
// plain ordered set: every pop must match the reference exactly, ties included, across time
// scales from zero delay to hours and across the queue's rebuild, split and spill paths.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "sim/core/engine.hpp"
#include "sim/core/event_queue.hpp"

using trainsim::sim::Engine;
using trainsim::sim::EventId;
using trainsim::sim::EventQueue;
using trainsim::sim::QueueKey;
using trainsim::sim::Time;

namespace {

// A delay drawn from one of several very different scales, so bucket widths chosen for one
// scale keep meeting keys of another.
std::int64_t mixed_delay(std::mt19937_64& rng, int profile) {
  const auto pick = [&](std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(0, hi)(rng);
  };
  const int kind = static_cast<int>(rng() % 16);
  switch (profile) {
    case 0:  // mostly zero and tiny delays: the fifo and the bottom's direct inserts
      return kind < 6 ? 0 : kind < 12 ? pick(3) : pick(1'000);
    case 1:  // exponential around 100 ns: the hold model
      return static_cast<std::int64_t>(std::exponential_distribution<double>(1e-5)(rng));
    case 2:  // clustered times with occasional far-future outliers
      return kind < 13   ? pick(10) * 1'000
             : kind < 15 ? pick(1'000'000'000)
                         : pick(3'600'000'000'000'000);
    default:  // everything at once: 0, ps, ns, ms, hours
      switch (kind % 5) {
        case 0:
          return 0;
        case 1:
          return pick(100);
        case 2:
          return pick(1'000'000);
        case 3:
          return pick(1'000'000'000'000);
        default:
          return pick(7'200'000'000'000'000);
      }
  }
}

using RefKey = std::pair<std::int64_t, std::uint64_t>;  // (time, seq)

void run_queue_differential(std::uint64_t seed, int profile, std::size_t ops) {
  std::mt19937_64 rng(seed);
  EventQueue q;
  std::set<RefKey> ref;
  std::int64_t now = 0;
  std::uint64_t seq = 1;
  const auto push = [&] {
    const std::int64_t t = now + mixed_delay(rng, profile);
    const std::uint32_t slot = static_cast<std::uint32_t>(seq & QueueKey::kSlotMask);
    q.push(QueueKey{t, (seq << QueueKey::kSlotBits) | slot});
    ref.emplace(t, seq);
    ++seq;
  };
  for (std::size_t i = 0; i < ops; ++i) {
    const std::uint64_t r = rng() % 1000;
    // Alternate growing and shrinking phases so the queue is rebuilt and drained many times.
    const bool grow_phase = (i / 5000) % 2 == 0;
    if (r < (grow_phase ? 600u : 400u) || ref.empty()) {
      push();
      if (r % 7 == 0) push();  // bursts
    } else if (r < 995) {
      REQUIRE(!q.empty());
      const QueueKey k = q.top();
      const RefKey expect = *ref.begin();
      REQUIRE(k.time_ps == expect.first);
      REQUIRE(k.seq() == expect.second);
      REQUIRE(k.slot() == static_cast<std::uint32_t>(expect.second & QueueKey::kSlotMask));
      q.pop();
      ref.erase(ref.begin());
      now = k.time_ps;
    } else {
      // Lazy-cancel compaction: drop a random subset everywhere at once.
      const std::uint64_t mod = 2 + rng() % 5;
      q.remove_if([mod](const QueueKey& k) { return k.seq() % mod == 0; });
      for (auto it = ref.begin(); it != ref.end();)
        it = it->second % mod == 0 ? ref.erase(it) : std::next(it);
    }
    REQUIRE(q.size() == ref.size());
  }
  while (!ref.empty()) {
    const QueueKey k = q.top();
    REQUIRE(k.time_ps == ref.begin()->first);
    REQUIRE(k.seq() == ref.begin()->second);
    q.pop();
    ref.erase(ref.begin());
  }
  CHECK(q.empty());
}

}  // namespace

TEST_CASE("event queue pops exactly like an ordered set across time scales") {
  for (int profile = 0; profile < 4; ++profile) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      INFO("profile " << profile << " seed " << seed);
      run_queue_differential(seed * 7919 + static_cast<std::uint64_t>(profile), profile, 60'000);
    }
  }
}

TEST_CASE("event queue handles a mass of equal times, zero delays and extreme times") {
  EventQueue q;
  std::uint64_t seq = 1;
  const auto key = [&](std::int64_t t) { return QueueKey{t, (seq++) << QueueKey::kSlotBits}; };
  // 5000 keys at one instant (a width-1 bucket cannot be split), then one near the end of time.
  for (int i = 0; i < 5000; ++i)
    q.push(key(1'000));
  q.push(key(std::numeric_limits<std::int64_t>::max()));
  q.push(key(0));
  std::uint64_t last_seq = 0;
  CHECK(q.top().time_ps == 0);
  q.pop();
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(q.top().time_ps == 1'000);
    REQUIRE(q.top().seq() > last_seq);
    last_seq = q.top().seq();
    q.pop();
    if (i % 3 == 0) q.push(key(1'000));  // zero-delay while the instant is being drained
  }
  std::size_t zero_delay = 0;
  while (q.top().time_ps == 1'000) {
    REQUIRE(q.top().seq() > last_seq);
    last_seq = q.top().seq();
    q.pop();
    ++zero_delay;
  }
  CHECK(zero_delay == 1667);
  CHECK(q.top().time_ps == std::numeric_limits<std::int64_t>::max());
  q.pop();
  CHECK(q.empty());
}

TEST_CASE("event queue splits crowded buckets and spills an overfull bottom, staying exact") {
  // A far outlier makes rung 0 coarse, so the crowd lands in one bucket that must be split
  // several times over; then thousands of short delays land in the bottom's window and must
  // spill into a new rung. Every pop is checked against an ordered set.
  EventQueue q;
  std::set<RefKey> ref;
  std::uint64_t seq = 1;
  std::mt19937_64 rng(42);
  const auto push = [&](std::int64_t t) {
    q.push(QueueKey{t, seq << QueueKey::kSlotBits});
    ref.emplace(t, seq++);
  };
  const auto pop_check = [&] {
    REQUIRE(q.top().time_ps == ref.begin()->first);
    REQUIRE(q.top().seq() == ref.begin()->second);
    const std::int64_t t = q.top().time_ps;
    q.pop();
    ref.erase(ref.begin());
    return t;
  };
  push(0);
  push(std::int64_t{1} << 50);
  for (int i = 0; i < 20'000; ++i)
    push(1 + std::uniform_int_distribution<std::int64_t>(0, 1'000'000)(rng));
  std::int64_t now = pop_check();
  now = pop_check();
  for (int i = 0; i < 10'000; ++i) {
    push(now + std::uniform_int_distribution<std::int64_t>(0, 50)(rng));
    if (i % 3 == 0) now = pop_check();
  }
  for (int popped = 0; !ref.empty(); ++popped) {
    now = pop_check();
    if (popped % 5 == 0 && popped < 50'000)
      push(now + std::uniform_int_distribution<std::int64_t>(0, 1'000)(rng));
  }
  CHECK(q.empty());
}

namespace {

// The engine's contract restated as the simplest thing that could work.
class ReferenceEngine {
 public:
  struct Id {
    std::uint64_t seq = 0;
  };
  Time now() const { return Time::ps(now_); }
  template <typename F>
  Id after(Time d, F f) {
    const std::uint64_t s = next_++;
    events_.emplace(RefKey{now_ + d.picoseconds(), s}, std::function<void()>(std::move(f)));
    times_[s] = now_ + d.picoseconds();
    return Id{s};
  }
  bool cancel(Id id) {
    const auto it = times_.find(id.seq);
    if (it == times_.end()) return false;
    events_.erase(RefKey{it->second, id.seq});
    times_.erase(it);
    return true;
  }
  void run() {
    while (!events_.empty()) {
      auto node = events_.extract(events_.begin());
      now_ = node.key().first;
      times_.erase(node.key().second);
      node.mapped()();
    }
  }
  std::size_t pending() const { return events_.size(); }

 private:
  std::map<RefKey, std::function<void()>> events_;
  std::map<std::uint64_t, std::int64_t> times_;
  std::int64_t now_ = 0;
  std::uint64_t next_ = 1;
};

// A random model run on any engine: each event logs (time, label), schedules 0-2 successors at
// mixed time scales and sometimes cancels a random earlier id (possibly run, cancelled, or
// reused-slot stale). Randomness is drawn in execution order, so identical logs mean identical
// orders throughout.
template <typename E, typename Id>
std::vector<std::pair<std::int64_t, std::uint64_t>> random_model(std::uint64_t seed, int profile) {
  E e;
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::int64_t, std::uint64_t>> log;
  std::vector<Id> ids;
  std::uint64_t label = 0;
  std::uint64_t budget = 40'000;
  struct Ctx {
    E* e;
    std::mt19937_64* rng;
    std::vector<std::pair<std::int64_t, std::uint64_t>>* log;
    std::vector<Id>* ids;
    std::uint64_t* label;
    std::uint64_t* budget;
    int profile;
  } ctx{&e, &rng, &log, &ids, &label, &budget, profile};
  struct Fire {
    static void schedule(Ctx* c) {
      const std::uint64_t my = (*c->label)++;
      c->ids->push_back(
          c->e->after(Time::ps(mixed_delay(*c->rng, c->profile)), [c, my] { fire(c, my); }));
    }
    static void fire(Ctx* c, std::uint64_t my) {
      c->log->emplace_back(c->e->now().picoseconds(), my);
      if (*c->budget == 0) return;
      --*c->budget;
      const std::uint64_t r = (*c->rng)() % 100;
      if (r < 45) schedule(c);
      if (r < 90) schedule(c);
      if (r % 4 == 0 && !c->ids->empty()) c->e->cancel((*c->ids)[(*c->rng)() % c->ids->size()]);
    }
  };
  for (int i = 0; i < 2000; ++i)
    Fire::schedule(&ctx);
  e.run();
  CHECK(e.pending() == 0);
  return log;
}

}  // namespace

TEST_CASE("engine runs random models exactly like a reference ordering, cancels included") {
  for (int profile = 0; profile < 4; ++profile) {
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      INFO("profile " << profile << " seed " << seed);
      const auto got =
          random_model<Engine, EventId>(seed * 31 + static_cast<std::uint64_t>(profile), profile);
      const auto want = random_model<ReferenceEngine, ReferenceEngine::Id>(
          seed * 31 + static_cast<std::uint64_t>(profile), profile);
      REQUIRE(got.size() == want.size());
      CHECK(got == want);
    }
  }
}
