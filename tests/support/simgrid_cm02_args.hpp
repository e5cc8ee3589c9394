#pragma once
// Command-line configuration that makes SimGrid's network the model trainsim implements: CM02
// (latency-weighted max-min), no cross-traffic, no TCP-gamma window cap and no latency or
// bandwidth correction factors. The comparison tests and bench_net all use it, so they compare
// against the same reference.

#include <string>
#include <vector>

namespace trainsim::testing {

inline std::vector<std::string> simgrid_cm02_args(std::string program) {
  return {std::move(program),
          "--cfg=network/model:CM02",
          "--cfg=network/crosstraffic:0",
          "--cfg=network/TCP-gamma:0",
          "--cfg=network/latency-factor:1",
          "--cfg=network/bandwidth-factor:1",
          "--cfg=network/weight-S:0",
          "--log=root.threshold:critical"};
}

}  // namespace trainsim::testing
