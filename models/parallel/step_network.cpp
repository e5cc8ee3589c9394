#include "models/parallel/step_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/parallel/mesh_plan.hpp"
#include "sim/net/cluster_layout.hpp"

namespace trainsim::models {

namespace col = sim::collectives;

namespace {

// nccl-tests' bus bytes per rank over the algorithm bytes (doc/PERFORMANCE.md).
double bus_factor(col::Op op, int ranks) {
  const double n = std::max(1, ranks);
  switch (op) {
    case col::Op::allreduce:
      return 2 * (n - 1) / n;
    case col::Op::allgather:
    case col::Op::reduce_scatter:
    case col::Op::alltoall:
      return (n - 1) / n;
    case col::Op::broadcast:
      return 1;
  }
  return 1;
}

}  // namespace

StepNetwork::StepNetwork(sim::Engine& engine, const Scenario& s, int devices)
    : s_(s), devices_(std::max(1, devices)), shared_(s.comm.contention) {
  // The ports of accelerator 0 of the cluster as built for every collective run.
  const sim::ClusterLayout layout(s.cluster);
  const sim::VertexId acc = layout.accelerator(0);
  // Node 0's links are the first links_per_node() ids: only they can touch accelerator 0.
  for (std::size_t l = 0; l < layout.links_per_node(); ++l) {
    const sim::LayoutLink ll = layout.link(static_cast<sim::LinkId>(l));
    if (ll.a != acc && ll.b != acc) continue;
    if (ll.role == sim::LinkRole::host) capacity_[0] += ll.bw_bytes_per_s;
    if (ll.role == sim::LinkRole::intra) capacity_[1] += ll.bw_bytes_per_s;
  }
  const int apn = std::max(1, s.cluster.accelerators_per_node);
  if (s.cluster.inter_link)
    capacity_[2] = s.cluster.inter_link->bw_bytes_per_s * s.cluster.nics_per_node / apn;
  // A port the cluster lacks (no intra links on a one-accelerator node, no NICs on one node)
  // carries nothing; give it the host link's rate so that the network stays well formed.
  for (double& c : capacity_)
    if (!(c > 0))
      c = s.cluster.host_link.bw_bytes_per_s > 0 ? s.cluster.host_link.bw_bytes_per_s : 1;

  // Device k: vertex 4k, its port ends 4k+1 (host), 4k+2 (intra), 4k+3 (nic); link 3k+p.
  for (int k = 0; k < devices_; ++k) {
    const sim::VertexId d = topology_.add_vertex({});
    for (int p = 0; p < 3; ++p) {
      const sim::VertexId end = topology_.add_vertex({});
      topology_.add_link(d, end, capacity_[static_cast<std::size_t>(p)], 0.0, sim::Duplex::full);
    }
  }
  net_ = std::make_unique<sim::FlowNetwork>(
      engine, topology_, sim::FlowNetwork::Options{sim::FlowNetwork::Sharing::equal});
  const auto link = [](int k, int p) { return static_cast<sim::LinkId>(3 * k + p); };
  for (int from = 0; from < devices_; ++from) {
    for (int dir = 0; dir < 3; ++dir) {
      const int to = (from + devices_ + dir - 1) % devices_;  // previous, same, next
      for (int p = 0; p < 3; ++p) {
        sim::Route r;
        r.hops = {{link(from, p), true}, {link(to, p), false}};
        routes_.push_back(std::move(r));
      }
    }
    for (int p = 0; p < 3; ++p) {
      sim::Route r;
      r.hops = {{link(from, p), false}};
      ingress_.push_back(std::move(r));
    }
  }
}

Port StepNetwork::group_port(int size, int stride) const {
  if (size > group_members_per_node(s_.cluster, size, stride)) return Port::nic;
  return s_.cluster.p2p ? Port::intra : Port::host;
}

Port StepNetwork::send_port(int stride) const {
  if (stride >= std::max(1, s_.cluster.accelerators_per_node)) return Port::nic;
  return s_.cluster.p2p ? Port::intra : Port::host;
}

const sim::Route& StepNetwork::route(int from, int to, Port p) const {
  // A transfer enters by the kind of port it left by (one kind of link joins two devices).
  int dir = 0;
  if (to == from) {
    dir = 1;
  } else if (to == (from + 1) % devices_) {
    dir = 2;
  } else if (to != (from + devices_ - 1) % devices_) {
    throw std::logic_error("StepNetwork: a send between stages that are not neighbours");
  }
  return routes_[static_cast<std::size_t>((from * 3 + dir) * 3 + static_cast<int>(p))];
}

sim::Transfer StepNetwork::collective(int k, Port port, col::Op op, int ranks, double bytes,
                                      double standalone_s) const {
  return exchange(k, port, bus_factor(op, ranks) * bytes, standalone_s);
}

sim::Transfer StepNetwork::exchange(int k, Port port, double bus, double standalone_s) const {
  // `bus`: the bytes each way through the port (the header's bytes_each_way).
  sim::Transfer t;
  t.standalone_s = standalone_s;
  if (!(bus > 0) || !(standalone_s > 0)) return t;  // nothing moves: it shares no link
  const double cap = capacity_bytes_per_s(port);
  t.route = &route(k, k, port);
  t.max_rate_bytes_per_s = cap;
  if (bus / cap < standalone_s) {
    // Latency, protocol and kernel time beyond the bytes' time at the port's rate.
    t.latency_s = standalone_s - bus / cap;
    t.bytes = bus;
  } else {
    // Faster than its bus bytes could cross this port: the links behind the port carry part of
    // them (NVLink inside the node under a multi-node ring, in-network reduction), and it keeps
    // the port busy for its whole duration.
    t.bytes = cap * standalone_s;
  }
  return t;
}

sim::Transfer StepNetwork::send(int from, int to, Port port, double bytes, double latency_s,
                                double bw_bytes_per_s) const {
  sim::Transfer t;
  t.standalone_s = latency_s + bytes / bw_bytes_per_s;
  if (!(bytes > 0)) return t;
  t.route = &route(from, to, port);
  t.latency_s = latency_s;
  t.bytes = bytes;
  t.max_rate_bytes_per_s = std::min(bw_bytes_per_s, capacity_bytes_per_s(port));
  return t;
}

sim::Transfer StepNetwork::copy_in(int k, double bytes, double standalone_s) const {
  sim::Transfer t;
  t.standalone_s = standalone_s;
  const double bw = s_.cluster.host_link.bw_bytes_per_s;
  if (!(bytes > 0) || !(bw > 0)) return t;
  t.route = &ingress_[static_cast<std::size_t>(k * 3 + static_cast<int>(Port::host))];
  t.latency_s = std::max(0.0, standalone_s - bytes / bw);
  t.bytes = bytes;
  t.max_rate_bytes_per_s = bw;
  return t;
}

}  // namespace trainsim::models
