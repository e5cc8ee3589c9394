#include "sim/net/routing.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>

namespace trainsim::sim {

const Route& Router::route(VertexId src, VertexId dst) {
  if (src >= topology_.num_vertices() || dst >= topology_.num_vertices()) {
    throw std::invalid_argument("Router::route: unknown vertex");
  }
  const std::uint64_t key = (std::uint64_t{src} << 32) | dst;
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, compute(src, dst)).first;
  return it->second;
}

Route Router::compute(VertexId src, VertexId dst) {
  Route route;
  route.src = src;
  route.dst = dst;
  if (src == dst) return route;

  const TopologyGraph& g = topology_.graph();
  const std::size_t n = topology_.num_vertices();
  if (hops_.size() < n) {
    hops_.resize(n);
    latency_ps_.resize(n);
    pred_link_.resize(n);
    visit_epoch_.resize(n, 0);
    settled_epoch_.resize(n, 0);
  }
  ++epoch_;

  // Lexicographic cost (hops, latency ps); ties pop the lowest vertex id first.
  using Entry = std::tuple<std::uint32_t, std::int64_t, VertexId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  hops_[src] = 0;
  latency_ps_[src] = 0;
  pred_link_[src] = -1;
  visit_epoch_[src] = epoch_;
  queue.emplace(0, 0, src);

  auto other_end = [&](const LinkProps& l, VertexId v) { return l.a == v ? l.b : l.a; };
  while (!queue.empty()) {
    const auto [h, lat, u] = queue.top();
    queue.pop();
    if (settled_epoch_[u] == epoch_) continue;
    settled_epoch_[u] = epoch_;
    if (u == dst) break;
    const VertexProps& up = g[u];
    if (u != src && !up.transit) continue;
    bool from_inside = false;  // gateway rule: entered from its own node, so it must leave it
    if (u != src && up.gateway) {
      const LinkProps& pl = topology_.link(static_cast<LinkId>(pred_link_[u]));
      from_inside = g[other_end(pl, u)].node == up.node;
    }
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      const LinkProps& l = g[*e];
      const VertexId w = other_end(l, u);
      if (settled_epoch_[w] == epoch_) continue;
      if (from_inside && g[w].node == up.node) continue;
      const std::uint32_t nh = h + 1;
      const std::int64_t nl = lat + Time::from_seconds(l.latency_s).picoseconds();
      if (visit_epoch_[w] != epoch_ || std::tie(nh, nl) < std::tie(hops_[w], latency_ps_[w])) {
        visit_epoch_[w] = epoch_;
        hops_[w] = nh;
        latency_ps_[w] = nl;
        pred_link_[w] = l.id;
        queue.emplace(nh, nl, w);
      }
    }
  }
  if (settled_epoch_[dst] != epoch_) {
    throw std::runtime_error("no route from " + g[src].name + " to " + g[dst].name);
  }
  for (VertexId v = dst; v != src;) {
    const LinkProps& l = topology_.link(static_cast<LinkId>(pred_link_[v]));
    const VertexId prev = other_end(l, v);
    route.hops.push_back(Hop{l.id, l.a == prev});
    v = prev;
  }
  std::reverse(route.hops.begin(), route.hops.end());
  for (const Hop& hop : route.hops)
    route.latency_s += topology_.link(hop.link).latency_s;
  route.latency = Time::from_seconds(route.latency_s);
  return route;
}

}  // namespace trainsim::sim
