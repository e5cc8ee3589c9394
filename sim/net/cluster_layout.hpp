#pragma once
// The network of a cluster (ClusterSpec) described arithmetically: vertex ids, link ids, link
// properties and routes are computed from the spec and a small per-node template, never stored
// per node, so a 65,536-accelerator cluster costs nothing to set up. build_cluster_topology
// materializes exactly these vertices and links (same ids, same order) for the message-level
// runs, and every collective run, message-level or phase-aggregated, uses the routes computed
// here, so the two see the same links.
//
// Layout (see cluster_topology.hpp for the wiring): node n owns vertices
// [n V, (n + 1) V): its host, its accelerators, its intra-node switch (switched intra only) and
// its NICs, and links [n L, (n + 1) L): accelerator-host, intra-node, NIC attachment. The
// inter-node fabric follows, rail by rail (a star switch, or a fat tree's spine and leaves, or
// nothing for rings and tori, whose links join the NICs directly).
//
// Routes are shortest paths built structurally: inside a node, a shortest path over the node's
// own links (fewest hops, then lowest latency, then lowest vertex id, as Router); between nodes,
// the source crosses its node to the accelerator whose NIC is on the destination's rail (NCCL's
// PXN), then the rail's fabric (star: one switch; fat tree: leaf, spine when the leaves differ,
// leaf; ring and torus: dimension-order, the shorter way round, ties forward), then the
// destination NIC's link to the destination.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/hw/specs.hpp"
#include "sim/net/routing.hpp"
#include "sim/net/topology.hpp"

namespace trainsim::sim {

// What a link is in the cluster; the collectives take their transport class from it.
enum class LinkRole : std::uint8_t { host, intra, nic, fabric };

struct LayoutLink {
  VertexId a = 0;  // added from a: a -> b is the forward direction
  VertexId b = 0;
  double bw_bytes_per_s = 0;
  double latency_s = 0;
  Duplex duplex = Duplex::full;
  LinkRole role = LinkRole::host;
  const LinkSpec* spec = nullptr;  // the profile link (a fat tree's uplink scales its bandwidth)
};

class ClusterLayout {
 public:
  // Throws std::invalid_argument for an inconsistent spec (as build_cluster_topology).
  explicit ClusterLayout(const ClusterSpec& spec);
  ClusterLayout(const ClusterLayout&) = delete;
  ClusterLayout& operator=(const ClusterLayout&) = delete;

  const ClusterSpec& spec() const { return spec_; }
  int nodes() const { return spec_.nodes; }
  int accelerators_per_node() const { return apn_; }
  int nics_per_node() const { return nics_; }
  std::size_t num_vertices() const;
  std::size_t num_links() const;
  // Links are numbered node by node: node n's are [n * links_per_node(), (n + 1) * ...), then
  // the fabric's.
  std::size_t links_per_node() const { return links_per_node_; }

  VertexId accelerator(int rank) const;
  VertexId host(int node) const;
  VertexId nic(int node, int k) const;
  // The node's intra-node switch (NVSwitch); only for switched p2p nodes of several accelerators.
  bool has_node_switch() const { return has_switch_; }
  VertexId node_switch(int node) const;
  // The top of rail k's fabric (star switch, fat-tree spine, or its single leaf); none for rings
  // and tori. In-network reductions (SHARP) happen there.
  bool has_rail_root() const;
  VertexId rail_root(int k) const;
  int node_of_vertex(VertexId v) const;  // -1 for fabric vertices

  VertexProps vertex(VertexId v) const;
  LayoutLink link(LinkId l) const;
  std::string link_name(LinkId l) const;
  // The transport class collectives see on link l (its profile's "transport", else by role:
  // intra-node links NVLink, host links PCIe, NIC attachments and the fabric network) and the
  // profile's collective traits.
  LinkTransport transport(LinkId l) const;
  const LinkCollectiveTraits& traits(LinkId l) const;
  LinkRole role(LinkId l) const;
  // The profile link of l (a fat tree's uplink: the inter link, whose bandwidth link() scales).
  const LinkSpec& link_spec(LinkId l) const;

  // Appends src -> dst's hops to `hops` and returns the route's latency (sum of its links').
  // Endpoints are accelerators, hosts, node switches and rail roots. Throws
  // std::invalid_argument for other vertices or an unreachable pair.
  double route(VertexId src, VertexId dst, std::vector<Hop>& hops) const;
  // The same as a Route (latency rounded to the picosecond as Router does).
  Route route(VertexId src, VertexId dst) const;

 private:
  struct LocalLink {
    std::uint32_t a, b;  // local vertex offsets in the node
    LinkRole role;
    const LinkSpec* spec;
  };
  struct LocalHop {
    std::uint32_t link;  // local link index
    bool forward;
  };
  enum class Kind : std::uint8_t { host, acc, sw, nic };

  void build_node_template();
  void build_intra_routes();
  int fabric_links_per_rail() const;
  int leaves() const;
  // Local vertex offsets.
  std::uint32_t local_acc(int i) const { return 1 + static_cast<std::uint32_t>(i); }
  std::uint32_t local_switch() const { return 1 + static_cast<std::uint32_t>(apn_); }
  std::uint32_t local_nic(int k) const {
    return 1 + static_cast<std::uint32_t>(apn_) + (has_switch_ ? 1 : 0) +
           static_cast<std::uint32_t>(k);
  }
  Kind local_kind(std::uint32_t off) const;
  void intra(int node, std::uint32_t from, std::uint32_t to, std::vector<Hop>& hops,
             double& latency) const;
  // NIC of node n on rail k -> NIC of node m on rail k.
  void fabric(int k, int n, int m, std::vector<Hop>& hops, double& latency) const;
  void push(LinkId l, bool forward, std::vector<Hop>& hops, double& latency) const;
  LinkId fabric_link(int k, std::int64_t index) const;

  ClusterSpec spec_;
  int apn_ = 1;
  int nics_ = 0;
  bool fabric_ = false;
  bool has_switch_ = false;
  std::uint32_t vertices_per_node_ = 0;
  std::uint32_t links_per_node_ = 0;
  std::vector<LocalLink> node_links_;
  // Intra-node shortest paths between local vertices [from * V + to], in order.
  std::vector<std::vector<LocalHop>> intra_routes_;
  std::vector<double> intra_latency_;
  std::uint64_t fabric_vertex_base_ = 0;
  std::uint64_t fabric_link_base_ = 0;
};

}  // namespace trainsim::sim
