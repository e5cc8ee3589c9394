#include "sim/collectives/protocol.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace trainsim::sim::collectives {

namespace {

constexpr double kUs = 1e-6;
constexpr double kGBps = 1e9;

// Indexed [family][protocol] (LL, LL128, Simple) and [transport][family][protocol] (NVLink, PCIe,
// network), in microseconds.
using Row = std::array<double, 3>;
using Table = std::array<Row, 4>;  // ring, tree, nvls, collnet

// NVIDIA/nccl@5067397 src/graph/tuning.cc, ncclTunerConstantsDefaults.baseLatencies (Tree, Ring,
// NVLS, CollNet Direct).
constexpr Table kNcclBase{{{6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}}};
// Same file, hwLatencies: per-step latency of each transport class.
constexpr std::array<Table, 3> kNcclHw{{
    {{{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}, {0, 0, 25}, {0, 0, 3.7}}},  // NVLINK
    {{{1.0, 2.5, 5.7}, {1.0, 1.9, 4.0}, {0, 0, 0}, {0, 0, 3.7}}},    // PCI
    {{{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}, {0, 0, 18}, {0, 0, 31}}},  // NET
}};
// ROCm/rccl@0cbce2a src/graph/tuning.cc: baseLat, and tuning_model_5's hwLat, the model RCCL
// selects for 8 x MI300X with 7 xGMI links per GPU (src/graph/rome_models.cc rome_model_79 and
// rome_model_84, "tuning=5"). LL128 is off in that model (0.0), RCCL has no NVLS.
constexpr Table kRcclBase{{{12.0, 12.0, 17.0}, {12.0, 12.0, 17.0}, {0, 0, 0}, {12.0, 12.0, 17.0}}};
constexpr std::array<Table, 3> kRcclHw{{
    {{{0.8, 0.0, 2.1}, {0.9, 0.0, 2.3}, {0, 0, 0}, {0, 0, 0.9}}},       // NVLINK (xGMI)
    {{{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}, {0, 0, 0}, {0, 0, 5.7}}},       // PCI
    {{{9.5, 0.0, 320.0}, {10.5, 0.0, 25.0}, {0, 0, 0}, {0, 0, 10.5}}},  // NET
}};

// NCCL's per-channel (and LL total) bandwidth caps, GB/s, [generation][nodes 1 | 2 | >2]
// (tuning.cc llMaxBws, perChMaxRingLL128Bws, perChMaxTreeBws, perChMaxTreeLL128Bws). Multi-node
// LL rows are those of Intel hosts.
int gen_index(GpuGeneration g) {
  switch (g) {
    case GpuGeneration::volta:
      return 0;
    case GpuGeneration::ampere:
      return 1;
    case GpuGeneration::hopper:
      return 2;
    case GpuGeneration::blackwell:
      return 3;
    case GpuGeneration::cdna3:
      return -1;
  }
  return -1;
}
constexpr std::array<double, 4> kLlMaxBwOneNode{39.0, 87.7, 141.0, 2 * 141.0};
constexpr std::array<double, 3> kLlMaxBwIntel{39.0, 39.0, 20.4};
constexpr std::array<Row, 4> kRingLl128{
    {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}}};
constexpr std::array<Row, 4> kTreeSimple{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
constexpr std::array<Row, 4> kTreeLl128{
    {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};

// NCCL's network proxy post overhead (tuning.cc getNetOverhead: 1 us on Intel hosts, x3 for
// Simple): on multi-node rings no step is faster.
constexpr double kNetOverheadUs = 1.0;

int family_index(AlgoFamily f) {
  switch (f) {
    case AlgoFamily::ring:
      return 0;
    case AlgoFamily::tree:
      return 1;
    case AlgoFamily::nvls:
      return 2;
    case AlgoFamily::collnet:
      return 3;
  }
  return 0;
}

int proto_index(Protocol p) {
  return p == Protocol::ll ? 0 : p == Protocol::ll128 ? 1 : 2;
}

bool nvlink_intra(const ClusterSpec& c) {
  if (!c.p2p || c.accelerators_per_node < 2) return true;  // no intra hop to disqualify LL128
  const auto& t = c.collectives.intra_link.transport;
  return !t || *t == LinkTransport::nvlink;
}

}  // namespace

const char* protocol_name(Protocol p) {
  switch (p) {
    case Protocol::ll:
      return "LL";
    case Protocol::ll128:
      return "LL128";
    case Protocol::simple:
      return "Simple";
  }
  return "?";
}

bool protocol_enabled(const ClusterSpec& c, AlgoFamily family, Protocol p) {
  const CollectiveFabricSpec& f = c.collectives;
  if (f.library == CollectiveLibrary::none) return p == Protocol::simple;
  if (!f.protocols[static_cast<std::size_t>(proto_index(p))]) return false;
  if ((family == AlgoFamily::nvls || family == AlgoFamily::collnet) && p != Protocol::simple)
    return false;
  if (family == AlgoFamily::nvls && (f.library != CollectiveLibrary::nccl || !f.nvls)) return false;
  if (family == AlgoFamily::collnet && !f.sharp) return false;
  if (p == Protocol::ll128) {
    // NCCL enables LL128 only over NVLink (tuning.cc: typeIntra <= PATH_NVB); RCCL's MI300
    // tuning has it off.
    if (f.library == CollectiveLibrary::rccl) return false;
    return nvlink_intra(c);
  }
  return true;
}

ProtocolParams protocol_params(const ClusterSpec& c, AlgoFamily family, Protocol p, int nodes,
                               int channels) {
  const CollectiveFabricSpec& f = c.collectives;
  if (f.library == CollectiveLibrary::none)
    throw std::invalid_argument("protocol_params: the cluster has no collective library");
  const bool rccl = f.library == CollectiveLibrary::rccl;
  const int fi = family_index(family), pi = proto_index(p);
  ProtocolParams out;
  out.modeled = true;
  out.protocol = p;
  out.base_latency_s =
      f.base_latency_s ? *f.base_latency_s : (rccl ? kRcclBase : kNcclBase)[fi][pi] * kUs;
  const auto& hw = rccl ? kRcclHw : kNcclHw;
  for (std::size_t t = 0; t < 3; ++t) {
    out.step_latency_s[t] = hw[t][static_cast<std::size_t>(fi)][static_cast<std::size_t>(pi)] * kUs;
    const auto& calibrated = f.step_latency_s[t][static_cast<std::size_t>(pi)];
    if (calibrated && (family == AlgoFamily::ring || family == AlgoFamily::tree))
      out.step_latency_s[t] = *calibrated;
  }
  if (nodes > 1 && !rccl && family == AlgoFamily::ring) {
    const double floor = kNetOverheadUs * (p == Protocol::simple ? 3 : 1) * kUs;
    for (int t = 0; t < 2; ++t)
      out.step_latency_s[static_cast<std::size_t>(t)] =
          std::max(out.step_latency_s[static_cast<std::size_t>(t)], floor);
  }
  // LL: 4 data bytes per 8-byte store (data + flag); LL128: 120 of 128 bytes per line
  // (NVIDIA/nccl src/device/prims_ll.h, prims_ll128.h; tuning.cc's 0.5 and 0.92 factors).
  out.wire_efficiency = p == Protocol::ll ? 0.5 : p == Protocol::ll128 ? 120.0 / 128.0 : 1.0;
  const int g = gen_index(f.generation);
  const int n = nodes <= 1 ? 0 : nodes == 2 ? 1 : 2;
  const int ch = std::max(1, channels);
  if (!rccl && g >= 0) {
    const double ll_total = nodes <= 1 ? kLlMaxBwOneNode[static_cast<std::size_t>(g)]
                                       : kLlMaxBwIntel[static_cast<std::size_t>(n)];
    if (family == AlgoFamily::ring) {
      if (p == Protocol::ll) out.channel_cap_bytes_per_s = ll_total * kGBps / ch;
      if (p == Protocol::ll128)
        out.channel_cap_bytes_per_s = kRingLl128[static_cast<std::size_t>(g)][n] * kGBps;
    } else if (family == AlgoFamily::tree) {
      if (p == Protocol::ll) out.channel_cap_bytes_per_s = ll_total * kGBps / ch;
      if (p == Protocol::ll128)
        out.channel_cap_bytes_per_s = kTreeLl128[static_cast<std::size_t>(g)][n] * kGBps;
      if (p == Protocol::simple)
        out.channel_cap_bytes_per_s = kTreeSimple[static_cast<std::size_t>(g)][n] * kGBps;
    }
  }
  return out;
}

}  // namespace trainsim::sim::collectives
