#include "sim/collectives/collective.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/runners.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::sim::collectives {

namespace {

constexpr Op kOps[] = {Op::allreduce, Op::allgather, Op::reduce_scatter, Op::broadcast};
constexpr Algorithm kAlgorithms[] = {Algorithm::ring,
                                     Algorithm::tree,
                                     Algorithm::double_binary_tree,
                                     Algorithm::halving_doubling,
                                     Algorithm::hierarchical,
                                     Algorithm::parameter_server,
                                     Algorithm::topk,
                                     Algorithm::gtopk};

// Above this many ranks the automatic choice aggregates phases (where the fabric allows): the
// message-level run costs O(P x phases) memory and time, and both agree on symmetric schedules.
constexpr int kAutoExactMaxRanks = 256;
// The message-level run keeps per-phase, per-endpoint counters: refuse what would not fit.
constexpr double kExactMaxCells = 4e8;

template <typename T, std::size_t N, typename NameOf>
T parse_named(std::string_view name, std::string_view where, const T (&all)[N], NameOf name_of,
              const char* what) {
  std::string valid;
  for (T v : all) {
    if (name == name_of(v)) return v;
    valid += valid.empty() ? "" : ", ";
    valid += name_of(v);
  }
  throw InputError(std::string(where), "unknown " + std::string(what) + " '" + std::string(name) +
                                           "' (valid: " + valid + ")");
}

ClusterSpec trimmed(const ClusterSpec& c, int ranks) {
  ClusterSpec t = c;
  // Unused nodes change nothing on a star or a leaf-spine tree (filled in order); rings and tori
  // keep their shape.
  if (c.inter_topology == InterTopology::star || c.inter_topology == InterTopology::fat_tree) {
    t.nodes = std::max(1, (ranks + c.accelerators_per_node - 1) / c.accelerators_per_node);
    if (t.nodes == 1) t.inter_topology = c.inter_topology;  // keep NICs: harmless
  }
  return t;
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::allreduce:
      return "allreduce";
    case Op::allgather:
      return "allgather";
    case Op::reduce_scatter:
      return "reduce_scatter";
    case Op::broadcast:
      return "broadcast";
  }
  return "?";
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::ring:
      return "ring";
    case Algorithm::tree:
      return "tree";
    case Algorithm::double_binary_tree:
      return "double_binary_tree";
    case Algorithm::halving_doubling:
      return "halving_doubling";
    case Algorithm::hierarchical:
      return "hierarchical";
    case Algorithm::parameter_server:
      return "parameter_server";
    case Algorithm::topk:
      return "topk";
    case Algorithm::gtopk:
      return "gtopk";
  }
  return "?";
}

Algorithm parse_algorithm(std::string_view name, std::string_view where) {
  return parse_named(name, where, kAlgorithms, algorithm_name, "algorithm");
}

Op parse_op(std::string_view name, std::string_view where) {
  return parse_named(name, where, kOps, op_name, "op");
}

double busbw_factor(Op op, int ranks) {
  const double p = ranks;
  switch (op) {
    case Op::allreduce:
      return 2 * (p - 1) / p;
    case Op::allgather:
    case Op::reduce_scatter:
      return (p - 1) / p;
    case Op::broadcast:
      return 1;
  }
  return 1;
}

CollectiveResult run_collective(const ClusterSpec& cluster, const CollectiveSpec& spec) {
  const auto wall_start = std::chrono::steady_clock::now();
  const int total = cluster.total_accelerators();
  const int ranks = spec.ranks == 0 ? total : spec.ranks;
  if (ranks < 1 || ranks > total) {
    throw InputError("--ranks", std::to_string(spec.ranks) + " is not between 1 and the " +
                                    std::to_string(total) + " accelerators of cluster '" +
                                    cluster.name + "'");
  }
  if (!(spec.bytes > 0) || !std::isfinite(spec.bytes)) {
    throw InputError("--bytes", std::to_string(spec.bytes) + " is not a positive size");
  }
  if (spec.chunks < 0) throw InputError("--chunks", std::to_string(spec.chunks) + " is negative");
  const ClusterSpec c = trimmed(cluster, ranks);
  KernelCosts kernels{c.accelerator, c.host, spec.dtype, spec.charge_kernels};
  if (spec.charge_kernels && !c.accelerator.peak(spec.dtype)) {
    throw InputError("--dtype", std::string(c.accelerator.name) + " has no " +
                                    dtype_name(spec.dtype) + " compute path");
  }
  const Plan plan = build_plan(c, spec, ranks, kernels);
  const Schedule& s = plan.schedule;

  bool aggregate = false;
  if (spec.exact || spec.model == Model::exact) {
    aggregate = false;
  } else if (spec.model == Model::aggregated) {
    if (!aggregation_supported(c)) {
      throw InputError("--model aggregated",
                       "needs a star (or single-node) inter-node fabric; cluster '" + cluster.name +
                           "' has another");
    }
    aggregate = true;
  } else {
    aggregate = ranks > kAutoExactMaxRanks && aggregation_supported(c);
  }
  if (!aggregate && static_cast<double>(s.num_phases()) * s.endpoints() > kExactMaxCells) {
    throw InputError("--exact", "a message-level run of " + std::to_string(s.num_phases()) +
                                    " phases on " + std::to_string(ranks) +
                                    " ranks is too large; use the aggregated model");
  }
  const RunOutput run = aggregate ? run_aggregated(c, s) : run_exact(c, s);

  CollectiveResult r;
  r.time_s = run.time_s;
  r.ranks = ranks;
  r.algbw_bytes_per_s = r.time_s > 0 ? spec.bytes / r.time_s : 0;
  r.busbw_bytes_per_s = r.algbw_bytes_per_s * busbw_factor(spec.op, ranks);
  r.events = run.events;
  r.aggregated = aggregate;
  r.flows = s.count_flows();
  r.phases = s.num_phases();
  r.chunks = plan.chunks;
  r.channels = plan.channels;
  r.k = plan.k;
  r.link_bytes = run.link_bytes;
  r.links_used = r.link_bytes.size();
  std::stable_sort(r.link_bytes.begin(), r.link_bytes.end(),
                   [](const LinkBytes& a, const LinkBytes& b) { return a.bytes > b.bytes; });
  if (r.link_bytes.size() > 32) r.link_bytes.resize(32);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace trainsim::sim::collectives
