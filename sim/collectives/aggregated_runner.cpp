#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "sim/collectives/runners.hpp"
#include "sim/net/cluster_topology.hpp"
#include "sim/net/max_min.hpp"
#include "sim/net/routing.hpp"

namespace trainsim::sim::collectives {

namespace {

// A link of the real cluster named by (node, class): class < per_node is the node's own link of
// that index (the builder wires every node alike), the rest are the node's links to the star
// switches, in order.
struct TemplateHop {
  std::uint32_t link_class;
  bool forward;
  bool at_dst;  // on the destination's node (else the source's)
};

struct TemplateRoute {
  std::vector<TemplateHop> hops;
  double latency_s = 0;
  double weight = 1;
};

class Aggregator {
 public:
  Aggregator(const ClusterSpec& cluster, const Schedule& schedule)
      : schedule_(schedule),
        nodes_(cluster.nodes),
        apn_(cluster.accelerators_per_node),
        tmpl_(build_cluster_topology(two_nodes(cluster))),
        router_(tmpl_.topology) {
    const Topology& topo = tmpl_.topology;
    const int tnodes = std::min(cluster.nodes, 2);
    // Per-node links come first, node by node, then the fabric.
    std::size_t per_node = 0;
    while (per_node < topo.num_links() &&
           topo.vertex(topo.link(static_cast<LinkId>(per_node)).a).node == 0 &&
           topo.vertex(topo.link(static_cast<LinkId>(per_node)).b).node == 0) {
      ++per_node;
    }
    per_node_ = per_node;
    class_of_.resize(topo.num_links());
    node_of_.resize(topo.num_links());
    std::vector<std::uint32_t> fabric_count(static_cast<std::size_t>(tnodes), 0);
    for (LinkId l = 0; l < topo.num_links(); ++l) {
      const LinkProps& lp = topo.link(l);
      const int na = topo.vertex(lp.a).node, nb = topo.vertex(lp.b).node;
      if (l < per_node * static_cast<std::size_t>(tnodes)) {
        const int n = static_cast<int>(l / per_node);
        if (na != n || nb != n) throw std::logic_error("aggregated run: unexpected link layout");
        class_of_[l] = static_cast<std::uint32_t>(l - static_cast<std::size_t>(n) * per_node);
        node_of_[l] = n;
      } else {
        const int n = na >= 0 ? na : nb;
        if (n < 0 || (na >= 0 && nb >= 0))
          throw std::logic_error("aggregated run: fabric link between nodes");
        class_of_[l] =
            static_cast<std::uint32_t>(per_node) + fabric_count[static_cast<std::size_t>(n)]++;
        node_of_[l] = n;
      }
    }
    classes_ = static_cast<std::uint32_t>(per_node) + (fabric_count.empty() ? 0 : fabric_count[0]);
    class_link_.assign(classes_, 0);
    for (LinkId l = 0; l < topo.num_links(); ++l) {
      if (node_of_[l] == 0) class_link_[class_of_[l]] = l;
    }
    const std::size_t resources = static_cast<std::size_t>(nodes_) * classes_ * 2;
    solver_slot_.assign(resources, kNone);
    bytes_.assign(resources, 0.0);
  }

  RunOutput run() {
    RunOutput out;
    const std::size_t n = schedule_.num_phases();
    std::vector<double> key_time(schedule_.num_keys(), -1);
    std::vector<std::uint64_t> key_count(schedule_.num_keys(), 0);
    for (std::size_t p = 0; p < n; ++p)
      ++key_count[schedule_.key(p)];
    for (std::size_t p = 0; p < n; ++p) {
      const std::uint32_t k = schedule_.key(p);
      if (key_time[k] < 0)
        key_time[k] = solve_phase(schedule_.build(p), static_cast<double>(key_count[k]));
      out.time_s += key_time[k];
    }
    out.events = events_;
    const Topology& topo = tmpl_.topology;
    for (std::size_t r = 0; r < bytes_.size(); r += 2) {
      const double b = bytes_[r] + bytes_[r + 1];
      if (b <= 0) continue;
      const std::size_t id = r / 2;
      const int node = static_cast<int>(id / classes_);
      const LinkId l = class_link_[id % classes_];
      std::string name = topo.link(l).name;
      const std::string from = "n0.", to = "n" + std::to_string(node) + ".";
      for (std::size_t pos = 0; (pos = name.find(from, pos)) != std::string::npos;
           pos += to.size()) {
        name.replace(pos, from.size(), to);
      }
      out.link_bytes.push_back({std::move(name), b});
    }
    return out;
  }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  static ClusterSpec two_nodes(ClusterSpec c) {
    c.nodes = std::min(c.nodes, 2);
    return c;
  }

  // Endpoint -> (node, template vertex on template node `tnode`).
  int node_of_endpoint(int ep) const {
    return ep < schedule_.ranks() ? ep / apn_ : ep - schedule_.ranks();
  }
  VertexId template_vertex(int ep, int tnode) const {
    if (ep < schedule_.ranks()) return tmpl_.accelerator(tnode * apn_ + ep % apn_);
    return tmpl_.host(tnode);
  }

  const TemplateRoute& route(int src, int dst) {
    const bool same = node_of_endpoint(src) == node_of_endpoint(dst);
    const int sl = src < schedule_.ranks() ? src % apn_ : apn_;
    const int dl = dst < schedule_.ranks() ? dst % apn_ : apn_;
    const std::uint64_t key = (static_cast<std::uint64_t>(sl) << 33) |
                              (static_cast<std::uint64_t>(dl) << 1) | (same ? 1 : 0);
    auto it = routes_.find(key);
    if (it != routes_.end()) return it->second;
    const Route& r = router_.route(template_vertex(src, 0), template_vertex(dst, same ? 0 : 1));
    TemplateRoute t;
    for (const Hop& h : r.hops)
      t.hops.push_back({class_of_[h.link], h.forward, node_of_[h.link] == 1});
    t.latency_s = r.latency_s;
    t.weight = r.latency_s > 0 ? 1.0 / r.latency_s : 1.0;
    return routes_.emplace(key, std::move(t)).first->second;
  }

  std::size_t resource_id(int node, const TemplateHop& h) const {
    const LinkProps& lp = tmpl_.topology.link(class_link_[h.link_class]);
    const bool dir = lp.duplex == Duplex::full && !h.forward;
    return (static_cast<std::size_t>(node) * classes_ + h.link_class) * 2 + (dir ? 1 : 0);
  }

  struct Flow {
    double start_s;
    double remaining;
    double bytes;
    double rate = 0;
    double receiver_compute_s;
    std::int32_t dst;
    std::vector<MaxMinSolver::ResourceId> resources;
    double weight;
    MaxMinSolver::VarId var = MaxMinSolver::kNoVar;
    double done_s = -1;
  };

  // Fluid max-min run of one phase's flows, all starting at 0; returns the phase's duration.
  double solve_phase(const Phase& ph, double repeats) {
    ++events_;
    if (ph.transfers.empty()) return ph.compute_s;
    MaxMinSolver solver;
    std::vector<std::size_t> used;
    std::vector<Flow> flows;
    flows.reserve(ph.transfers.size());
    for (const Transfer& t : ph.transfers) {
      const TemplateRoute& r = route(t.src, t.dst);
      Flow f{r.latency_s, t.bytes, t.bytes, 0, t.receiver_compute_s, t.dst, {}, r.weight};
      const int sn = node_of_endpoint(t.src), dn = node_of_endpoint(t.dst);
      for (const TemplateHop& h : r.hops) {
        const std::size_t id = resource_id(h.at_dst ? dn : sn, h);
        if (solver_slot_[id] == kNone) {
          const LinkProps& lp = tmpl_.topology.link(class_link_[h.link_class]);
          solver_slot_[id] = solver.add_resource(lp.bw_bytes_per_s);
          used.push_back(id);
        }
        f.resources.push_back(solver_slot_[id]);
        bytes_[id] += t.bytes * repeats;
      }
      flows.push_back(std::move(f));
    }
    std::vector<std::uint32_t> order(flows.size());
    for (std::uint32_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return flows[a].start_s < flows[b].start_s;
    });
    std::vector<std::uint32_t> var_owner;
    std::vector<std::uint32_t> active;
    std::size_t next = 0;
    double now = 0;
    const double inf = std::numeric_limits<double>::infinity();
    while (next < order.size() || !active.empty()) {
      ++events_;
      // Next transition: a flow ends its latency, or one delivers its last byte.
      double t_next = next < order.size() ? flows[order[next]].start_s : inf;
      for (std::uint32_t i : active) {
        if (flows[i].rate > 0) t_next = std::min(t_next, now + flows[i].remaining / flows[i].rate);
      }
      const double dt = t_next - now;
      const double tol = 1e-12 * std::max(t_next, 1e-9);
      std::size_t w = 0;
      for (std::uint32_t i : active) {
        Flow& f = flows[i];
        const double end = now + f.remaining / f.rate;
        if (end <= t_next + tol) {
          f.done_s = t_next;
          solver.remove_variable(f.var);
        } else {
          f.remaining -= f.rate * dt;
          active[w++] = i;
        }
      }
      active.resize(w);
      now = t_next;
      while (next < order.size() && flows[order[next]].start_s <= now + tol) {
        Flow& f = flows[order[next++]];
        if (f.bytes <= 0 || f.resources.empty()) {
          f.done_s = now;
          continue;
        }
        f.var = solver.add_variable(f.weight, f.resources);
        if (var_owner.size() <= f.var) var_owner.resize(f.var + 1);
        var_owner[f.var] = static_cast<std::uint32_t>(&f - flows.data());
        f.rate = 0;
        active.push_back(var_owner[f.var]);
      }
      solver.solve([&](MaxMinSolver::VarId v, double rate) { flows[var_owner[v]].rate = rate; });
    }
    for (std::size_t id : used)
      solver_slot_[id] = kNone;
    // Receivers process arrivals in order on their accelerator.
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return flows[a].dst < flows[b].dst ||
             (flows[a].dst == flows[b].dst && flows[a].done_s < flows[b].done_s);
    });
    double end = 0, busy = 0;
    std::int32_t dst = -1;
    for (std::uint32_t i : order) {
      const Flow& f = flows[i];
      if (f.dst != dst) {
        dst = f.dst;
        busy = 0;
      }
      busy = std::max(busy, f.done_s) + f.receiver_compute_s;
      end = std::max(end, busy);
    }
    return ph.compute_s + end;
  }

  const Schedule& schedule_;
  int nodes_ = 1;
  int apn_ = 1;
  ClusterTopology tmpl_;
  Router router_;
  std::size_t per_node_ = 0;
  std::uint32_t classes_ = 0;
  std::vector<std::uint32_t> class_of_;
  std::vector<int> node_of_;
  std::vector<LinkId> class_link_;
  std::vector<std::uint32_t> solver_slot_;
  std::vector<double> bytes_;
  std::map<std::uint64_t, TemplateRoute> routes_;
  std::uint64_t events_ = 0;
};

}  // namespace

bool aggregation_supported(const ClusterSpec& cluster) {
  // Staging through host memory without peer-to-peer is modelled message by message only.
  if (!cluster.p2p && cluster.accelerators_per_node > 1) return false;
  return cluster.inter_topology == InterTopology::star ||
         cluster.inter_topology == InterTopology::none;
}

RunOutput run_aggregated(const ClusterSpec& cluster, const Schedule& schedule) {
  Aggregator a(cluster, schedule);
  return a.run();
}

}  // namespace trainsim::sim::collectives
