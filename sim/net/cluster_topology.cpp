#include "sim/net/cluster_topology.hpp"

#include "sim/net/cluster_layout.hpp"

namespace trainsim::sim {

// Materializes ClusterLayout's vertices and links in its id order, so the layout's routes are
// valid on this topology.
ClusterTopology build_cluster_topology(const ClusterSpec& spec) {
  const ClusterLayout layout(spec);
  ClusterTopology out;
  out.accelerators_per_node = spec.accelerators_per_node;
  Topology& topo = out.topology;
  for (std::size_t v = 0; v < layout.num_vertices(); ++v)
    topo.add_vertex(layout.vertex(static_cast<VertexId>(v)));
  for (std::size_t l = 0; l < layout.num_links(); ++l) {
    const LayoutLink ll = layout.link(static_cast<LinkId>(l));
    topo.add_link(ll.a, ll.b, ll.bw_bytes_per_s, ll.latency_s, ll.duplex);
  }
  for (int r = 0; r < spec.nodes * spec.accelerators_per_node; ++r)
    out.accelerators.push_back(layout.accelerator(r));
  for (int n = 0; n < spec.nodes; ++n) {
    out.hosts.push_back(layout.host(n));
    if (layout.nics_per_node() > 0) {
      out.nics.emplace_back();
      for (int k = 0; k < layout.nics_per_node(); ++k)
        out.nics.back().push_back(layout.nic(n, k));
    }
  }
  return out;
}

}  // namespace trainsim::sim
