#include "bench/ns3/ns3_hold.hpp"

#include <chrono>

#include <ns3/core-module.h>

namespace trainsim::bench {

namespace {
struct Ns3Hold {
  const std::int64_t* delays;
  std::size_t mask;
  std::size_t next;
  std::uint64_t remaining;
  std::uint64_t executed;
  void fire() {
    ++executed;
    if (remaining == 0) return;
    --remaining;
    ns3::Simulator::Schedule(ns3::PicoSeconds(delays[next++ & mask]), &Ns3Hold::fire, this);
  }
};
}  // namespace

double run_ns3_hold(const std::vector<std::int64_t>& delays_ps, std::uint64_t pending,
                    std::uint64_t events, const std::string& scheduler, std::uint64_t& executed,
                    double& sim_s) {
  // ns-3 allows setting the resolution once per process, before any Time is made.
  static const bool resolution_set = (ns3::Time::SetResolution(ns3::Time::PS), true);
  (void)resolution_set;
  ns3::ObjectFactory factory;
  factory.SetTypeId(scheduler);
  ns3::Simulator::SetScheduler(factory);
  Ns3Hold s{delays_ps.data(), delays_ps.size() - 1, 0, events, 0};
  for (std::uint64_t i = 0; i < pending; ++i) {
    ns3::Simulator::Schedule(ns3::PicoSeconds(delays_ps[s.next++ & s.mask]), &Ns3Hold::fire, &s);
  }
  const auto t0 = std::chrono::steady_clock::now();
  ns3::Simulator::Run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sim_s = ns3::Simulator::Now().GetSeconds();
  ns3::Simulator::Destroy();
  executed = s.executed;
  return wall;
}

}  // namespace trainsim::bench
