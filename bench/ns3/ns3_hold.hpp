#pragma once
// The hold model on ns-3's simulator. Compiled as C++17 in its own library: ns-3.37's headers
// do not compile as C++20.

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::bench {

// Runs the hold model with `scheduler` (an ns-3 TypeId such as "ns3::HeapScheduler"); returns
// the wall seconds of Simulator::Run().
double run_ns3_hold(const std::vector<std::int64_t>& delays_ps, std::uint64_t pending,
                    std::uint64_t events, const std::string& scheduler, std::uint64_t& executed,
                    double& sim_s);

}  // namespace trainsim::bench
