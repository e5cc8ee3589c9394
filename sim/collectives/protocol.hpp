#pragma once
// How NCCL and RCCL move a collective's bytes: three protocols with different per-step latency,
// wire efficiency and per-channel throughput, chosen by message size.
//
// - LL: 8-byte stores of 4 data bytes + a 4-byte flag, polled by the receiver: the lowest step
//   latency, half the wire bandwidth.
// - LL128: 128-byte lines carrying 120 data bytes and a flag: low latency, 120/128 of the wire
//   bandwidth, NVLink only (and Hopper's network paths).
// - Simple: bulk copies synchronised by memory fences: the full bandwidth, the highest latency.
//
// A collective pays the library's base latency once (kernel start-up and completion, measured
// with the launch) and, per step, the protocol's step latency of the step's transport class
// (NVLink, PCIe or network: NVIDIA's per-hop measurements, wire included) or the route's own
// latency where that is larger (slow or long routes). The numbers are the libraries' own tuning
// tables (cited in protocol.cpp).

#include <array>
#include <string_view>

#include "sim/hw/specs.hpp"

namespace trainsim::sim::collectives {

enum class Protocol { ll, ll128, simple };
inline constexpr std::array<Protocol, 3> kAllProtocols{Protocol::ll, Protocol::ll128,
                                                       Protocol::simple};
const char* protocol_name(Protocol p);

// NCCL's algorithm families in its tuning tables.
enum class AlgoFamily { ring, tree, nvls, collnet };

// The protocol parameters a run uses; `modeled == false` is a plain message schedule (links'
// latencies, full wire efficiency, no caps).
struct ProtocolParams {
  bool modeled = false;
  Protocol protocol = Protocol::simple;
  double base_latency_s = 0;
  std::array<double, 3> step_latency_s{};  // by LinkTransport (nvlink, pcie, network)
  double wire_efficiency = 1;              // payload bytes / wire bytes
  double channel_cap_bytes_per_s = 0;      // per channel; 0: none
};

// The library's parameters for `family` and `protocol` on `cluster` with `nodes` nodes in the
// collective and `channels` channels. Throws std::invalid_argument for a cluster without a
// collective library (library none).
ProtocolParams protocol_params(const ClusterSpec& cluster, AlgoFamily family, Protocol protocol,
                               int nodes, int channels);
// Whether the library runs `protocol` for `family` on this cluster (LL128 needs NVLink; RCCL's
// MI300 tuning has no LL128; NVLS and CollNet are Simple only).
bool protocol_enabled(const ClusterSpec& cluster, AlgoFamily family, Protocol protocol);

}  // namespace trainsim::sim::collectives
