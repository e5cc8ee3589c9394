#include "sim/net/cluster_layout.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "sim/core/time.hpp"

namespace trainsim::sim {

namespace {

[[noreturn]] void fail(const ClusterSpec& spec, const std::string& what) {
  throw std::invalid_argument("cluster '" + spec.name + "': " + what);
}

int product(const std::vector<int>& dims) {
  int p = 1;
  for (int d : dims)
    p *= d;
  return p;
}

// Links of wire_torus over `count` members with `dims` (a ring is {count}): a dimension of 2
// has one link per pair, a dimension of 1 none.
std::int64_t torus_links(int count, const std::vector<int>& dims) {
  std::int64_t n = 0;
  for (int d : dims)
    n += d == 2 ? count / 2 : (d > 1 ? count : 0);
  return n;
}

// The links wire_torus adds, in its order, as (from, to) member indices.
void torus_pairs(int count, const std::vector<int>& dims, std::vector<std::pair<int, int>>& out) {
  int stride = 1;
  for (int dim : dims) {
    if (dim > 1) {
      for (int i = 0; i < count; ++i) {
        const int coord = (i / stride) % dim;
        if (dim == 2 && coord == 1) continue;
        const int next = coord + 1 == dim ? i - coord * stride : i + stride;
        out.emplace_back(i, next);
      }
    }
    stride *= dim;
  }
}

}  // namespace

ClusterLayout::ClusterLayout(const ClusterSpec& spec) : spec_(spec) {
  if (spec.nodes < 1) fail(spec, "nodes must be >= 1");
  if (spec.accelerators_per_node < 1) fail(spec, "accelerators_per_node must be >= 1");
  apn_ = spec.accelerators_per_node;
  fabric_ = spec.inter_topology != InterTopology::none;
  if (!fabric_ && spec.nodes > 1) fail(spec, "several nodes need an inter-node topology");
  if (fabric_ && !spec.inter_link) fail(spec, "an inter-node topology needs inter_link");
  if (fabric_ && spec.nics_per_node < 1) fail(spec, "nics_per_node must be >= 1");
  if (spec.p2p && apn_ > 1 && spec.intra_topology == IntraTopology::torus2d &&
      (spec.intra_dims.size() != 2 || product(spec.intra_dims) != apn_)) {
    fail(spec, "intra torus2d needs 2 intra_dims multiplying to accelerators_per_node");
  }
  const std::size_t want_dims = spec.inter_topology == InterTopology::torus2d   ? 2
                                : spec.inter_topology == InterTopology::torus3d ? 3
                                                                                : 0;
  if (want_dims != 0 &&
      (spec.inter_dims.size() != want_dims || product(spec.inter_dims) != spec.nodes)) {
    fail(spec,
         "inter torus needs " + std::to_string(want_dims) + " inter_dims multiplying to nodes");
  }
  if (spec.inter_topology == InterTopology::fat_tree &&
      (spec.leaf_switch_ports < 1 || !(spec.oversubscription > 0))) {
    fail(spec, "fat_tree needs leaf_switch_ports >= 1 and oversubscription > 0");
  }
  nics_ = fabric_ ? spec.nics_per_node : 0;
  has_switch_ = spec.p2p && apn_ > 1 && spec.intra_topology == IntraTopology::switched;
  vertices_per_node_ = static_cast<std::uint32_t>(1 + apn_ + (has_switch_ ? 1 : 0) + nics_);
  build_node_template();
  links_per_node_ = static_cast<std::uint32_t>(node_links_.size());
  fabric_vertex_base_ = static_cast<std::uint64_t>(spec.nodes) * vertices_per_node_;
  fabric_link_base_ = static_cast<std::uint64_t>(spec.nodes) * links_per_node_;
  const std::uint64_t nv = num_vertices();
  if (nv > std::numeric_limits<VertexId>::max() || num_links() > std::numeric_limits<LinkId>::max())
    fail(spec, "too many vertices or links for 32-bit ids");
  build_intra_routes();
}

void ClusterLayout::build_node_template() {
  const LinkSpec* host_link = &spec_.host_link;
  for (int i = 0; i < apn_; ++i)
    node_links_.push_back({local_acc(i), 0, LinkRole::host, host_link});
  if (spec_.p2p && apn_ > 1) {
    const LinkSpec* il = &spec_.intra_link;
    std::vector<std::pair<int, int>> pairs;
    switch (spec_.intra_topology) {
      case IntraTopology::switched:
        for (int i = 0; i < apn_; ++i)
          node_links_.push_back({local_acc(i), local_switch(), LinkRole::intra, il});
        break;
      case IntraTopology::ring:
        torus_pairs(apn_, {apn_}, pairs);
        break;
      case IntraTopology::fully_connected:
        for (int i = 0; i < apn_; ++i) {
          for (int j = i + 1; j < apn_; ++j)
            pairs.emplace_back(i, j);
        }
        break;
      case IntraTopology::torus2d:
        torus_pairs(apn_, spec_.intra_dims, pairs);
        break;
    }
    for (const auto& [x, y] : pairs)
      node_links_.push_back({local_acc(x), local_acc(y), LinkRole::intra, il});
  }
  for (int k = 0; k < nics_; ++k) {
    if (spec_.p2p) {
      for (int i = k; i < apn_; i += nics_)
        node_links_.push_back({local_acc(i), local_nic(k), LinkRole::nic, host_link});
    } else {
      node_links_.push_back({0, local_nic(k), LinkRole::nic, host_link});
    }
  }
}

ClusterLayout::Kind ClusterLayout::local_kind(std::uint32_t off) const {
  if (off == 0) return Kind::host;
  if (off <= static_cast<std::uint32_t>(apn_)) return Kind::acc;
  if (has_switch_ && off == local_switch()) return Kind::sw;
  return Kind::nic;
}

// Dijkstra over the node template on (hops, latency in ps, vertex): the order Router uses. A
// route passes through accelerators and switches, through the host only without peer-to-peer,
// and never through a NIC (a NIC is the node's door).
void ClusterLayout::build_intra_routes() {
  const std::uint32_t v = vertices_per_node_;
  intra_routes_.assign(static_cast<std::size_t>(v) * v, {});
  intra_latency_.assign(static_cast<std::size_t>(v) * v, -1.0);
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> adj(v);  // (link, other)
  for (std::uint32_t l = 0; l < node_links_.size(); ++l) {
    adj[node_links_[l].a].emplace_back(l, node_links_[l].b);
    adj[node_links_[l].b].emplace_back(l, node_links_[l].a);
  }
  using Entry = std::tuple<std::uint32_t, std::int64_t, std::uint32_t>;
  for (std::uint32_t src = 0; src < v; ++src) {
    std::vector<std::uint32_t> hops(v, std::numeric_limits<std::uint32_t>::max());
    std::vector<std::int64_t> lat(v, 0);
    std::vector<std::int64_t> pred(v, -1);
    std::vector<bool> settled(v, false);
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> q;
    hops[src] = 0;
    q.emplace(0, 0, src);
    while (!q.empty()) {
      const auto [h, l, u] = q.top();
      q.pop();
      if (settled[u]) continue;
      settled[u] = true;
      const Kind kind = local_kind(u);
      const bool transit =
          kind == Kind::acc || kind == Kind::sw || (kind == Kind::host && !spec_.p2p);
      if (u != src && !transit) continue;
      for (const auto& [link, w] : adj[u]) {
        if (settled[w]) continue;
        const std::uint32_t nh = h + 1;
        const std::int64_t nl =
            l + Time::from_seconds(node_links_[link].spec->latency_s).picoseconds();
        if (std::tie(nh, nl) < std::tie(hops[w], lat[w])) {
          hops[w] = nh;
          lat[w] = nl;
          pred[w] = link;
          q.emplace(nh, nl, w);
        }
      }
    }
    for (std::uint32_t dst = 0; dst < v; ++dst) {
      if (!settled[dst]) continue;
      std::vector<LocalHop>& r = intra_routes_[static_cast<std::size_t>(src) * v + dst];
      double latency = 0;
      for (std::uint32_t x = dst; x != src;) {
        const LocalLink& ll = node_links_[static_cast<std::size_t>(pred[x])];
        const std::uint32_t prev = ll.a == x ? ll.b : ll.a;
        r.push_back({static_cast<std::uint32_t>(pred[x]), ll.a == prev});
        latency += ll.spec->latency_s;
        x = prev;
      }
      std::reverse(r.begin(), r.end());
      intra_latency_[static_cast<std::size_t>(src) * v + dst] = latency;
    }
  }
}

int ClusterLayout::leaves() const {
  if (spec_.inter_topology != InterTopology::fat_tree) return 0;
  return (spec_.nodes + spec_.leaf_switch_ports - 1) / spec_.leaf_switch_ports;
}

int ClusterLayout::fabric_links_per_rail() const {
  switch (spec_.inter_topology) {
    case InterTopology::none:
      return 0;
    case InterTopology::star:
      return spec_.nodes;
    case InterTopology::fat_tree:
      return spec_.nodes + (leaves() > 1 ? leaves() : 0);
    case InterTopology::ring:
      return static_cast<int>(torus_links(spec_.nodes, {spec_.nodes}));
    case InterTopology::torus2d:
    case InterTopology::torus3d:
      return static_cast<int>(torus_links(spec_.nodes, spec_.inter_dims));
  }
  return 0;
}

namespace {
int fabric_vertices_per_rail(const ClusterSpec& s, int leaves) {
  switch (s.inter_topology) {
    case InterTopology::star:
      return 1;
    case InterTopology::fat_tree:
      return leaves + (leaves > 1 ? 1 : 0);
    default:
      return 0;
  }
}
}  // namespace

std::size_t ClusterLayout::num_vertices() const {
  return static_cast<std::size_t>(fabric_vertex_base_) +
         static_cast<std::size_t>(nics_) *
             static_cast<std::size_t>(fabric_vertices_per_rail(spec_, leaves()));
}

std::size_t ClusterLayout::num_links() const {
  return static_cast<std::size_t>(fabric_link_base_) +
         static_cast<std::size_t>(nics_) * static_cast<std::size_t>(fabric_links_per_rail());
}

VertexId ClusterLayout::accelerator(int rank) const {
  if (rank < 0 || rank >= spec_.nodes * apn_) throw std::invalid_argument("no such accelerator");
  return static_cast<VertexId>(static_cast<std::uint64_t>(rank / apn_) * vertices_per_node_ +
                               local_acc(rank % apn_));
}

VertexId ClusterLayout::host(int node) const {
  return static_cast<VertexId>(static_cast<std::uint64_t>(node) * vertices_per_node_);
}

VertexId ClusterLayout::nic(int node, int k) const {
  return static_cast<VertexId>(static_cast<std::uint64_t>(node) * vertices_per_node_ +
                               local_nic(k));
}

VertexId ClusterLayout::node_switch(int node) const {
  if (!has_switch_) throw std::invalid_argument("this cluster's nodes have no switch");
  return static_cast<VertexId>(static_cast<std::uint64_t>(node) * vertices_per_node_ +
                               local_switch());
}

bool ClusterLayout::has_rail_root() const {
  return spec_.inter_topology == InterTopology::star ||
         spec_.inter_topology == InterTopology::fat_tree;
}

VertexId ClusterLayout::rail_root(int k) const {
  if (!has_rail_root()) throw std::invalid_argument("this fabric has no root switch");
  const int per_rail = fabric_vertices_per_rail(spec_, leaves());
  // Star: its switch; fat tree: the spine (first), or the single leaf.
  return static_cast<VertexId>(fabric_vertex_base_ + static_cast<std::uint64_t>(k) * per_rail);
}

int ClusterLayout::node_of_vertex(VertexId v) const {
  if (v >= fabric_vertex_base_) return -1;
  return static_cast<int>(v / vertices_per_node_);
}

VertexProps ClusterLayout::vertex(VertexId v) const {
  VertexProps p;
  if (v < fabric_vertex_base_) {
    const int n = static_cast<int>(v / vertices_per_node_);
    const std::uint32_t off = v % vertices_per_node_;
    const std::string prefix = "n" + std::to_string(n) + ".";
    p.node = n;
    switch (local_kind(off)) {
      case Kind::host:
        p = VertexProps{VertexKind::host, prefix + "host", n, !spec_.p2p, false};
        break;
      case Kind::acc:
        p = VertexProps{VertexKind::accelerator, prefix + "acc" + std::to_string(off - 1), n, true,
                        false};
        break;
      case Kind::sw:
        p = VertexProps{VertexKind::network_switch, prefix + "switch", n, true, false};
        break;
      case Kind::nic:
        p = VertexProps{VertexKind::nic, prefix + "nic" + std::to_string(off - local_nic(0)), n,
                        true, true};
        break;
    }
    return p;
  }
  const int per_rail = fabric_vertices_per_rail(spec_, leaves());
  const std::uint64_t rel = v - fabric_vertex_base_;
  const int k = static_cast<int>(rel / static_cast<std::uint64_t>(per_rail));
  const int j = static_cast<int>(rel % static_cast<std::uint64_t>(per_rail));
  const std::string rail = "rail" + std::to_string(k) + ".";
  if (spec_.inter_topology == InterTopology::star)
    return VertexProps{VertexKind::network_switch, rail + "switch", -1, true, false};
  const bool spine = leaves() > 1;
  if (spine && j == 0)
    return VertexProps{VertexKind::network_switch, rail + "spine", -1, true, false};
  return VertexProps{VertexKind::network_switch,
                     rail + "leaf" + std::to_string(j - (spine ? 1 : 0)), -1, true, false};
}

LayoutLink ClusterLayout::link(LinkId l) const {
  LayoutLink out;
  if (l < fabric_link_base_) {
    const std::uint64_t n = l / links_per_node_;
    const LocalLink& ll = node_links_[l % links_per_node_];
    const std::uint64_t base = n * vertices_per_node_;
    out.a = static_cast<VertexId>(base + ll.a);
    out.b = static_cast<VertexId>(base + ll.b);
    out.role = ll.role;
    out.spec = ll.spec;
    out.bw_bytes_per_s = ll.spec->bw_bytes_per_s;
    out.latency_s = ll.spec->latency_s;
    out.duplex = ll.spec->duplex;
    return out;
  }
  const int per_rail = fabric_links_per_rail();
  const std::uint64_t rel = l - fabric_link_base_;
  const int k = static_cast<int>(rel / static_cast<std::uint64_t>(per_rail));
  const int j = static_cast<int>(rel % static_cast<std::uint64_t>(per_rail));
  const LinkSpec& link = *spec_.inter_link;
  out.role = LinkRole::fabric;
  out.spec = &link;
  out.bw_bytes_per_s = link.bw_bytes_per_s;
  out.latency_s = link.latency_s;
  out.duplex = link.duplex;
  const int per_vrail = fabric_vertices_per_rail(spec_, leaves());
  const std::uint64_t vbase = fabric_vertex_base_ + static_cast<std::uint64_t>(k) * per_vrail;
  switch (spec_.inter_topology) {
    case InterTopology::none:
      break;
    case InterTopology::star:
      out.a = nic(j, k);
      out.b = static_cast<VertexId>(vbase);
      break;
    case InterTopology::fat_tree: {
      const int ports = spec_.leaf_switch_ports;
      const int lv = leaves();
      const int up = lv > 1 ? 1 : 0;
      const int leaf = j / (ports + up);
      const int pos = j % (ports + up);
      const int down = std::min(ports, spec_.nodes - leaf * ports);
      const VertexId leaf_v = static_cast<VertexId>(vbase + up + leaf);
      if (pos < down) {
        out.a = nic(leaf * ports + pos, k);
        out.b = leaf_v;
      } else {
        out.a = leaf_v;
        out.b = static_cast<VertexId>(vbase);
        out.bw_bytes_per_s = link.bw_bytes_per_s * down / spec_.oversubscription;
      }
      break;
    }
    case InterTopology::ring:
    case InterTopology::torus2d:
    case InterTopology::torus3d: {
      // Recompute the j-th pair of wire_torus without storing them: walk the dimensions.
      const std::vector<int> dims = spec_.inter_topology == InterTopology::ring
                                        ? std::vector<int>{spec_.nodes}
                                        : spec_.inter_dims;
      int stride = 1;
      std::int64_t left = j;
      for (int dim : dims) {
        const std::int64_t count = dim == 2 ? spec_.nodes / 2 : (dim > 1 ? spec_.nodes : 0);
        if (left < count) {
          int i = 0;
          if (dim == 2) {
            i = static_cast<int>((left / stride) * 2 * stride + left % stride);
          } else {
            i = static_cast<int>(left);
          }
          const int coord = (i / stride) % dim;
          const int next = coord + 1 == dim ? i - coord * stride : i + stride;
          out.a = nic(i, k);
          out.b = nic(next, k);
          break;
        }
        left -= count;
        stride *= dim;
      }
      break;
    }
  }
  return out;
}

std::string ClusterLayout::link_name(LinkId l) const {
  const LayoutLink ll = link(l);
  return vertex(ll.a).name + "--" + vertex(ll.b).name;
}

LinkRole ClusterLayout::role(LinkId l) const {
  return l < fabric_link_base_ ? node_links_[l % links_per_node_].role : LinkRole::fabric;
}

const LinkSpec& ClusterLayout::link_spec(LinkId l) const {
  return l < fabric_link_base_ ? *node_links_[l % links_per_node_].spec : *spec_.inter_link;
}

const LinkCollectiveTraits& ClusterLayout::traits(LinkId l) const {
  switch (role(l)) {
    case LinkRole::intra:
      return spec_.collectives.intra_link;
    case LinkRole::host:
    case LinkRole::nic:
      return spec_.collectives.host_link;
    case LinkRole::fabric:
      return spec_.collectives.inter_link;
  }
  return spec_.collectives.host_link;
}

LinkTransport ClusterLayout::transport(LinkId l) const {
  const LinkRole r = role(l);
  const LinkCollectiveTraits& t = traits(l);
  if (t.transport && r != LinkRole::nic) return *t.transport;
  switch (r) {
    case LinkRole::intra:
      return LinkTransport::nvlink;
    case LinkRole::host:
      return LinkTransport::pcie;
    case LinkRole::nic:
    case LinkRole::fabric:
      return LinkTransport::network;
  }
  return LinkTransport::network;
}

void ClusterLayout::push(LinkId l, bool forward, std::vector<Hop>& hops, double& latency) const {
  hops.push_back(Hop{l, forward});
  latency += link_spec(l).latency_s;
}

void ClusterLayout::intra(int node, std::uint32_t from, std::uint32_t to, std::vector<Hop>& hops,
                          double& latency) const {
  if (from == to) return;
  const std::size_t idx = static_cast<std::size_t>(from) * vertices_per_node_ + to;
  if (intra_latency_[idx] < 0) throw std::invalid_argument("no route inside the node");
  const std::uint64_t base = static_cast<std::uint64_t>(node) * links_per_node_;
  for (const LocalHop& h : intra_routes_[idx])
    hops.push_back(Hop{static_cast<LinkId>(base + h.link), h.forward});
  latency += intra_latency_[idx];
}

LinkId ClusterLayout::fabric_link(int k, std::int64_t index) const {
  return static_cast<LinkId>(fabric_link_base_ +
                             static_cast<std::uint64_t>(k) * fabric_links_per_rail() + index);
}

void ClusterLayout::fabric(int k, int n, int m, std::vector<Hop>& hops, double& latency) const {
  if (n == m) return;
  switch (spec_.inter_topology) {
    case InterTopology::none:
      throw std::invalid_argument("no inter-node fabric");
    case InterTopology::star:
      push(fabric_link(k, n), true, hops, latency);
      push(fabric_link(k, m), false, hops, latency);
      return;
    case InterTopology::fat_tree: {
      const int ports = spec_.leaf_switch_ports;
      const int up = leaves() > 1 ? 1 : 0;
      const int ln = n / ports, lm = m / ports;
      auto down = [&](int node) {
        const int leaf = node / ports;
        return static_cast<std::int64_t>(leaf) * (ports + up) + (node - leaf * ports);
      };
      auto uplink = [&](int leaf) {
        return static_cast<std::int64_t>(leaf) * (ports + up) +
               std::min(ports, spec_.nodes - leaf * ports);
      };
      push(fabric_link(k, down(n)), true, hops, latency);
      if (ln != lm) {
        push(fabric_link(k, uplink(ln)), true, hops, latency);
        push(fabric_link(k, uplink(lm)), false, hops, latency);
      }
      push(fabric_link(k, down(m)), false, hops, latency);
      return;
    }
    case InterTopology::ring:
    case InterTopology::torus2d:
    case InterTopology::torus3d: {
      const std::vector<int> dims = spec_.inter_topology == InterTopology::ring
                                        ? std::vector<int>{spec_.nodes}
                                        : spec_.inter_dims;
      int stride = 1;
      std::int64_t offset = 0;
      int cur = n;
      for (int dim : dims) {
        const std::int64_t count = dim == 2 ? spec_.nodes / 2 : (dim > 1 ? spec_.nodes : 0);
        if (dim > 1) {
          const int from = (cur / stride) % dim, to = (m / stride) % dim;
          const int fwd = ((to - from) % dim + dim) % dim;
          const bool forward = fwd <= dim - fwd;
          const int steps = forward ? fwd : dim - fwd;
          auto index = [&](int i) -> std::int64_t {
            return dim == 2 ? (i / (2 * stride)) * stride + i % stride : i;
          };
          for (int s = 0; s < steps; ++s) {
            const int coord = (cur / stride) % dim;
            if (dim == 2) {
              const int lo = cur - coord * stride;  // the coord-0 member holds the link
              push(fabric_link(k, offset + index(lo)), coord == 0, hops, latency);
              cur = coord == 0 ? cur + stride : lo;
            } else if (forward) {
              push(fabric_link(k, offset + index(cur)), true, hops, latency);
              cur = coord + 1 == dim ? cur - coord * stride : cur + stride;
            } else {
              const int prev = coord == 0 ? cur + (dim - 1) * stride : cur - stride;
              push(fabric_link(k, offset + index(prev)), false, hops, latency);
              cur = prev;
            }
          }
        }
        offset += count;
        stride *= dim;
      }
      return;
    }
  }
}

double ClusterLayout::route(VertexId src, VertexId dst, std::vector<Hop>& hops) const {
  double latency = 0;
  if (src == dst) return 0;
  const int ns = node_of_vertex(src), nd = node_of_vertex(dst);
  auto local = [&](VertexId v) { return v % vertices_per_node_; };
  auto endpoint_ok = [&](VertexId v) {
    if (v >= num_vertices()) return false;
    if (node_of_vertex(v) < 0) {
      for (int k = 0; k < nics_; ++k) {
        if (has_rail_root() && v == rail_root(k)) return true;
      }
      return false;
    }
    const Kind kind = local_kind(local(v));
    return kind != Kind::nic;
  };
  if (!endpoint_ok(src) || !endpoint_ok(dst))
    throw std::invalid_argument(
        "ClusterLayout::route: endpoints are accelerators, hosts, node "
        "switches or rail roots");
  auto acc_local = [&](VertexId v) -> int {
    if (node_of_vertex(v) < 0) return -1;
    return local_kind(local(v)) == Kind::acc ? static_cast<int>(local(v)) - 1 : -1;
  };
  auto rail_of_root = [&](VertexId v) {
    const int per_rail = fabric_vertices_per_rail(spec_, leaves());
    return static_cast<int>((v - fabric_vertex_base_) / static_cast<std::uint64_t>(per_rail));
  };
  if (ns >= 0 && ns == nd) {
    intra(ns, local(src), local(dst), hops, latency);
    return latency;
  }
  if (!fabric_) throw std::invalid_argument("ClusterLayout::route: no inter-node fabric");
  // Up to the rail root (SHARP) or down from it.
  auto up = [&](int k, int node) {
    if (spec_.inter_topology == InterTopology::star) {
      push(fabric_link(k, node), true, hops, latency);
      return;
    }
    const int ports = spec_.leaf_switch_ports;
    const int up1 = leaves() > 1 ? 1 : 0;
    const int leaf = node / ports;
    push(fabric_link(k, static_cast<std::int64_t>(leaf) * (ports + up1) + (node - leaf * ports)),
         true, hops, latency);
    if (up1) {
      push(fabric_link(k, static_cast<std::int64_t>(leaf) * (ports + up1) +
                              std::min(ports, spec_.nodes - leaf * ports)),
           true, hops, latency);
    }
  };
  if (nd < 0) {  // to a rail root
    const int k = rail_of_root(dst);
    intra(ns, local(src), local_nic(k), hops, latency);
    up(k, ns);
    return latency;
  }
  if (ns < 0) {  // from a rail root: the reverse of the way up
    const int k = rail_of_root(src);
    std::vector<Hop> rev;
    double lat = 0;
    std::swap(rev, hops);
    intra(nd, local(dst), local_nic(k), hops, lat);
    up(k, nd);
    std::vector<Hop> down(hops.rbegin(), hops.rend());
    for (Hop& h : down)
      h.forward = !h.forward;
    hops = std::move(rev);
    hops.insert(hops.end(), down.begin(), down.end());
    return lat;
  }
  // Node to node: the destination's rail (PXN) when the destination is an accelerator, else the
  // source accelerator's own rail.
  int k = 0;
  const int ad = acc_local(dst), as = acc_local(src);
  if (spec_.p2p) {
    k = ad >= 0 ? ad % nics_ : (as >= 0 ? as % nics_ : 0);
  } else {
    k = as >= 0 ? as % nics_ : (ad >= 0 ? ad % nics_ : 0);
  }
  intra(ns, local(src), local_nic(k), hops, latency);
  fabric(k, ns, nd, hops, latency);
  intra(nd, local_nic(k), local(dst), hops, latency);
  return latency;
}

Route ClusterLayout::route(VertexId src, VertexId dst) const {
  Route r;
  r.src = src;
  r.dst = dst;
  r.latency_s = route(src, dst, r.hops);
  r.latency = Time::from_seconds(r.latency_s);
  return r;
}

}  // namespace trainsim::sim
