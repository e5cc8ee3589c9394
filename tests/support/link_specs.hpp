#pragma once
// A link of the given bandwidth and latency, as the network tests build them by hand.
#include "sim/hw/specs.hpp"

namespace trainsim::test {

inline sim::LinkSpec link_spec(double bw_bytes_per_s, double latency_s,
                               sim::Duplex duplex = sim::Duplex::full) {
  sim::LinkSpec s;
  s.bw_bytes_per_s = bw_bytes_per_s;
  s.latency_s = latency_s;
  s.duplex = duplex;
  return s;
}

}  // namespace trainsim::test
