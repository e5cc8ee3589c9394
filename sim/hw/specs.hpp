#pragma once
// Plain, validated descriptions of hardware, as loaded from hw_profiles/ (see
// sim/config/profile_loader.hpp). Simulated components take these structs; they never read
// files. All quantities are SI base units carried in the member's name.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainsim::sim {

enum class Dtype { fp32, tf32, fp16, bf16, int8 };
inline constexpr std::array<Dtype, 5> kAllDtypes{Dtype::fp32, Dtype::tf32, Dtype::fp16, Dtype::bf16,
                                                 Dtype::int8};
const char* dtype_name(Dtype d);
// Bytes one element of this dtype occupies in memory (tf32 is stored as fp32).
int dtype_bytes(Dtype d);

struct AcceleratorSpec {
  std::string name;
  std::string description;
  // Peak dense FLOP/s per dtype; nullopt where the device has no such path.
  std::array<std::optional<double>, 5> peak_flops_per_s{};
  double memory_bw_bytes_per_s = 0;
  double memory_capacity_bytes = 0;
  double kernel_launch_overhead_s = 0;
  double compute_efficiency = 1.0;  // achieved fraction of peak FLOP/s on large kernels
  double memory_efficiency = 1.0;   // achieved fraction of peak memory bandwidth
  std::optional<double> peak(Dtype d) const { return peak_flops_per_s[static_cast<int>(d)]; }
};

struct HostSpec {
  std::string name;
  std::string description;
  int cpu_cores = 0;
  double memory_bw_bytes_per_s = 0;
  double memory_capacity_bytes = 0;
  double storage_read_bw_bytes_per_s = 0;
};

enum class Duplex { full, half };

// --- collectives (issue 14): how NCCL/RCCL see a link and a cluster ---------------------------
// The hardware class NCCL's tuning model keys its per-step protocol latencies on
// (NVIDIA/nccl src/graph/tuning.cc hwLatencies: NVLINK, PCI, NET).
enum class LinkTransport { nvlink, pcie, network };

struct LinkSpec {
  std::string name;
  std::string description;
  double bw_bytes_per_s = 0;  // per direction
  double latency_s = 0;
  Duplex duplex = Duplex::full;
};

// What collectives see of a link profile ("transport" and "efficiency" keys): its transport class
// (unset: by the link's role in the cluster) and the achieved fraction of its bandwidth for
// GPU-driven bulk copies (packet and flow-control overhead), which inflates a collective's wire
// bytes.
struct LinkCollectiveTraits {
  std::optional<LinkTransport> transport;
  double efficiency = 1.0;
};

// none: plain message schedules on the links (their latencies, no protocol overheads).
enum class CollectiveLibrary { none, nccl, rccl };
// GPU generation, which selects NCCL's per-channel protocol bandwidth caps (tuning.cc).
enum class GpuGeneration { volta, ampere, hopper, blackwell, cdna3 };

// How the cluster's collective library runs (profile "collectives" block).
struct CollectiveFabricSpec {
  CollectiveLibrary library = CollectiveLibrary::none;
  GpuGeneration generation = GpuGeneration::ampere;
  int channels = 0;                      // parallel rings/trees; 0: one per NIC rail (at least 2)
  bool nvls = false;                     // NVLink SHARP: the NVSwitch reduces (H100 NVSwitch gen 3)
  double nvls_efficiency = 1.0;          // achieved fraction of the NVLink bandwidth with NVLS
  bool sharp = false;                    // IB SHARP: the inter-node switches reduce (CollNet)
  std::optional<double> base_latency_s;  // per-collective fixed cost; unset: the library's table
  // Per-step latency overrides [transport][protocol] (nvlink, pcie, network x LL, LL128, Simple)
  // for ring and tree steps; unset: the library's table.
  std::array<std::array<std::optional<double>, 3>, 3> step_latency_s{};
  // Protocols the library may use here (LL, LL128, Simple), as NCCL_PROTO restricts them.
  std::array<bool, 3> protocols{true, true, true};
  // The traits of the node's intra link, host link and inter-node link profiles.
  LinkCollectiveTraits intra_link, host_link, inter_link;
};
// ------------------------------------------------------------------------------------------

// How the accelerators of one node are wired together.
enum class IntraTopology {
  switched,  // each accelerator has one link to a non-blocking switch (NVSwitch, PCIe switch)
  ring,      // accelerators in a ring (e.g. IPU-Links, NVLink rings)
  fully_connected,  // one link between every pair (e.g. MI300X Infinity Fabric)
  torus2d,          // dims give the shape
};
// How nodes are wired together.
enum class InterTopology {
  none,      // one node
  star,      // one non-blocking switch
  fat_tree,  // two-level leaf-spine, non-blocking unless oversubscribed
  ring,
  torus2d,
  torus3d,
};

struct ClusterSpec {
  std::string name;
  std::string description;
  int nodes = 1;
  HostSpec host;
  AcceleratorSpec accelerator;
  int accelerators_per_node = 1;
  IntraTopology intra_topology = IntraTopology::switched;
  LinkSpec intra_link;
  std::vector<int> intra_dims;  // torus2d shape
  LinkSpec host_link;           // accelerator <-> host (PCIe)
  bool p2p = true;              // false: accelerator-to-accelerator traffic crosses the host
  InterTopology inter_topology = InterTopology::none;
  std::optional<LinkSpec> inter_link;
  int nics_per_node = 1;
  std::vector<int> inter_dims;       // torus shapes
  int leaf_switch_ports = 0;         // fat_tree: nodes per leaf switch
  double oversubscription = 1.0;     // fat_tree: leaf downlink / uplink bandwidth ratio
  CollectiveFabricSpec collectives;  // issue 14: the collective library on this cluster
  int total_accelerators() const { return nodes * accelerators_per_node; }
};

}  // namespace trainsim::sim
