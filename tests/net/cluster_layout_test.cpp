// ClusterLayout computes vertex and link ids, link properties and routes arithmetically; the
// materialized topology has exactly those ids, and the layout's routes are valid shortest paths
// on it (as many hops as Router's).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/net/cluster_layout.hpp"
#include "sim/net/cluster_topology.hpp"
#include "sim/net/routing.hpp"

using namespace trainsim::sim;

namespace {

LinkSpec named_link(const char* name, double bw, double lat) {
  LinkSpec s;
  s.name = name;
  s.bw_bytes_per_s = bw;
  s.latency_s = lat;
  return s;
}

ClusterSpec base(int nodes, int apn, IntraTopology intra, bool p2p, InterTopology inter, int nics) {
  ClusterSpec c;
  c.name = "t";
  c.nodes = nodes;
  c.accelerators_per_node = apn;
  c.intra_topology = intra;
  if (intra == IntraTopology::torus2d) c.intra_dims = {2, apn / 2};
  c.intra_link = named_link("nvl", 3e11, 3e-7);
  c.host_link = named_link("pcie", 3.2e10, 1e-6);
  c.p2p = p2p;
  c.inter_topology = inter;
  if (inter != InterTopology::none) c.inter_link = named_link("ib", 5e10, 1e-6);
  c.nics_per_node = nics;
  c.leaf_switch_ports = 3;
  c.oversubscription = 2;
  if (inter == InterTopology::torus2d) c.inter_dims = {2, nodes / 2};
  if (inter == InterTopology::torus3d) c.inter_dims = {2, 3, nodes / 6};
  return c;
}

std::vector<ClusterSpec> specs() {
  return {
      base(1, 8, IntraTopology::switched, true, InterTopology::none, 0),
      base(1, 8, IntraTopology::fully_connected, true, InterTopology::none, 0),
      base(1, 8, IntraTopology::ring, true, InterTopology::none, 0),
      base(1, 8, IntraTopology::torus2d, true, InterTopology::none, 0),
      base(1, 4, IntraTopology::switched, false, InterTopology::none, 0),
      base(5, 4, IntraTopology::switched, true, InterTopology::star, 2),
      base(7, 8, IntraTopology::switched, true, InterTopology::fat_tree,
           8),  // 3 leaves, last short
      base(7, 4, IntraTopology::switched, false, InterTopology::fat_tree, 2),
      base(5, 2, IntraTopology::ring, true, InterTopology::ring, 2),
      base(2, 4, IntraTopology::switched, true, InterTopology::ring, 4),
      base(6, 4, IntraTopology::switched, true, InterTopology::torus2d, 4),
      base(12, 2, IntraTopology::switched, true, InterTopology::torus3d, 1),
      base(4, 1, IntraTopology::switched, false, InterTopology::star, 1),
  };
}

void check_route(const Topology& topo, const Route& r) {
  VertexId at = r.src;
  double latency = 0;
  for (const Hop& h : r.hops) {
    const LinkProps& l = topo.link(h.link);
    REQUIRE((h.forward ? l.a : l.b) == at);
    at = h.forward ? l.b : l.a;
    latency += l.latency_s;
  }
  REQUIRE(at == r.dst);
  CHECK(r.latency_s == Approx(latency).epsilon(1e-12));
}

}  // namespace

TEST_CASE("cluster layout: the materialized topology has the layout's ids and properties") {
  for (const ClusterSpec& spec : specs()) {
    INFO("nodes " << spec.nodes << " apn " << spec.accelerators_per_node << " inter "
                  << static_cast<int>(spec.inter_topology));
    const ClusterLayout layout(spec);
    const ClusterTopology topo = build_cluster_topology(spec);
    REQUIRE(layout.num_vertices() == topo.topology.num_vertices());
    REQUIRE(layout.num_links() == topo.topology.num_links());
    for (LinkId l = 0; l < layout.num_links(); ++l) {
      const LayoutLink a = layout.link(l);
      const LinkProps& b = topo.topology.link(l);
      CHECK(a.a == b.a);
      CHECK(a.b == b.b);
      CHECK(a.bw_bytes_per_s == b.bw_bytes_per_s);
      CHECK(layout.link_name(l) == b.name);
    }
    for (int r = 0; r < spec.total_accelerators(); ++r)
      CHECK(layout.accelerator(r) == topo.accelerator(r));
  }
}

TEST_CASE("cluster layout: routes are valid shortest paths between every pair of endpoints") {
  for (const ClusterSpec& spec : specs()) {
    INFO("nodes " << spec.nodes << " apn " << spec.accelerators_per_node << " inter "
                  << static_cast<int>(spec.inter_topology) << " p2p " << spec.p2p);
    const ClusterLayout layout(spec);
    const ClusterTopology topo = build_cluster_topology(spec);
    Router router(topo.topology);
    std::vector<VertexId> ends;
    for (int r = 0; r < spec.total_accelerators(); ++r)
      ends.push_back(layout.accelerator(r));
    for (int n = 0; n < spec.nodes; ++n)
      ends.push_back(layout.host(n));
    for (VertexId s : ends) {
      for (VertexId d : ends) {
        const Route r = layout.route(s, d);
        check_route(topo.topology, r);
        // Shortest: as many hops as Dijkstra's; a route may change rail inside a node (PXN)
        // where Router may change it in the other node, at the same hop count.
        CHECK(r.hops.size() == router.route(s, d).hops.size());
      }
    }
  }
}

TEST_CASE("cluster layout: NCCL-style rail routing and a 65,536-accelerator fat tree") {
  // Across nodes the source crosses to the accelerator on the destination's rail.
  const ClusterSpec c = base(7, 8, IntraTopology::switched, true, InterTopology::fat_tree, 8);
  const ClusterLayout layout(c);
  const Route r = layout.route(layout.accelerator(0), layout.accelerator(8 * 6 + 3));
  // acc0 > switch > acc3 > nic3 > leaf0 > spine > leaf2 > nic3 > acc3
  REQUIRE(r.hops.size() == 8);
  CHECK(layout.vertex(layout.link(r.hops[3].link).b).name == "rail3.leaf0");

  ClusterSpec big = base(8192, 8, IntraTopology::switched, true, InterTopology::fat_tree, 8);
  big.leaf_switch_ports = 4;
  big.oversubscription = 1;
  const ClusterLayout huge(big);
  // Per node: 8 host, 8 NVSwitch and 8 NIC links; per rail: 8192 node links and 2048 uplinks.
  CHECK(huge.num_links() == 8192u * 24 + 8u * (8192 + 2048));
  std::vector<Hop> hops;
  const double lat = huge.route(huge.accelerator(5), huge.accelerator(65535), hops);
  CHECK(hops.size() == 8);  // acc > switch > acc7 > nic > leaf > spine > leaf > nic > acc
  CHECK(lat == Approx(2 * 3e-7 + 2 * 1e-6 + 4 * 1e-6).epsilon(1e-12));
}
