#include <catch2/catch.hpp>

#include <string>

#include "sim/net/cluster_topology.hpp"
#include "sim/net/routing.hpp"
#include "support/link_specs.hpp"

using namespace trainsim::sim;
using trainsim::test::link_spec;

namespace {

ClusterSpec node_spec(int apn, IntraTopology intra, bool p2p) {
  ClusterSpec spec;
  spec.name = "test";
  spec.accelerators_per_node = apn;
  spec.intra_topology = intra;
  spec.intra_link = link_spec(3e11, 1e-6);
  spec.host_link = link_spec(3.2e10, 2e-6);
  spec.p2p = p2p;
  return spec;
}

// The kinds of vertices a route passes through, endpoints included, e.g. "acc>switch>acc".
std::string path_kinds(const Topology& topo, const Route& r) {
  auto kind = [&](VertexId v) {
    switch (topo.vertex(v).kind) {
      case VertexKind::accelerator:
        return "acc";
      case VertexKind::host:
        return "host";
      case VertexKind::nic:
        return "nic";
      case VertexKind::network_switch:
        return "switch";
    }
    return "?";
  };
  std::string out = kind(r.src);
  VertexId at = r.src;
  for (const Hop& h : r.hops) {
    const LinkProps& l = topo.link(h.link);
    REQUIRE((h.forward ? l.a : l.b) == at);
    at = h.forward ? l.b : l.a;
    out += '>';
    out += kind(at);
  }
  REQUIRE(at == r.dst);
  return out;
}

}  // namespace

TEST_CASE("routing: fewest hops first, then latency, deterministic ties, cached") {
  Topology topo;
  VertexId v[5];
  for (int i = 0; i < 5; ++i)
    v[i] = topo.add_vertex({VertexKind::network_switch, std::to_string(i)});
  const LinkId direct = topo.add_link(v[0], v[4], 1e9, 1e-3, Duplex::full);  // 1 hop, slow
  topo.add_link(v[0], v[1], 1e9, 1e-6, Duplex::full);
  topo.add_link(v[1], v[4], 1e9, 1e-6, Duplex::full);
  topo.add_link(v[0], v[2], 1e9, 1e-6, Duplex::full);  // v0-v2-v3: two 2-hop options to v3
  topo.add_link(v[2], v[3], 1e9, 2e-6, Duplex::full);
  topo.add_link(v[0], v[3], 1e9, 9e-6, Duplex::full);
  const LinkId via1 = topo.add_link(v[1], v[3], 1e9, 1e-6, Duplex::full);
  Router router(topo);
  const Route& r04 = router.route(v[0], v[4]);
  REQUIRE(r04.hops.size() == 1);
  CHECK(r04.hops[0].link == direct);
  CHECK(r04.latency == Time::ms(1));
  // v0 -> v3: the direct 1-hop link wins over 2-hop paths despite its latency.
  CHECK(router.route(v[0], v[3]).hops.size() == 1);
  // v4 -> v3: 2 hops either via v1 (1+1 us) or v0 (1 ms + 9 us): latency decides.
  const Route& r43 = router.route(v[4], v[3]);
  REQUIRE(r43.hops.size() == 2);
  CHECK(r43.hops[1].link == via1);
  CHECK(r43.hops[0].forward == false);  // link v1-v4 traversed v4 -> v1
  CHECK(r43.latency_s == Approx(2e-6));
  CHECK(&router.route(v[4], v[3]) == &r43);
  CHECK(router.cached_routes() == 3);
  Router again(topo);
  const Route& r = again.route(v[4], v[3]);
  CHECK(r.hops.size() == r43.hops.size());
  CHECK(r.hops[0].link == r43.hops[0].link);
  CHECK(router.route(v[2], v[2]).hops.empty());
}

TEST_CASE("routing errors") {
  Topology topo;
  const auto a = topo.add_vertex({VertexKind::host, "a"});
  const auto b = topo.add_vertex({VertexKind::host, "b"});
  Router router(topo);
  CHECK_THROWS_AS(router.route(a, b), std::runtime_error);
  CHECK_THROWS_AS(router.route(a, 7), std::invalid_argument);
  CHECK_THROWS_AS(topo.add_link(a, a, 1e9, 0, Duplex::full), std::invalid_argument);
  CHECK_THROWS_AS(topo.add_link(a, b, 0, 0, Duplex::full), std::invalid_argument);
  CHECK_THROWS_AS(topo.add_link(a, b, 1e9, -1, Duplex::full), std::invalid_argument);
}

TEST_CASE("one node, switched, P2P: accelerators talk through the switch, not the host") {
  const ClusterTopology c = build_cluster_topology(node_spec(8, IntraTopology::switched, true));
  CHECK(c.accelerators.size() == 8);
  CHECK(c.hosts.size() == 1);
  CHECK(c.topology.num_vertices() == 10);  // host, 8 accelerators, switch
  CHECK(c.topology.num_links() == 16);
  Router router(c.topology);
  CHECK(path_kinds(c.topology, router.route(c.accelerator(0), c.accelerator(5))) ==
        "acc>switch>acc");
  CHECK(path_kinds(c.topology, router.route(c.host(0), c.accelerator(3))) == "host>acc");
}

TEST_CASE("without P2P accelerator traffic crosses the host over PCIe") {
  const ClusterTopology c = build_cluster_topology(node_spec(4, IntraTopology::switched, false));
  Router router(c.topology);
  const Route& r = router.route(c.accelerator(1), c.accelerator(2));
  CHECK(path_kinds(c.topology, r) == "acc>host>acc");
  CHECK(r.latency_s == Approx(4e-6));
  for (const Hop& h : r.hops)
    CHECK(c.topology.link(h.link).bw_bytes_per_s == 3.2e10);
}

TEST_CASE("intra-node ring, all-pairs and 2-D torus") {
  {
    const ClusterTopology c = build_cluster_topology(node_spec(8, IntraTopology::ring, true));
    Router router(c.topology);
    CHECK(router.route(c.accelerator(0), c.accelerator(4)).hops.size() == 4);
    CHECK(router.route(c.accelerator(0), c.accelerator(7)).hops.size() == 1);
    CHECK(c.topology.num_links() == 8 + 8);
  }
  {
    const ClusterTopology c =
        build_cluster_topology(node_spec(8, IntraTopology::fully_connected, true));
    CHECK(c.topology.num_links() == 8 + 28);
    Router router(c.topology);
    CHECK(router.route(c.accelerator(2), c.accelerator(6)).hops.size() == 1);
  }
  {
    auto spec = node_spec(8, IntraTopology::torus2d, true);
    spec.intra_dims = {2, 4};
    const ClusterTopology c = build_cluster_topology(spec);
    CHECK(c.topology.num_links() == 8 + 4 + 8);  // dim 2: one link per pair; dim 4: a ring each
    Router router(c.topology);
    CHECK(router.route(c.accelerator(0), c.accelerator(7)).hops.size() == 2);  // (0,0) -> (1,3)
    spec.intra_dims = {3, 3};
    CHECK_THROWS_AS(build_cluster_topology(spec), std::invalid_argument);
  }
}

TEST_CASE("multi-node star with two NIC rails: accelerator i uses NIC i % 2") {
  auto spec = node_spec(4, IntraTopology::switched, true);
  spec.nodes = 3;
  spec.inter_topology = InterTopology::star;
  spec.inter_link = link_spec(2.5e10, 5e-6);
  spec.nics_per_node = 2;
  const ClusterTopology c = build_cluster_topology(spec);
  CHECK(c.accelerators.size() == 12);
  CHECK(c.nics.size() == 3);
  Router router(c.topology);
  const Route& r =
      router.route(c.accelerator(1), c.accelerator(5));  // node 0 acc 1 -> node 1 acc 1
  CHECK(path_kinds(c.topology, r) == "acc>nic>switch>nic>acc");
  const LinkProps& first = c.topology.link(r.hops[0].link);
  CHECK((first.a == c.nics[0][1] || first.b == c.nics[0][1]));
  // Same node, same NIC: still the intra-node switch, never a detour through the NIC.
  CHECK(path_kinds(c.topology, router.route(c.accelerator(0), c.accelerator(2))) ==
        "acc>switch>acc");
  // Different rails: change rail inside the destination node.
  CHECK(router.route(c.accelerator(0), c.accelerator(5)).hops.size() == 6);
}

TEST_CASE("fat tree: leaves under one spine, uplinks scaled by oversubscription") {
  ClusterSpec spec = node_spec(1, IntraTopology::switched, true);
  spec.nodes = 6;
  spec.inter_topology = InterTopology::fat_tree;
  spec.inter_link = link_spec(1e10, 1e-6);
  spec.leaf_switch_ports = 4;
  spec.oversubscription = 2;
  const ClusterTopology c = build_cluster_topology(spec);
  // 6 host links, 6 NIC links, 6 leaf downlinks, 2 uplinks (4 and 2 nodes).
  REQUIRE(c.topology.num_links() == 20);
  CHECK(c.topology.link(16).bw_bytes_per_s ==
        Approx(2e10));  // leaf 0 uplink (after its 4 downlinks): 4 x 1e10 / 2
  CHECK(c.topology.link(19).bw_bytes_per_s == Approx(1e10));
  Router router(c.topology);
  CHECK(path_kinds(c.topology, router.route(c.accelerator(0), c.accelerator(5))) ==
        "acc>nic>switch>switch>switch>nic>acc");
  CHECK(path_kinds(c.topology, router.route(c.accelerator(0), c.accelerator(3))) ==
        "acc>nic>switch>nic>acc");
}

TEST_CASE("inter-node rings and tori") {
  ClusterSpec spec = node_spec(1, IntraTopology::switched, true);
  spec.nodes = 8;
  spec.inter_link = link_spec(1e10, 1e-6);
  spec.inter_topology = InterTopology::torus3d;
  spec.inter_dims = {2, 2, 2};
  ClusterTopology c = build_cluster_topology(spec);
  CHECK(c.topology.num_links() == 8 + 8 + 12);
  Router router(c.topology);
  CHECK(router.route(c.accelerator(0), c.accelerator(7)).hops.size() == 2 + 3);
  spec.inter_topology = InterTopology::ring;
  c = build_cluster_topology(spec);
  CHECK(c.topology.num_links() == 8 + 8 + 8);
  spec.inter_topology = InterTopology::torus2d;  // dims no longer match
  CHECK_THROWS_AS(build_cluster_topology(spec), std::invalid_argument);
  spec.inter_topology = InterTopology::none;
  CHECK_THROWS_AS(build_cluster_topology(spec), std::invalid_argument);
  spec.inter_topology = InterTopology::star;
  spec.inter_link.reset();
  CHECK_THROWS_AS(build_cluster_topology(spec), std::invalid_argument);
}
