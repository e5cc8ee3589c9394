#include "sim/net/topology.hpp"

#include <cmath>
#include <stdexcept>

namespace trainsim::sim {

VertexId Topology::add_vertex(VertexProps props) {
  return static_cast<VertexId>(boost::add_vertex(std::move(props), graph_));
}

LinkId Topology::add_link(VertexId a, VertexId b, double bw_bytes_per_s, double latency_s,
                          Duplex duplex, std::string name) {
  if (a >= num_vertices() || b >= num_vertices())
    throw std::invalid_argument("add_link: unknown vertex");
  if (a == b) throw std::invalid_argument("add_link: a link needs two distinct endpoints");
  if (!(bw_bytes_per_s > 0) || !std::isfinite(bw_bytes_per_s)) {
    throw std::invalid_argument("add_link: bandwidth must be positive and finite");
  }
  if (!(latency_s >= 0) || !std::isfinite(latency_s)) {
    throw std::invalid_argument("add_link: latency must be non-negative and finite");
  }
  const auto id = static_cast<LinkId>(links_.size());
  if (name.empty()) name = graph_[a].name + "--" + graph_[b].name;
  LinkProps props{id, std::move(name), a, b, bw_bytes_per_s, latency_s, duplex};
  links_.push_back(boost::add_edge(a, b, std::move(props), graph_).first);
  return id;
}

LinkId Topology::add_link(VertexId a, VertexId b, const LinkSpec& spec, std::string name) {
  return add_link(a, b, spec.bw_bytes_per_s, spec.latency_s, spec.duplex, std::move(name));
}

}  // namespace trainsim::sim
