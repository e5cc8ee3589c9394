// Hold-model benchmark of the event engine (ns-3 utils/bench-scheduler.cc's classic test):
// N events pending; each executed event schedules one successor at now + Exp(mean 100 ns).
// The same workload (identical delay sequence) runs on ns-3's simulator with each of its
// schedulers, and the ratio against the fastest is printed.
//
//   bench_engine [--pending N] [--events M] [--seed S] [--no-ns3]

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "sim/core/engine.hpp"

#ifdef TRAINSIM_HAVE_NS3
#include "bench/ns3/ns3_hold.hpp"
#endif

namespace {

struct Options {
  std::uint64_t pending = 100'000;
  std::uint64_t events = 5'000'000;
  std::uint64_t seed = 1;
  bool ns3 = true;
};

// A fixed table of exponential delays (picoseconds), shared by both simulators so they do the
// same work; its size is a power of two so indexing is a mask.
std::vector<std::int64_t> make_delays(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> exp(1.0 / 100'000.0);  // mean 100 ns in ps
  std::vector<std::int64_t> d(1u << 20);
  for (auto& x : d)
    x = static_cast<std::int64_t>(exp(rng));
  return d;
}

struct HoldState {
  trainsim::sim::Engine* engine;
  const std::int64_t* delays;
  std::size_t mask;
  std::size_t next = 0;
  std::uint64_t remaining;
};

void hold(HoldState* s) {
  if (s->remaining == 0) return;
  --s->remaining;
  const std::int64_t d = s->delays[s->next++ & s->mask];
  s->engine->after(trainsim::sim::Time::ps(d), [s] { hold(s); });
}

double run_trainsim(const Options& o, const std::vector<std::int64_t>& delays,
                    std::uint64_t& executed, double& sim_s) {
  trainsim::sim::Engine engine;
  HoldState s{&engine, delays.data(), delays.size() - 1, 0, o.events};
  for (std::uint64_t i = 0; i < o.pending; ++i) {
    const std::int64_t d = delays[s.next++ & s.mask];
    engine.at(trainsim::sim::Time::ps(d), [&s] { hold(&s); });
  }
  const auto t0 = std::chrono::steady_clock::now();
  engine.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  executed = engine.stats().events_executed;
  sim_s = engine.now().seconds();
  return wall;
}

std::uint64_t parse_count(const char* flag, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= 1) || v > 1e12) {
    std::cerr << "bench_engine: " << flag << " needs a positive count, got '" << text << "'\n";
    std::exit(2);
  }
  return static_cast<std::uint64_t>(v);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-ns3") {
      o.ns3 = false;
    } else if ((a == "--pending" || a == "--events" || a == "--seed") && i + 1 < argc) {
      const std::uint64_t v = parse_count(argv[i], argv[i + 1]);
      ++i;
      (a == "--pending" ? o.pending : a == "--events" ? o.events : o.seed) = v;
    } else {
      std::cerr << "usage: bench_engine [--pending N] [--events M] [--seed S] [--no-ns3]\n";
      return 2;
    }
  }
  const auto delays = make_delays(o.seed);
  std::uint64_t executed = 0;
  double sim_s = 0;
  const double wall = run_trainsim(o, delays, executed, sim_s);
  const double rate = static_cast<double>(executed) / wall;
  std::cout << "trainsim hold model: pending=" << o.pending << " events=" << executed
            << " seed=" << o.seed << " sim_s=" << sim_s << " wall_s=" << wall
            << " events_per_s=" << rate << "\n";
#ifdef TRAINSIM_HAVE_NS3
  if (o.ns3) {
    double best = 0;
    std::string best_name;
    for (const char* sched : {"ns3::MapScheduler", "ns3::HeapScheduler", "ns3::CalendarScheduler",
                              "ns3::PriorityQueueScheduler"}) {
      std::uint64_t n3_exec = 0;
      double n3_sim = 0;
      const double w =
          trainsim::bench::run_ns3_hold(delays, o.pending, o.events, sched, n3_exec, n3_sim);
      const double r = static_cast<double>(n3_exec) / w;
      std::cout << "ns-3 hold model (" << sched << "): pending=" << o.pending
                << " events=" << n3_exec << " sim_s=" << n3_sim << " wall_s=" << w
                << " events_per_s=" << r << "\n";
      if (r > best) {
        best = r;
        best_name = sched;
      }
    }
    std::cout << "ratio trainsim/ns-3 (fastest: " << best_name << ") = " << rate / best << "\n";
  }
#else
  (void)o.ns3;
  std::cout << "ns-3 not available in this build: no ratio\n";
#endif
  return 0;
}
