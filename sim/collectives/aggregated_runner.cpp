#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <queue>
#include <span>
#include <unordered_map>

#include "sim/collectives/runners.hpp"
#include "sim/net/max_min.hpp"

namespace trainsim::sim::collectives {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

struct VectorHash {
  std::size_t operator()(const std::vector<std::uint64_t>& v) const {
    std::uint64_t h = 1469598103934665603ull;
    for (std::uint64_t x : v) {
      h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h *= 1099511628211ull;
    }
    return static_cast<std::size_t>(h);
  }
};

// One leg of a message in a phase (a message staged through host memory has two).
struct Leg {
  double latency_s = 0;
  double bytes = 0;  // on the wire
  double cap = 0;    // on the wire; 0: none
  double weight = 1;
  double receiver_compute_s = 0;             // on the last leg
  std::uint32_t res_begin = 0, res_end = 0;  // into the phase's resource list
  std::int32_t dst = -1;                     // receiving endpoint (last leg)
  std::uint32_t next = kNone;                // the leg that starts when this one ends
  bool first = true;                         // starts at the phase start
};

class Aggregator {
 public:
  Aggregator(const ClusterLayout& layout, const Plan& plan)
      : layout_(layout), plan_(plan), schedule_(plan.schedule) {
    const int e = schedule_.endpoints();
    for (int i = 0; i < e; ++i)
      vertex_.push_back(endpoint_vertex(layout, plan, i));
    if (!layout.spec().p2p) {
      for (int r = 0; r < schedule_.ranks(); ++r)
        staging_.push_back(
            layout.host(layout.node_of_vertex(vertex_[static_cast<std::size_t>(r)])));
    }
    const std::size_t links = layout.num_links();
    bytes_.assign(2 * links, 0.0);
    slot_.assign(2 * links, kNone);
    half_.resize(links, 0);
    cap_.resize(links, 0);
    for (std::size_t l = 0; l < links; ++l) {
      const LayoutLink ll = layout.link(static_cast<LinkId>(l));
      half_[l] = ll.duplex == Duplex::half;
      cap_[l] = ll.bw_bytes_per_s;
    }
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
      if (key_time[k] < 0) {
        schedule_.build(p, phase_);
        const Phase& ph = phase_;
        for (const Transfer& t : ph.transfers)
          out.messages += key_count[k] * static_cast<std::uint64_t>(t.multiplicity);
        key_time[k] = solve_phase(ph, static_cast<double>(key_count[k]));
      }
      out.time_s += key_time[k];
    }
    out.events = events_;
    for (std::size_t l = 0; l < layout_.num_links(); ++l) {
      const double b = bytes_[2 * l] + bytes_[2 * l + 1];
      if (b > 0) out.link_bytes.emplace_back(static_cast<LinkId>(l), b);
    }
    return out;
  }

 private:
  std::uint32_t resource(const Hop& h) const {
    return 2 * h.link + ((half_[h.link] || h.forward) ? 0 : 1);
  }

  void add_leg(VertexId from, VertexId to, const Transfer& t, double repeats, bool first,
               bool last) {
    hops_.clear();
    const double route_latency = layout_.route(from, to, hops_);
    const MessageCost cost = message_cost(layout_, plan_.protocol, hops_, route_latency);
    Leg leg;
    leg.latency_s = t.follower ? 0.0 : cost.latency_s;
    leg.bytes = t.bytes * cost.wire_per_byte;
    leg.cap = t.max_rate_bytes_per_s > 0 ? t.max_rate_bytes_per_s * cost.wire_per_byte : 0;
    // As the message-level run: equal shares for a library's GPU copies, CM02's 1 / latency for
    // plain message schedules.
    leg.weight = (plan_.protocol.modeled || cost.latency_s <= 0 ? 1.0 : 1.0 / cost.latency_s) *
                 t.multiplicity;
    leg.first = first;
    if (last) {
      leg.dst = t.dst;
      leg.receiver_compute_s = t.receiver_compute_s;
    }
    leg.res_begin = static_cast<std::uint32_t>(res_.size());
    for (const Hop& h : hops_) {
      const std::uint32_t r = resource(h);
      res_.push_back(r);
      bytes_[r] += leg.bytes * repeats;
    }
    leg.res_end = static_cast<std::uint32_t>(res_.size());
    legs_.push_back(leg);
  }

  // Union-find over legs.
  std::uint32_t find(std::uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void unite(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (a < b) std::swap(a, b);
    parent_[a] = b;  // the smaller index is the root: deterministic
  }

  double solve_phase(const Phase& ph, double repeats) {
    ++events_;
    if (ph.transfers.empty()) return ph.compute_s;
    legs_.clear();
    res_.clear();
    for (const Transfer& t : ph.transfers) {
      const auto src = static_cast<std::size_t>(t.src), dst = static_cast<std::size_t>(t.dst);
      if (src < staging_.size() && dst < staging_.size() && staging_[src] == staging_[dst]) {
        const auto first = static_cast<std::uint32_t>(legs_.size());
        add_leg(vertex_[src], staging_[src], t, repeats, true, false);
        add_leg(staging_[dst], vertex_[dst], t, repeats, false, true);
        legs_[first].next = first + 1;
      } else {
        add_leg(vertex_[src], vertex_[dst], t, repeats, true, true);
      }
    }
    // Connected groups: legs sharing a link direction, the two legs of a staged message, and
    // messages into one receiver that runs a kernel on each (they queue on its accelerator).
    const auto nl = static_cast<std::uint32_t>(legs_.size());
    parent_.resize(nl);
    std::iota(parent_.begin(), parent_.end(), 0u);
    std::vector<std::uint32_t> touched;
    std::unordered_map<std::int32_t, std::uint32_t> compute_dst;
    for (std::uint32_t i = 0; i < nl; ++i) {
      const Leg& g = legs_[i];
      if (g.next != kNone) unite(i, g.next);
      for (std::uint32_t j = g.res_begin; j < g.res_end; ++j) {
        std::uint32_t& s = slot_[res_[j]];
        if (s == kNone) {
          s = i;
          touched.push_back(res_[j]);
        } else {
          unite(i, s);
        }
      }
      if (g.receiver_compute_s > 0) {
        auto [it, fresh] = compute_dst.emplace(g.dst, i);
        if (!fresh) unite(i, it->second);
      }
    }
    for (std::uint32_t r : touched)
      slot_[r] = kNone;
    // Members of each group, in leg order.
    std::vector<std::uint32_t>& order = order_;
    order.resize(nl);
    std::iota(order.begin(), order.end(), 0u);
    std::vector<std::uint32_t>& root = root_;
    root.resize(nl);
    for (std::uint32_t i = 0; i < nl; ++i)
      root[i] = find(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return root[a] < root[b]; });
    double end = 0;
    std::size_t begin = 0;
    std::vector<std::uint64_t> sig;
    while (begin < order.size()) {
      std::size_t stop = begin;
      while (stop < order.size() && root[order[stop]] == root[order[begin]])
        ++stop;
      const std::span<const std::uint32_t> group(order.data() + begin, stop - begin);
      signature(group, sig);
      auto it = solved_.find(sig);
      if (it == solved_.end()) it = solved_.emplace(sig, solve_group(group)).first;
      end = std::max(end, it->second);
      begin = stop;
    }
    return ph.compute_s + end;
  }

  // The group as a canonical sequence: its legs in order with their parameters, link directions
  // numbered by first appearance (with capacities), receivers numbered by first appearance.
  void signature(std::span<const std::uint32_t> group, std::vector<std::uint64_t>& sig) {
    sig.clear();
    local_res_.clear();
    local_dst_.clear();
    for (std::uint32_t i : group) {
      const Leg& g = legs_[i];
      sig.push_back(bits(g.latency_s));
      sig.push_back(bits(g.bytes));
      sig.push_back(bits(g.cap));
      sig.push_back(bits(g.receiver_compute_s));
      sig.push_back(g.first ? 1 : 0);
      sig.push_back(bits(g.weight));
      std::uint64_t d = ~0ull;
      if (g.dst >= 0) d = local_dst_.emplace(g.dst, local_dst_.size()).first->second;
      sig.push_back(d);
      sig.push_back(g.next == kNone ? ~0ull : static_cast<std::uint64_t>(g.next - i));
      sig.push_back(g.res_end - g.res_begin);
      for (std::uint32_t j = g.res_begin; j < g.res_end; ++j) {
        const std::uint32_t r = res_[j];
        auto [it, fresh] = local_res_.emplace(r, local_res_.size());
        sig.push_back(it->second);
        if (fresh) sig.push_back(bits(cap_[r / 2]));
      }
    }
  }

  struct Flow {
    double start_s = 0;
    double remaining = 0;
    double rate = 0;
    double done_s = -1;
    MaxMinSolver::VarId var = MaxMinSolver::kNoVar;
  };

  // Fluid max-min run of one group's legs; returns when its last message has been processed.
  double solve_group(std::span<const std::uint32_t> group) {
    MaxMinSolver solver;
    std::unordered_map<std::uint32_t, MaxMinSolver::ResourceId> res;
    std::vector<std::vector<MaxMinSolver::ResourceId>> flow_res(group.size());
    std::unordered_map<std::uint32_t, std::uint32_t> index;  // leg -> position in group
    for (std::uint32_t i = 0; i < group.size(); ++i)
      index.emplace(group[i], i);
    std::vector<Flow> flows(group.size());
    using Start = std::pair<double, std::uint32_t>;
    std::priority_queue<Start, std::vector<Start>, std::greater<>> starts;
    for (std::uint32_t i = 0; i < group.size(); ++i) {
      const Leg& g = legs_[group[i]];
      for (std::uint32_t j = g.res_begin; j < g.res_end; ++j) {
        auto [it, fresh] = res.emplace(res_[j], 0);
        if (fresh) it->second = solver.add_resource(cap_[res_[j] / 2]);
        flow_res[i].push_back(it->second);
      }
      if (g.cap > 0) flow_res[i].push_back(solver.add_resource(g.cap));
      flows[i].remaining = g.bytes;
      if (g.first) {
        flows[i].start_s = g.latency_s;
        starts.emplace(g.latency_s, i);
      }
    }
    std::vector<std::uint32_t> var_owner;
    std::vector<std::uint32_t> active;
    double now = 0;
    const double inf = std::numeric_limits<double>::infinity();
    while (!starts.empty() || !active.empty()) {
      ++events_;
      double t_next = starts.empty() ? inf : starts.top().first;
      for (std::uint32_t i : active) {
        if (flows[i].rate > 0) t_next = std::min(t_next, now + flows[i].remaining / flows[i].rate);
      }
      const double dt = t_next - now;
      const double tol = 1e-12 * std::max(t_next, 1e-9);
      std::size_t w = 0;
      for (std::uint32_t i : active) {
        Flow& f = flows[i];
        const double fin = now + f.remaining / f.rate;
        if (fin <= t_next + tol) {
          f.done_s = t_next;
          solver.remove_variable(f.var);
          const Leg& g = legs_[group[i]];
          if (g.next != kNone) {
            const std::uint32_t nx = index.at(g.next);
            flows[nx].start_s = t_next + legs_[g.next].latency_s;
            starts.emplace(flows[nx].start_s, nx);
          }
        } else {
          f.remaining -= f.rate * dt;
          active[w++] = i;
        }
      }
      active.resize(w);
      now = t_next;
      while (!starts.empty() && starts.top().first <= now + tol) {
        const std::uint32_t i = starts.top().second;
        starts.pop();
        Flow& f = flows[i];
        if (f.remaining <= 0 || flow_res[i].empty()) {
          f.done_s = now;
          const Leg& g = legs_[group[i]];
          if (g.next != kNone) {
            const std::uint32_t nx = index.at(g.next);
            flows[nx].start_s = now + legs_[g.next].latency_s;
            starts.emplace(flows[nx].start_s, nx);
          }
          continue;
        }
        f.var = solver.add_variable(legs_[group[i]].weight, flow_res[i]);
        if (var_owner.size() <= f.var) var_owner.resize(f.var + 1);
        var_owner[f.var] = i;
        f.rate = 0;
        active.push_back(i);
      }
      solver.solve([&](MaxMinSolver::VarId v, double rate) { flows[var_owner[v]].rate = rate; });
    }
    // Receivers process arrivals in order on their accelerator.
    std::vector<std::uint32_t> order;
    for (std::uint32_t i = 0; i < group.size(); ++i) {
      if (legs_[group[i]].dst >= 0) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Leg& x = legs_[group[a]];
      const Leg& y = legs_[group[b]];
      return x.dst < y.dst || (x.dst == y.dst && flows[a].done_s < flows[b].done_s);
    });
    double end = 0, busy = 0;
    std::int32_t dst = -1;
    for (std::uint32_t i : order) {
      const Leg& g = legs_[group[i]];
      if (g.dst != dst) {
        dst = g.dst;
        busy = 0;
      }
      busy = std::max(busy, flows[i].done_s) + g.receiver_compute_s;
      end = std::max(end, busy);
    }
    return end;
  }

  const ClusterLayout& layout_;
  const Plan& plan_;
  const Schedule& schedule_;
  std::vector<VertexId> vertex_;
  std::vector<VertexId> staging_;
  std::vector<double> bytes_;        // per link direction, over the whole run
  std::vector<std::uint32_t> slot_;  // scratch: first leg on a link direction
  std::vector<char> half_;
  std::vector<double> cap_;
  Phase phase_;  // scratch, reused
  std::vector<std::uint32_t> order_, root_;
  std::vector<Leg> legs_;
  std::vector<std::uint32_t> res_;
  std::vector<std::uint32_t> parent_;
  std::vector<Hop> hops_;
  std::unordered_map<std::uint32_t, std::uint64_t> local_res_;
  std::unordered_map<std::int32_t, std::uint64_t> local_dst_;
  std::unordered_map<std::vector<std::uint64_t>, double, VectorHash> solved_;
  std::uint64_t events_ = 0;
};

}  // namespace

RunOutput run_aggregated(const ClusterLayout& layout, const Plan& plan) {
  Aggregator a(layout, plan);
  return a.run();
}

}  // namespace trainsim::sim::collectives
