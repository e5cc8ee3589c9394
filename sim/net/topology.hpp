#pragma once
// The network as a graph: vertices are accelerators, hosts, NICs and switches; every edge is one
// physical link. Bandwidth is per direction; a full-duplex link is two independent resources (one
// per direction), a half-duplex link one resource shared by both directions.

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/hw/specs.hpp"

namespace trainsim::sim {

using VertexId = std::uint32_t;
using LinkId = std::uint32_t;

enum class VertexKind { accelerator, host, nic, network_switch };

struct VertexProps {
  VertexKind kind = VertexKind::network_switch;
  std::string name;
  int node = -1;  // cluster node this vertex belongs to; -1 for the inter-node fabric
  // Routes may start or end here but pass through only when transit is set (a host without
  // peer-to-peer support forwards accelerator traffic; one with it does not).
  bool transit = true;
  // A NIC is the door of its node: a route entering it from its own node must leave the node, so
  // it is never a shortcut between two of its node's vertices (fabric transit, as in a direct
  // torus of NICs, stays allowed).
  bool gateway = false;
};

struct LinkProps {
  LinkId id = 0;
  std::string name;
  VertexId a = 0;  // the endpoint the link was added from: a -> b is the "forward" direction
  VertexId b = 0;
  double bw_bytes_per_s = 0;  // per direction (shared by both directions when half duplex)
  double latency_s = 0;
  Duplex duplex = Duplex::full;
};

using TopologyGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexProps, LinkProps>;

class Topology {
 public:
  VertexId add_vertex(VertexProps props);
  // Throws std::invalid_argument for a self loop, unknown vertex, non-positive bandwidth or
  // negative/non-finite latency.
  LinkId add_link(VertexId a, VertexId b, double bw_bytes_per_s, double latency_s, Duplex duplex,
                  std::string name = {});
  LinkId add_link(VertexId a, VertexId b, const LinkSpec& spec, std::string name = {});

  std::size_t num_vertices() const { return boost::num_vertices(graph_); }
  std::size_t num_links() const { return links_.size(); }
  const VertexProps& vertex(VertexId v) const { return graph_[v]; }
  const LinkProps& link(LinkId l) const { return graph_[links_[l]]; }
  const TopologyGraph& graph() const { return graph_; }

 private:
  TopologyGraph graph_;
  // Edge descriptors point into graph_'s edge storage: a copied or moved Topology would keep
  // pointers into the original's (Boost's adjacency_list copies on move). Build a Topology where
  // it lives (return it by value into a variable, or `new T(f())`), never std::move one.
  std::vector<TopologyGraph::edge_descriptor> links_;
};

}  // namespace trainsim::sim
