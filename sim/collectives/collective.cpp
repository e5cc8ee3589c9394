#include "sim/collectives/collective.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/process.hpp"
#include "sim/collectives/runners.hpp"
#include "sim/core/input_error.hpp"
#include "sim/net/cluster_topology.hpp"

namespace trainsim::sim::collectives {

namespace {

// Above this many ranks the automatic choice aggregates phases: the message-level run costs
// O(P x phases) memory and time (0.6 s for a 256-rank NCCL ring on DGX H100 nodes against 1 ms
// aggregated, bench_collectives), and both agree on symmetric schedules (trees within 1%).
constexpr int kAutoExactMaxRanks = 64;
// The message-level run keeps per-phase, per-endpoint counters: refuse what would not fit.
constexpr double kExactMaxCells = 4e8;
// Messages of one phase the aggregated run materializes (all-to-all grows as P^2).
constexpr double kMaxPhaseMessages = 5e7;

ClusterSpec trimmed(const ClusterSpec& c, int max_rank) {
  ClusterSpec t = c;
  // Unused nodes past the group change nothing on a star or a leaf-spine tree (filled in order);
  // rings and tori keep their shape.
  if (c.inter_topology == InterTopology::star || c.inter_topology == InterTopology::fat_tree) {
    t.nodes = std::max(1, max_rank / c.accelerators_per_node + 1);
  }
  return t;
}

std::vector<int> group_of(const CollectiveSpec& spec, int total, const std::string& cluster) {
  if (!spec.group.empty()) return spec.group;
  const int ranks = spec.ranks == 0 ? total : spec.ranks;
  if (ranks < 1 || ranks > total) {
    throw InputError("--ranks", std::to_string(spec.ranks) + " is not between 1 and the " +
                                    std::to_string(total) + " accelerators of cluster '" + cluster +
                                    "'");
  }
  std::vector<int> g(static_cast<std::size_t>(ranks));
  std::iota(g.begin(), g.end(), 0);
  return g;
}

struct Candidate {
  Algorithm algorithm;
  Protocol protocol;
};

// What NCCL's tuner chooses among for `spec` (its algorithms for the op and fabric, each enabled
// protocol); the caller runs them all and keeps the fastest.
std::vector<Candidate> candidates(const ClusterSpec& c, const CollectiveSpec& spec,
                                  const RankMap& map) {
  std::vector<Algorithm> algs;
  if (spec.algorithm != Algorithm::automatic) {
    algs.push_back(spec.algorithm);
  } else if (spec.op == Op::allreduce) {
    algs.push_back(Algorithm::ring);
    if (map.contiguous_nodes && c.collectives.library != CollectiveLibrary::none)
      algs.push_back(Algorithm::double_binary_tree);
    if (c.collectives.nvls && c.collectives.library == CollectiveLibrary::nccl && map.nodes == 1 &&
        c.p2p && c.intra_topology == IntraTopology::switched)
      algs.push_back(Algorithm::nvls);
    if (c.collectives.sharp && map.contiguous_nodes && map.nodes > 1 &&
        (c.inter_topology == InterTopology::star || c.inter_topology == InterTopology::fat_tree))
      algs.push_back(Algorithm::collnet);
  } else {
    algs.push_back(Algorithm::ring);
  }
  std::vector<Candidate> out;
  for (Algorithm a : algs) {
    const AlgoFamily f = algorithm_family(a);
    if (spec.protocol) {
      out.push_back({a, *spec.protocol});
      continue;
    }
    for (Protocol p : kAllProtocols) {
      if (protocol_enabled(c, f, p)) out.push_back({a, p});
    }
  }
  return out;
}

struct Prepared {
  ClusterSpec cluster;
  RankMap map;
};

Prepared prepare(const ClusterSpec& cluster, const CollectiveSpec& spec) {
  const int total = cluster.total_accelerators();
  const std::vector<int> members = group_of(spec, total, cluster.name);
  if (!(spec.bytes > 0) || !std::isfinite(spec.bytes)) {
    throw InputError("--bytes", std::to_string(spec.bytes) + " is not a positive size");
  }
  if (spec.chunks < 0) throw InputError("--chunks", std::to_string(spec.chunks) + " is negative");
  if (spec.protocol && cluster.collectives.library == CollectiveLibrary::none) {
    throw InputError("--protocol", std::string(protocol_name(*spec.protocol)) + ": cluster '" +
                                       cluster.name +
                                       "' has no collective library (its profile's "
                                       "collectives.library is none)");
  }
  Prepared p;
  p.cluster = trimmed(cluster, *std::max_element(members.begin(), members.end()));
  p.map = make_rank_map(p.cluster, members);
  if (spec.charge_kernels && !p.cluster.accelerator.peak(spec.dtype)) {
    throw InputError("--dtype", std::string(cluster.accelerator.name) + " has no " +
                                    dtype_name(spec.dtype) + " compute path");
  }
  return p;
}

struct Ran {
  RunOutput out;
  bool aggregated = false;
};

Ran run_plan(const ClusterLayout& layout, const Plan& plan, const CollectiveSpec& spec,
             const std::string& cluster_name) {
  const Schedule& s = plan.schedule;
  const int ranks = s.ranks();
  bool aggregate = false;
  if (spec.exact || spec.model == Model::exact) {
    aggregate = false;
  } else if (spec.model == Model::aggregated) {
    aggregate = true;
  } else {
    aggregate = ranks > kAutoExactMaxRanks;
  }
  if (!aggregate && static_cast<double>(s.num_phases()) * s.endpoints() > kExactMaxCells) {
    throw InputError("--exact", "a message-level run of " + std::to_string(s.num_phases()) +
                                    " phases on " + std::to_string(ranks) +
                                    " ranks is too large; use the aggregated model");
  }
  if (spec.op == Op::alltoall && static_cast<double>(ranks) * (ranks - 1) > kMaxPhaseMessages) {
    throw InputError("--op alltoall", std::to_string(ranks) + " ranks on cluster '" + cluster_name +
                                          "' are " +
                                          std::to_string(static_cast<double>(ranks) * (ranks - 1)) +
                                          " concurrent messages, more than this model runs");
  }
  Ran r;
  r.aggregated = aggregate;
  r.out = aggregate ? run_aggregated(layout, plan) : run_exact(layout, plan);
  return r;
}

}  // namespace

double busbw_factor(Op op, int ranks) {
  const double p = ranks;
  switch (op) {
    case Op::allreduce:
      return 2 * (p - 1) / p;
    case Op::allgather:
    case Op::reduce_scatter:
    case Op::alltoall:
      return (p - 1) / p;
    case Op::broadcast:
      return 1;
  }
  return 1;
}

VertexId endpoint_vertex(const ClusterLayout& layout, const Plan& plan, int e) {
  const Schedule& s = plan.schedule;
  if (e < s.ranks()) return layout.accelerator(plan.map.members[static_cast<std::size_t>(e)]);
  if (e < s.ranks() + s.hosts()) return layout.host(e - s.ranks());
  const int sw = e - s.ranks() - s.hosts();
  if (plan.switches == SwitchKind::node_switch)
    return layout.node_switch(plan.map.node_id[static_cast<std::size_t>(sw)]);
  return layout.rail_root(sw);
}

MessageCost message_cost(const ClusterLayout& layout, const ProtocolParams& protocol,
                         const std::vector<Hop>& hops, double route_latency_s) {
  MessageCost c;
  double efficiency = 1;
  bool net = false, nvlink = false;
  for (const Hop& h : hops) {
    efficiency = std::min(efficiency, layout.traits(h.link).efficiency);
    const LinkTransport t = layout.transport(h.link);
    net = net || t == LinkTransport::network;
    nvlink = nvlink || t == LinkTransport::nvlink;
  }
  c.latency_s = route_latency_s;
  c.wire_per_byte = 1 / efficiency;
  if (protocol.modeled && !hops.empty()) {
    const LinkTransport cls = net      ? LinkTransport::network
                              : nvlink ? LinkTransport::nvlink
                                       : LinkTransport::pcie;
    c.latency_s = std::max(route_latency_s, protocol.step_latency_s[static_cast<std::size_t>(cls)]);
    c.wire_per_byte /= protocol.wire_efficiency;
  }
  return c;
}

RunOutput run_exact(const ClusterLayout& layout, const Plan& plan) {
  Engine engine;
  const ClusterTopology topo = build_cluster_topology(layout.spec());
  FlowNetwork net(engine, topo.topology);
  CollectiveProcess process(engine, net, layout, plan);
  process.start({});
  engine.run();
  RunOutput out;
  out.time_s = process.duration_s();
  out.events = engine.stats().events_executed;
  out.messages = process.messages();
  for (LinkId l = 0; l < topo.topology.num_links(); ++l) {
    const double b = net.link_bytes(l);
    if (b > 0) out.link_bytes.emplace_back(l, b);
  }
  return out;
}

namespace {

struct Chosen {
  Plan plan;
  Ran ran;
};

// Runs every candidate and keeps the fastest (ties: the first, i.e. ring before tree, LL first).
Chosen choose(const ClusterLayout& layout, const Prepared& prep, const CollectiveSpec& spec,
              const KernelCosts& kernels, const std::string& name) {
  std::vector<Candidate> cands = candidates(prep.cluster, spec, prep.map);
  // An algorithm the library runs with no protocol on this cluster: build it to get its reason.
  if (cands.empty()) cands.push_back({spec.algorithm, Protocol::simple});
  std::optional<Chosen> best;
  for (const Candidate& cand : cands) {
    CollectiveSpec s = spec;
    s.algorithm = cand.algorithm;
    Plan plan = build_plan(prep.cluster, s, prep.map, kernels, cand.protocol);
    Ran ran = run_plan(layout, plan, s, name);
    if (!best || ran.out.time_s < best->ran.out.time_s)
      best = Chosen{std::move(plan), std::move(ran)};
  }
  return std::move(*best);
}

}  // namespace

Plan plan_collective(const ClusterSpec& cluster, const CollectiveSpec& spec) {
  const Prepared prep = prepare(cluster, spec);
  const KernelCosts kernels{prep.cluster.accelerator, prep.cluster.host, spec.dtype,
                            spec.charge_kernels};
  std::vector<Candidate> cands = candidates(prep.cluster, spec, prep.map);
  if (cands.empty()) cands.push_back({spec.algorithm, Protocol::simple});
  if (cands.size() == 1) {
    CollectiveSpec s = spec;
    s.algorithm = cands[0].algorithm;
    return build_plan(prep.cluster, s, prep.map, kernels, cands[0].protocol);
  }
  const ClusterLayout layout(prep.cluster);
  return choose(layout, prep, spec, kernels, cluster.name).plan;
}

CollectiveResult run_collective(const ClusterSpec& cluster, const CollectiveSpec& spec) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Prepared prep = prepare(cluster, spec);
  const KernelCosts kernels{prep.cluster.accelerator, prep.cluster.host, spec.dtype,
                            spec.charge_kernels};
  const ClusterLayout layout(prep.cluster);
  Chosen chosen = choose(layout, prep, spec, kernels, cluster.name);
  const Plan& plan = chosen.plan;
  const Schedule& s = plan.schedule;
  const int ranks = prep.map.size();

  CollectiveResult r;
  r.time_s = chosen.ran.out.time_s;
  r.ranks = ranks;
  r.algbw_bytes_per_s = r.time_s > 0 ? spec.bytes / r.time_s : 0;
  r.busbw_bytes_per_s = r.algbw_bytes_per_s * busbw_factor(spec.op, ranks);
  r.events = chosen.ran.out.events;
  r.aggregated = chosen.ran.aggregated;
  r.flows = chosen.ran.out.messages;
  r.phases = s.num_phases();
  r.chunks = plan.chunks;
  r.channels = plan.channels;
  r.k = plan.k;
  r.algorithm = plan.algorithm;
  r.protocol = plan.protocol.modeled ? protocol_name(plan.protocol.protocol) : "";
  std::vector<std::pair<LinkId, double>> lb = std::move(chosen.ran.out.link_bytes);
  r.links_used = lb.size();
  std::stable_sort(lb.begin(), lb.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (lb.size() > 32) lb.resize(32);
  for (const auto& [l, b] : lb)
    r.link_bytes.push_back({layout.link_name(l), b});
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace trainsim::sim::collectives
