#include "sim/net/cluster_topology.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

namespace trainsim::sim {

namespace {

[[noreturn]] void fail(const ClusterSpec& spec, const std::string& what) {
  throw std::invalid_argument("cluster '" + spec.name + "': " + what);
}

// Built with append: GCC 12 flags `"literal" + std::string` with a false -Wrestrict.
std::string join(std::string_view a, std::string_view b, int i = -1) {
  std::string s(a);
  s.append(b);
  if (i >= 0) s.append(std::to_string(i));
  return s;
}

int product(const std::vector<int>& dims) {
  int p = 1;
  for (int d : dims)
    p *= d;
  return p;
}

// Links members[i] to its +1 neighbour in every dimension of a torus (a ring is a 1-D torus),
// wrapping around; a dimension of 2 gets one link, not two parallel ones.
void wire_torus(Topology& topo, const std::vector<VertexId>& members, const std::vector<int>& dims,
                const LinkSpec& link) {
  const int count = static_cast<int>(members.size());
  int stride = 1;
  for (int dim : dims) {
    if (dim > 1) {
      for (int i = 0; i < count; ++i) {
        const int coord = (i / stride) % dim;
        if (dim == 2 && coord == 1) continue;
        const int next = coord + 1 == dim ? i - coord * stride : i + stride;
        topo.add_link(members[static_cast<std::size_t>(i)], members[static_cast<std::size_t>(next)],
                      link);
      }
    }
    stride *= dim;
  }
}

void wire_all_pairs(Topology& topo, const std::vector<VertexId>& members, const LinkSpec& link) {
  for (std::size_t i = 0; i < members.size(); ++i) {
    for (std::size_t j = i + 1; j < members.size(); ++j)
      topo.add_link(members[i], members[j], link);
  }
}

void wire_star(Topology& topo, const std::vector<VertexId>& members, const LinkSpec& link,
               const std::string& name, int node) {
  const VertexId sw =
      topo.add_vertex(VertexProps{VertexKind::network_switch, name, node, true, false});
  for (VertexId m : members)
    topo.add_link(m, sw, link);
}

}  // namespace

ClusterTopology build_cluster_topology(const ClusterSpec& spec) {
  if (spec.nodes < 1) fail(spec, "nodes must be >= 1");
  if (spec.accelerators_per_node < 1) fail(spec, "accelerators_per_node must be >= 1");
  const int apn = spec.accelerators_per_node;
  const bool fabric = spec.inter_topology != InterTopology::none;
  if (!fabric && spec.nodes > 1) fail(spec, "several nodes need an inter-node topology");
  if (fabric && !spec.inter_link) fail(spec, "an inter-node topology needs inter_link");
  if (fabric && spec.nics_per_node < 1) fail(spec, "nics_per_node must be >= 1");
  if (spec.p2p && apn > 1 && spec.intra_topology == IntraTopology::torus2d &&
      (spec.intra_dims.size() != 2 || product(spec.intra_dims) != apn)) {
    fail(spec, "intra torus2d needs 2 intra_dims multiplying to accelerators_per_node");
  }
  const std::size_t want_dims = spec.inter_topology == InterTopology::torus2d   ? 2
                                : spec.inter_topology == InterTopology::torus3d ? 3
                                                                                : 0;
  if (want_dims != 0 &&
      (spec.inter_dims.size() != want_dims || product(spec.inter_dims) != spec.nodes)) {
    fail(spec, join("inter torus needs ", "", static_cast<int>(want_dims))
                   .append(" inter_dims multiplying to nodes"));
  }
  if (spec.inter_topology == InterTopology::fat_tree &&
      (spec.leaf_switch_ports < 1 || !(spec.oversubscription > 0))) {
    fail(spec, "fat_tree needs leaf_switch_ports >= 1 and oversubscription > 0");
  }

  ClusterTopology out;
  out.accelerators_per_node = apn;
  Topology& topo = out.topology;
  const int nics = fabric ? spec.nics_per_node : 0;
  out.nics.resize(static_cast<std::size_t>(fabric ? spec.nodes : 0));

  for (int n = 0; n < spec.nodes; ++n) {
    const std::string prefix = join("n", "", n).append(".");
    const VertexId host =
        topo.add_vertex(VertexProps{VertexKind::host, join(prefix, "host"), n, !spec.p2p, false});
    out.hosts.push_back(host);
    std::vector<VertexId> accs;
    for (int i = 0; i < apn; ++i) {
      const VertexId a = topo.add_vertex(
          VertexProps{VertexKind::accelerator, join(prefix, "acc", i), n, true, false});
      accs.push_back(a);
      out.accelerators.push_back(a);
      topo.add_link(a, host, spec.host_link);
    }
    if (spec.p2p && apn > 1) {
      switch (spec.intra_topology) {
        case IntraTopology::switched:
          wire_star(topo, accs, spec.intra_link, join(prefix, "switch"), n);
          break;
        case IntraTopology::ring:
          wire_torus(topo, accs, {apn}, spec.intra_link);
          break;
        case IntraTopology::fully_connected:
          wire_all_pairs(topo, accs, spec.intra_link);
          break;
        case IntraTopology::torus2d:
          wire_torus(topo, accs, spec.intra_dims, spec.intra_link);
          break;
      }
    }
    for (int k = 0; k < nics; ++k) {
      const VertexId nic =
          topo.add_vertex(VertexProps{VertexKind::nic, join(prefix, "nic", k), n, true, true});
      out.nics[static_cast<std::size_t>(n)].push_back(nic);
      if (spec.p2p) {
        for (int i = k; i < apn; i += nics)
          topo.add_link(accs[static_cast<std::size_t>(i)], nic, spec.host_link);
      } else {
        topo.add_link(host, nic, spec.host_link);
      }
    }
  }

  if (!fabric) return out;
  const LinkSpec& link = *spec.inter_link;
  for (int k = 0; k < nics; ++k) {
    std::vector<VertexId> rail;
    for (int n = 0; n < spec.nodes; ++n)
      rail.push_back(out.nics[static_cast<std::size_t>(n)][static_cast<std::size_t>(k)]);
    const std::string rail_name = join("rail", "", k).append(".");
    switch (spec.inter_topology) {
      case InterTopology::none:
        break;
      case InterTopology::star:
        wire_star(topo, rail, link, join(rail_name, "switch"), -1);
        break;
      case InterTopology::ring:
        wire_torus(topo, rail, {spec.nodes}, link);
        break;
      case InterTopology::torus2d:
      case InterTopology::torus3d:
        wire_torus(topo, rail, spec.inter_dims, link);
        break;
      case InterTopology::fat_tree: {
        const int ports = spec.leaf_switch_ports;
        const int leaves = (spec.nodes + ports - 1) / ports;
        VertexId spine = 0;
        if (leaves > 1) {
          spine = topo.add_vertex(
              VertexProps{VertexKind::network_switch, join(rail_name, "spine"), -1, true, false});
        }
        for (int leaf = 0; leaf < leaves; ++leaf) {
          const VertexId sw = topo.add_vertex(VertexProps{
              VertexKind::network_switch, join(rail_name, "leaf", leaf), -1, true, false});
          int down = 0;
          for (int n = leaf * ports; n < spec.nodes && n < (leaf + 1) * ports; ++n, ++down) {
            topo.add_link(rail[static_cast<std::size_t>(n)], sw, link);
          }
          if (leaves > 1) {
            topo.add_link(sw, spine, link.bw_bytes_per_s * down / spec.oversubscription,
                          link.latency_s, link.duplex);
          }
        }
        break;
      }
    }
  }
  return out;
}

}  // namespace trainsim::sim
