#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "sim/core/engine.hpp"

using trainsim::sim::Engine;
using trainsim::sim::EventId;
using trainsim::sim::Time;

TEST_CASE("events run in time order and now() follows them") {
  Engine e;
  std::vector<std::int64_t> seen;
  for (int t : {50, 10, 40, 20, 30}) {
    e.at(Time::ns(t), [&e, &seen] { seen.push_back(e.now().picoseconds()); });
  }
  e.run();
  CHECK(seen == std::vector<std::int64_t>{10'000, 20'000, 30'000, 40'000, 50'000});
  CHECK(e.now() == Time::ns(50));
  CHECK(e.stats().events_executed == 5);
  CHECK(e.pending() == 0);
}

TEST_CASE("ties run in insertion (FIFO) order, including zero-delay events") {
  Engine e;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i)
    e.at(Time::us(1), [&order, i] { order.push_back(i); });
  e.at(Time::us(1), [&] {
    // Zero-delay events scheduled from inside a callback run after everything already pending
    // at the same time.
    e.after(Time::zero(), [&order] { order.push_back(1000); });
  });
  e.run();
  REQUIRE(order.size() == 101);
  for (int i = 0; i < 100; ++i)
    CHECK(order[static_cast<std::size_t>(i)] == i);
  CHECK(order.back() == 1000);
}

TEST_CASE("cancel removes a pending event in O(1) and is harmless afterwards") {
  Engine e;
  int ran = 0;
  EventId a = e.at(Time::ns(10), [&] { ran += 1; });
  EventId b = e.at(Time::ns(20), [&] { ran += 10; });
  CHECK(e.pending() == 2);
  CHECK(e.cancel(a));
  CHECK_FALSE(e.cancel(a));  // twice
  CHECK(e.pending() == 1);
  e.run();
  CHECK(ran == 10);
  CHECK_FALSE(e.cancel(b));  // already ran
  CHECK_FALSE(e.cancel(EventId{}));
  CHECK(e.stats().events_cancelled == 1);
}

TEST_CASE("a callback can cancel other events, and a cancelled id never hits a reused slot") {
  Engine e;
  std::vector<int> ran;
  EventId victim;
  e.at(Time::ns(1), [&] {
    ran.push_back(1);
    CHECK(e.cancel(victim));
    // The freed slot is reused by this new event; the stale queue key must not run it twice.
    e.at(Time::ns(2), [&] { ran.push_back(3); });
  });
  victim = e.at(Time::ns(2), [&] { ran.push_back(2); });
  e.run();
  CHECK(ran == std::vector<int>{1, 3});
}

TEST_CASE("a callback cancelling itself is a no-op") {
  Engine e;
  EventId self;
  bool cancelled = true;
  self = e.at(Time::ns(5), [&] { cancelled = e.cancel(self); });
  e.run();
  CHECK_FALSE(cancelled);
}

TEST_CASE("run_until stops at the limit and advances now()") {
  Engine e;
  int ran = 0;
  e.at(Time::ms(1), [&] { ++ran; });
  e.at(Time::ms(2), [&] { ++ran; });
  e.at(Time::ms(3), [&] { ++ran; });
  e.run_until(Time::ms(2));  // events at the limit run
  CHECK(ran == 2);
  CHECK(e.now() == Time::ms(2));
  e.run_until(Time::ms(10));
  CHECK(ran == 3);
  CHECK(e.now() == Time::ms(10));
}

TEST_CASE("stop() returns from run after the current event") {
  Engine e;
  int ran = 0;
  for (int i = 1; i <= 5; ++i) {
    e.at(Time::ns(i), [&, i] {
      ++ran;
      if (i == 2) e.stop();
    });
  }
  e.run();
  CHECK(ran == 2);
  CHECK(e.now() == Time::ns(2));
  e.run();  // resumes
  CHECK(ran == 5);
}

TEST_CASE("scheduling in the past is a programming error") {
  Engine e;
  e.at(Time::ns(10), [] {});
  e.run();
  CHECK_THROWS_AS(e.at(Time::ns(5), [] {}), std::logic_error);
  CHECK_THROWS_AS(e.after(Time::ps(-1), [] {}), std::logic_error);
}

namespace {
// Hold model with cancellations: returns the sequence of (time, id) executions.
std::vector<std::pair<std::int64_t, int>> hold_trace(std::uint64_t seed) {
  Engine e;
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::int64_t, int>> trace;
  std::vector<EventId> ids;
  int next_id = 0;
  struct Ctx {
    Engine* e;
    std::mt19937_64* rng;
    std::vector<std::pair<std::int64_t, int>>* trace;
    int* next_id;
  } ctx{&e, &rng, &trace, &next_id};
  std::function<void(int)> schedule = [&](int id) {
    const auto delay = Time::ps(static_cast<std::int64_t>(rng() % 5000));
    ids.push_back(e.after(delay, [&ctx, &schedule, id] {
      ctx.trace->push_back({ctx.e->now().picoseconds(), id});
      if (ctx.trace->size() < 20000) schedule((*ctx.next_id)++);
    }));
  };
  for (int i = 0; i < 200; ++i)
    schedule(next_id++);
  for (std::size_t i = 0; i < ids.size(); i += 7)
    e.cancel(ids[i]);
  e.run();
  return trace;
}
}  // namespace

TEST_CASE("runs are bit-identical for the same inputs") {
  const auto a = hold_trace(42);
  const auto b = hold_trace(42);
  CHECK(a.size() >= 20000);
  CHECK(a == b);
}

TEST_CASE("many engines live independently in one process") {
  std::vector<std::unique_ptr<Engine>> engines;
  std::vector<int> counts(8, 0);
  for (int k = 0; k < 8; ++k) {
    engines.push_back(std::make_unique<Engine>());
    for (int i = 0; i <= k; ++i)
      engines.back()->at(Time::ns(i), [&counts, k] { ++counts[static_cast<std::size_t>(k)]; });
  }
  // Interleave: run engine k only up to a point, then the others.
  for (auto& e : engines)
    e->run_until(Time::ns(2));
  for (auto& e : engines)
    e->run();
  for (int k = 0; k < 8; ++k) {
    CHECK(counts[static_cast<std::size_t>(k)] == k + 1);
    CHECK(engines[static_cast<std::size_t>(k)]->stats().events_executed ==
          static_cast<std::uint64_t>(k + 1));
  }
}

TEST_CASE("a large burst of cancellations compacts the queue without losing live events") {
  Engine e;
  std::vector<EventId> ids;
  int ran = 0;
  for (int i = 0; i < 10000; ++i)
    ids.push_back(e.at(Time::ns(i + 1), [&] { ++ran; }));
  for (int i = 0; i < 10000; ++i) {
    if (i % 10 != 0) e.cancel(ids[static_cast<std::size_t>(i)]);
  }
  CHECK(e.pending() == 1000);
  e.run();
  CHECK(ran == 1000);
}
