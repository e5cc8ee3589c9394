#pragma once
// The network all of a training step's traffic shares, on the step's own engine: data-parallel
// gradient collectives (buckets, reduce-scatters, ZeRO's parameter all-gathers, parameter-server
// exchanges), tensor-parallel collectives, pipeline sends between stages, and host-to-device
// input copies.
//
// One data-parallel replica of the pipeline is simulated (its tensor-parallel ranks and the
// other replicas do the same at the same time), so the network is that replica's devices, one
// per stage, each with its three ports as full-duplex links (SimGrid's fluid resources):
//   host  - the accelerator's host link (PCIe): input copies, and every message without
//           peer-to-peer support (staged through host memory);
//   intra - its intra-node links (NVLink, xGMI) summed;
//   nic   - its share of the node's NICs (every rank of the node talks across the boundary at
//           once, as group_view and stage_link assume).
// A transfer crosses the egress port of its sender and the ingress port of its receiver, and
// takes a max-min fair share of each while it moves its bytes. A collective's peers are other
// replicas' devices doing the same, so it loads its own device's port in both directions.
//
// A transfer alone takes exactly its standalone cost (sim/collectives' flow-level run of the
// group, or the route's latency plus bytes over the bottleneck for a send): a collective pays
// what its standalone run spends beyond moving its bus bytes at the port's rate as latency, then
// moves them at that rate; one faster than that (a multi-node ring whose NVLink legs carry most
// of its bus bytes, in-network reduction) keeps the port busy for its whole duration. Bus bytes are
// nccl-tests' definition (NVIDIA/nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n for
// allreduce, (n-1)/n for all-gather and reduce-scatter, 1 for broadcast): what each rank sends and
// receives over its bottleneck. Not modelled: the fabric beyond each device's NIC share (fat trees
// are full bisection; oversubscription is in the collectives' standalone runs), tensor-parallel
// collectives (items of the compute stream, priced on the tensor group alone: they stay inside a
// node, where only pipeline sends between stages of the same node could meet them).

#include <array>
#include <memory>
#include <vector>

#include "models/scenario.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/engine.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/net/topology.hpp"
#include "sim/net/transfer_stream.hpp"

namespace trainsim::models {

enum class Port : int { host = 0, intra = 1, nic = 2 };

class StepNetwork {
 public:
  // `devices`: the simulated replica's devices (one per pipeline stage).
  StepNetwork(sim::Engine& engine, const Scenario& s, int devices);
  StepNetwork(const StepNetwork&) = delete;
  StepNetwork& operator=(const StepNetwork&) = delete;

  // The network, or null when the scenario turns contention off (every transfer then takes its
  // standalone time).
  sim::FlowNetwork* network() { return shared_ ? net_.get() : nullptr; }

  // Port capacities of one device, bytes/s per direction.
  double capacity_bytes_per_s(Port p) const { return capacity_[static_cast<std::size_t>(p)]; }
  // The port a collective of `size` ranks `stride` ranks apart crosses at its bottleneck.
  Port group_port(int size, int stride) const;
  // The ports a send from a rank to one `stride` ranks away leaves and enters by.
  Port send_port(int stride) const;

  // A collective of device k's group that takes standalone_s alone; it moves nccl-tests' bus
  // bytes of `op` over `ranks` each way through the port.
  sim::Transfer collective(int k, Port port, sim::collectives::Op op, int ranks, double bytes,
                           double standalone_s) const;
  // The same with the bytes each way given: a parameter-server worker pushes its gradients and
  // pulls its parameters, `bytes` out and `bytes` in whatever the worker count.
  sim::Transfer exchange(int k, Port port, double bytes_each_way, double standalone_s) const;
  // A send from device `from` to device `to` over `port`: latency, then bytes at most at
  // bw_bytes_per_s (the route's bottleneck alone).
  sim::Transfer send(int from, int to, Port port, double bytes, double latency_s,
                     double bw_bytes_per_s) const;
  // An input batch's copy from the host into device k over its host link, standalone_s alone
  // (models/input_pipeline.hpp h2d_batch_s).
  sim::Transfer copy_in(int k, double bytes, double standalone_s) const;

 private:
  const sim::Route& route(int from, int to, Port p) const;

  const Scenario& s_;
  int devices_ = 1;
  bool shared_ = false;
  std::array<double, 3> capacity_{};
  sim::Topology topology_;
  std::unique_ptr<sim::FlowNetwork> net_;
  // Per (from, to, port): egress of `from`, ingress of `to`; and ingress-only routes for copies.
  std::vector<sim::Route> routes_;
  std::vector<sim::Route> ingress_;
};

}  // namespace trainsim::models
