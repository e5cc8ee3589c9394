#include "sim/collectives/algorithms.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <string>

#include "sim/core/input_error.hpp"

namespace trainsim::sim::collectives {

namespace {

int ceil_log2(int p) {
  int l = 0;
  while ((1 << l) < p)
    ++l;
  return l;
}

int floor_log2(int p) {
  int l = 0;
  while ((2 << l) <= p)
    ++l;
  return l;
}

using Emit = std::function<void(int, std::vector<Transfer>&)>;

std::uint64_t same_key(int) {
  return 0;
}
std::uint64_t step_key(int i) {
  return static_cast<std::uint64_t>(i);
}

// What every builder needs.
struct Ctx {
  const ClusterSpec& c;
  const CollectiveSpec& spec;
  const RankMap& map;
  const KernelCosts& k;
  ProtocolParams proto;
  int channels = 1;
  int p = 0;  // ranks
  // Fused reductions (NCCL style, with a modelled library): no serial kernel, the arriving flow
  // is capped at the receiver's reduction rate shared by its channels.
  bool fused() const { return proto.modeled; }
  double cap(bool reduce, int sharing) const {
    double c = proto.channel_cap_bytes_per_s;
    if (reduce && fused()) {
      const double r = k.reduce_rate_bytes_per_s() / std::max(1, sharing);
      if (std::isfinite(r)) c = c > 0 ? std::min(c, r) : r;
    }
    return c;
  }
  double serial_reduce_s(double bytes) const { return fused() ? 0.0 : k.reduce_s(bytes); }
  double start_s() const { return proto.modeled ? proto.base_latency_s : k.launch_s(); }
};

// ---- rings --------------------------------------------------------------------------------

// The channels' ring orders (lists of logical ranks).
std::vector<std::vector<int>> ring_orders(const Ctx& x) {
  const RankMap& m = x.map;
  const int p = x.p;
  std::vector<int> identity(static_cast<std::size_t>(p));
  std::iota(identity.begin(), identity.end(), 0);
  std::vector<std::vector<int>> out;
  if (m.nodes == 1 && x.c.p2p && x.c.intra_topology == IntraTopology::fully_connected && p > 2) {
    // Rings on disjoint links, so every link of the node carries traffic (RCCL's xGMI rings).
    for (const std::vector<int>& cyc : disjoint_rings(p))
      out.push_back(cyc);
    return out;
  }
  if (m.nodes > 1 && m.per_node > 1 && m.contiguous_nodes && x.channels > 1) {
    // Rail-aligned rings: channel c enters every node at local (c mod g) and leaves from the
    // local before it, so each channel crosses between nodes on its own NIC rail.
    const int g = m.per_node;
    const int variants = std::min(g, x.channels);
    for (int v = 0; v < variants; ++v) {
      std::vector<int> order;
      order.reserve(static_cast<std::size_t>(p));
      for (int n = 0; n < m.nodes; ++n) {
        for (int j = 0; j < g; ++j)
          order.push_back(m.at(n, (v + j) % g));
      }
      out.push_back(std::move(order));
    }
    return out;
  }
  out.push_back(identity);
  return out;
}

// `steps` ring steps over the channels: channel ch sends each rank's block to its successor in
// ring order[ch % orders]; each channel carries 1/channels of `block_bytes`.
void add_ring_steps(Schedule& s, const Ctx& x, const std::vector<std::vector<int>>& orders,
                    int steps, double block_bytes, bool reduce, int chunks) {
  const int channels = std::max(x.channels, static_cast<int>(orders.size()));
  const double per_channel = block_bytes / channels;
  const double compute = reduce ? x.serial_reduce_s(per_channel) : 0.0;
  const double cap = x.cap(reduce, channels);
  // Successor tables per distinct order.
  std::vector<std::vector<int>> next(orders.size(),
                                     std::vector<int>(static_cast<std::size_t>(x.p)));
  for (std::size_t o = 0; o < orders.size(); ++o) {
    const std::vector<int>& ord = orders[o];
    for (std::size_t i = 0; i < ord.size(); ++i)
      next[o][static_cast<std::size_t>(ord[i])] = ord[(i + 1) % ord.size()];
  }
  const int p = x.p;
  // Channel ch runs order ch % orders: the channels of one order travel as one message each
  // (Transfer::multiplicity).
  const int n_orders = static_cast<int>(next.size());
  s.add_steps(steps, chunks, same_key, [=](int, std::vector<Transfer>& out) {
    for (int o = 0; o < n_orders; ++o) {
      const int k = channels / n_orders + (o < channels % n_orders ? 1 : 0);
      const std::vector<int>& nx = next[static_cast<std::size_t>(o)];
      for (int r = 0; r < p; ++r) {
        Transfer t{r, nx[static_cast<std::size_t>(r)], k * per_channel, k * compute, k * cap, o};
        t.multiplicity = k;
        out.push_back(t);
      }
    }
  });
}

// ---- trees --------------------------------------------------------------------------------

// Heap-ordered binary tree over virtual indices v (parent (v-1)/2), rank = map(v).
struct BinaryTree {
  int ranks;
  bool mirrored;
  int rank(int v) const { return mirrored ? ranks - 1 - v : v; }
  int depth() const { return floor_log2(ranks); }
};

// One binary tree (or two mirrored ones) over all ranks: reduce (leaves up) and/or broadcast
// (root down), each tree carrying bytes / trees.
void add_trees(Schedule& s, const Ctx& x, const std::vector<BinaryTree>& trees, double bytes,
               bool do_reduce, bool do_bcast, int chunks) {
  if (trees.empty() || trees[0].ranks < 2) return;
  const int depth = trees[0].depth();
  const double per_tree = bytes / static_cast<double>(trees.size());
  const double compute = x.serial_reduce_s(per_tree);
  const double up_cap = x.cap(true, 2 * static_cast<int>(trees.size()));
  const double down_cap = x.cap(false, 1);
  const int reduce_steps = do_reduce ? depth : 0;
  const int steps = reduce_steps + (do_bcast ? depth : 0);
  s.add_steps(steps, chunks, step_key, [=](int i, std::vector<Transfer>& out) {
    const bool reducing = i < reduce_steps;
    const int d = reducing ? depth - i : i - reduce_steps + 1;  // depth of the children moving
    for (std::size_t ti = 0; ti < trees.size(); ++ti) {
      const BinaryTree& t = trees[ti];
      const int first = (1 << d) - 1;
      const int last = std::min(t.ranks - 1, (2 << d) - 2);
      for (int v = first; v <= last; ++v) {
        const int child = t.rank(v), parent = t.rank((v - 1) / 2);
        if (reducing) {
          out.push_back({child, parent, per_tree, compute, up_cap, static_cast<int>(ti)});
        } else {
          out.push_back({parent, child, per_tree, 0.0, down_cap, static_cast<int>(ti)});
        }
      }
    }
  });
}

// NCCL's tree: in each node a chain from the node's head (the rank on the channel's NIC rail)
// through its other ranks; across nodes two mirrored binary trees of node heads (the double
// binary tree: a node inner in one is a leaf in the other), each on half the channels. Reduce
// goes up the chains and the trees, broadcast comes back down, pipelined in chunks.
void add_nccl_tree(Schedule& s, const Ctx& x, double bytes, int chunks) {
  const RankMap& m = x.map;
  const int g = m.per_node;
  const int nodes = m.nodes;
  const int channels = x.channels;
  const double per_channel = bytes / channels;
  const double compute = x.serial_reduce_s(per_channel);
  const double up_cap = x.cap(true, 2 * channels);
  const double down_cap = x.cap(false, 1);
  const BinaryTree node_tree{nodes, false};
  const int depth = nodes > 1 ? node_tree.depth() : 0;
  const int chain = g - 1;
  // Steps: chain up (g-1), tree up (depth), tree down (depth), chain down (g-1).
  const int steps = 2 * chain + 2 * depth;
  // Channel ch has head ch % g and tree ch % 2: channels with both alike travel as one message
  // (Transfer::multiplicity).
  const int period = std::lcm(g, 2);
  const int variants = std::min(channels, period);
  s.add_steps(steps, chunks, step_key, [=](int i, std::vector<Transfer>& out) {
    for (int ch = 0; ch < variants; ++ch) {
      const int k = channels / variants + (ch < channels % variants ? 1 : 0);
      const double bytes_k = k * per_channel, compute_k = k * compute;
      const double up_k = k * up_cap, down_k = k * down_cap;
      auto push = [&](int a, int b, bool up) {
        Transfer t{a, b, bytes_k, up ? compute_k : 0.0, up ? up_k : down_k, ch};
        t.multiplicity = k;
        out.push_back(t);
      };
      const int head = ch % g;
      const bool mirrored = ch % 2 == 1;
      auto member = [&](int n, int pos) { return m.at(n, (head + pos) % g); };  // pos 0: head
      if (i < chain) {  // chain up: position g-1-i sends to g-2-i
        const int pos = g - 1 - i;
        for (int n = 0; n < nodes; ++n)
          push(member(n, pos), member(n, pos - 1), true);
      } else if (i < chain + depth) {  // tree up
        const int d = depth - (i - chain);
        const int first = (1 << d) - 1, last = std::min(nodes - 1, (2 << d) - 2);
        for (int v = first; v <= last; ++v) {
          const int child = mirrored ? nodes - 1 - v : v;
          const int pv = (v - 1) / 2;
          const int parent = mirrored ? nodes - 1 - pv : pv;
          push(member(child, 0), member(parent, 0), true);
        }
      } else if (i < chain + 2 * depth) {  // tree down
        const int d = i - chain - depth + 1;
        const int first = (1 << d) - 1, last = std::min(nodes - 1, (2 << d) - 2);
        for (int v = first; v <= last; ++v) {
          const int child = mirrored ? nodes - 1 - v : v;
          const int pv = (v - 1) / 2;
          const int parent = mirrored ? nodes - 1 - pv : pv;
          push(member(parent, 0), member(child, 0), false);
        }
      } else {  // chain down: position j sends to j+1
        const int pos = i - chain - 2 * depth;
        for (int n = 0; n < nodes; ++n)
          push(member(n, pos), member(n, pos + 1), false);
      }
    }
  });
}

// ---- others ----------------------------------------------------------------------------------

// Bruck allgather: ceil(log2 P) steps; in step i rank r sends min(2^i, P - 2^i) blocks to r - 2^i.
void add_bruck_allgather(Schedule& s, int ranks, double block_bytes) {
  const int steps = ceil_log2(ranks);
  s.add_steps(steps, 1, step_key, [=](int i, std::vector<Transfer>& out) {
    const int dist = 1 << i;
    const double blocks = std::min(dist, ranks - dist);
    for (int r = 0; r < ranks; ++r)
      out.push_back({r, (r - dist + ranks) % ranks, blocks * block_bytes, 0.0});
  });
}

// Recursive halving (reduce-scatter) over the power-of-two group `members`, then optionally
// recursive doubling (allgather) back.
void add_halving_doubling(Schedule& s, const Ctx& x, const std::vector<int>& members, double bytes,
                          bool allgather) {
  const int p2 = static_cast<int>(members.size());
  const int levels = floor_log2(p2);
  const KernelCosts k = x.k;
  const bool fused = x.fused();
  const double cap_r = x.cap(true, 1), cap_b = x.cap(false, 1);
  s.add_steps(levels, 1, step_key, [=](int i, std::vector<Transfer>& out) {
    const int dist = p2 >> (i + 1);
    const double b = bytes / static_cast<double>(2 << i);
    const double c = fused ? 0.0 : k.reduce_s(b);
    for (int v = 0; v < p2; ++v)
      out.push_back({members[static_cast<std::size_t>(v)],
                     members[static_cast<std::size_t>(v ^ dist)], b, c, cap_r});
  });
  if (!allgather) return;
  s.add_steps(levels, 1, step_key, [=](int i, std::vector<Transfer>& out) {
    const int dist = 1 << i;
    const double b = bytes / static_cast<double>(p2 >> i);
    for (int v = 0; v < p2; ++v)
      out.push_back({members[static_cast<std::size_t>(v)],
                     members[static_cast<std::size_t>(v ^ dist)], b, 0.0, cap_b});
  });
}

void add_halving_doubling_allreduce(Schedule& s, const Ctx& x, double bytes) {
  const int ranks = x.p;
  const int p2 = 1 << floor_log2(ranks);
  const int extra = ranks - p2;
  // Non-powers of two: the first 2 x extra ranks pair up; odd ones hand their data to the even
  // one before and get the result back after (Rabenseifner's scheme).
  std::vector<int> members(static_cast<std::size_t>(p2));
  for (int v = 0; v < p2; ++v)
    members[static_cast<std::size_t>(v)] = v < extra ? 2 * v : v + extra;
  const double fold = x.serial_reduce_s(bytes);
  const double cap_r = x.cap(true, 1), cap_b = x.cap(false, 1);
  s.add_steps(extra > 0 ? 1 : 0, 1, same_key, [=](int, std::vector<Transfer>& out) {
    for (int i = 0; i < extra; ++i)
      out.push_back({2 * i + 1, 2 * i, bytes, fold, cap_r});
  });
  add_halving_doubling(s, x, members, bytes, true);
  s.add_steps(extra > 0 ? 1 : 0, 1, same_key, [=](int, std::vector<Transfer>& out) {
    for (int i = 0; i < extra; ++i)
      out.push_back({2 * i, 2 * i + 1, bytes, 0.0, cap_b});
  });
}

// Pipeline slices: NCCL's tree and chain protocols move data in slices of a few hundred KiB
// (estimate: 512 KiB), at most 1024 per collective (NCCL pipelines every slice, so the fill of a
// few steps is negligible).
int auto_chunks(const CollectiveSpec& spec, bool pipelined) {
  if (spec.chunks > 0) return spec.chunks;
  if (!pipelined) return 1;
  const double slice_bytes = 512.0 * 1024;
  return static_cast<int>(std::clamp(std::ceil(spec.bytes / slice_bytes), 1.0, 1024.0));
}

[[noreturn]] void unsupported(const CollectiveSpec& spec, const std::string& why) {
  throw InputError(std::string("--algorithm ") + algorithm_name(spec.algorithm),
                   std::string("not available for --op ") + op_name(spec.op) + ": " + why);
}

// Backtracking search for `want` arc-disjoint Hamiltonian cycles of the complete digraph on n
// vertices (all start at 0), deterministic, within a step budget.
bool search_cycles(int n, int want, std::vector<std::vector<char>>& used,
                   std::vector<std::vector<int>>& cycles, long& budget) {
  if (static_cast<int>(cycles.size()) == want) return true;
  std::vector<int> path{0};
  std::vector<char> on(static_cast<std::size_t>(n), 0);
  on[0] = 1;
  std::function<bool()> extend = [&]() -> bool {
    if (--budget < 0) return false;
    const int u = path.back();
    if (static_cast<int>(path.size()) == n) {
      if (used[static_cast<std::size_t>(u)][0]) return false;
      used[static_cast<std::size_t>(u)][0] = 1;
      cycles.push_back(path);
      if (search_cycles(n, want, used, cycles, budget)) return true;
      cycles.pop_back();
      used[static_cast<std::size_t>(u)][0] = 0;
      return false;
    }
    for (int w = 1; w < n; ++w) {
      if (on[static_cast<std::size_t>(w)] ||
          used[static_cast<std::size_t>(u)][static_cast<std::size_t>(w)])
        continue;
      on[static_cast<std::size_t>(w)] = 1;
      used[static_cast<std::size_t>(u)][static_cast<std::size_t>(w)] = 1;
      path.push_back(w);
      if (extend()) return true;
      path.pop_back();
      used[static_cast<std::size_t>(u)][static_cast<std::size_t>(w)] = 0;
      on[static_cast<std::size_t>(w)] = 0;
      if (budget < 0) return false;
    }
    return false;
  };
  return extend();
}

}  // namespace

std::vector<std::vector<int>> disjoint_rings(int n) {
  std::vector<std::vector<int>> cycles;
  if (n < 2) return cycles;
  if (n <= 12) {
    std::vector<std::vector<char>> used(static_cast<std::size_t>(n),
                                        std::vector<char>(static_cast<std::size_t>(n), 0));
    long budget = 2000000;
    if (search_cycles(n, n - 1, used, cycles, budget)) return cycles;
    cycles.clear();
  }
  // Rings of strides coprime with n use different directed links.
  for (int s = 1; s < n; ++s) {
    if (std::gcd(s, n) != 1) continue;
    std::vector<int> c;
    for (int i = 0; i < n; ++i)
      c.push_back(static_cast<int>((static_cast<long>(i) * s) % n));
    cycles.push_back(std::move(c));
  }
  return cycles;
}

RankMap make_rank_map(const ClusterSpec& c, const std::vector<int>& members) {
  RankMap m;
  m.members = members;
  const int total = c.total_accelerators();
  std::vector<char> seen(static_cast<std::size_t>(total), 0);
  std::map<int, int> node_index;
  std::vector<int> count;
  for (int r : members) {
    if (r < 0 || r >= total)
      throw InputError("--group", std::to_string(r) + " is not an accelerator of cluster '" +
                                      c.name + "' (0.." + std::to_string(total - 1) + ")");
    if (seen[static_cast<std::size_t>(r)])
      throw InputError("--group", "accelerator " + std::to_string(r) + " appears twice");
    seen[static_cast<std::size_t>(r)] = 1;
    const int cn = r / c.accelerators_per_node;
    auto [it, fresh] = node_index.emplace(cn, static_cast<int>(m.node_id.size()));
    if (fresh) {
      m.node_id.push_back(cn);
      count.push_back(0);
    }
    m.node.push_back(it->second);
    m.local.push_back(count[static_cast<std::size_t>(it->second)]++);
  }
  m.nodes = static_cast<int>(m.node_id.size());
  m.per_node = count.empty() ? 0 : count[0];
  for (int k : count) {
    if (k != m.per_node) m.per_node = 0;
  }
  m.contiguous_nodes = m.per_node > 0;
  for (int r = 0; r < m.size() && m.contiguous_nodes; ++r) {
    if (m.node[static_cast<std::size_t>(r)] != r / m.per_node ||
        m.local[static_cast<std::size_t>(r)] != r % m.per_node)
      m.contiguous_nodes = false;
  }
  return m;
}

int channel_count(const ClusterSpec& c, const RankMap& map) {
  if (c.collectives.library == CollectiveLibrary::none) return 1;
  if (c.collectives.channels > 0) return c.collectives.channels;
  const int rails = map.nodes > 1 ? std::max(1, c.nics_per_node) : 1;
  return std::max(2, rails);
}

AlgoFamily algorithm_family(Algorithm a) {
  switch (a) {
    case Algorithm::tree:
    case Algorithm::double_binary_tree:
      return AlgoFamily::tree;
    case Algorithm::nvls:
      return AlgoFamily::nvls;
    case Algorithm::collnet:
      return AlgoFamily::collnet;
    default:
      return AlgoFamily::ring;
  }
}

std::int64_t topk_count(double bytes, double density, Dtype dtype) {
  const double elements = std::floor(bytes / dtype_bytes(dtype));
  return static_cast<std::int64_t>(std::max(1.0, std::ceil(density * elements)));
}

Plan build_plan(const ClusterSpec& c, const CollectiveSpec& spec, const RankMap& map,
                const KernelCosts& k, Protocol protocol) {
  Plan plan;
  plan.map = map;
  plan.algorithm = spec.algorithm;
  const int ranks = map.size();
  const bool servers = spec.algorithm == Algorithm::parameter_server;
  const bool nvls = spec.algorithm == Algorithm::nvls;
  const bool collnet = spec.algorithm == Algorithm::collnet;
  int switches = 0;
  if (nvls) {
    plan.switches = SwitchKind::node_switch;
    switches = map.nodes;
  } else if (collnet) {
    plan.switches = SwitchKind::rail_root;
    switches = std::max(1, c.nics_per_node);
  }
  plan.schedule = Schedule(ranks, servers ? spec.servers : 0, switches);
  Schedule& s = plan.schedule;
  const AlgoFamily family = algorithm_family(spec.algorithm);
  Ctx x{c, spec, map, k, {}, 1, ranks};
  if (c.collectives.library != CollectiveLibrary::none) {
    const bool sparse = spec.algorithm == Algorithm::topk || spec.algorithm == Algorithm::gtopk ||
                        spec.algorithm == Algorithm::parameter_server;
    x.channels = sparse ? 1 : channel_count(c, map);
    x.proto = protocol_params(c, family, protocol, map.nodes, x.channels);
  }
  plan.protocol = x.proto;
  plan.channels = x.channels;
  const double m = spec.bytes;
  const double p = ranks;
  if (ranks < 2) return plan;
  const bool is_allreduce = spec.op == Op::allreduce;
  if (spec.op == Op::alltoall && spec.algorithm != Algorithm::ring)
    unsupported(spec, "all-to-all runs as concurrent point-to-point sends (use ring)");
  switch (spec.algorithm) {
    case Algorithm::automatic:
      throw std::logic_error("build_plan: choose an algorithm first");
    case Algorithm::ring: {
      s.add_compute(x.start_s());
      if (spec.op == Op::alltoall) {
        // Every rank sends m/P to every other at once (NCCL's grouped send/recv).
        plan.channels = 1;
        const double part = m / p;
        const double cap = x.cap(false, 1);
        s.add_steps(1, 1, same_key, [=](int, std::vector<Transfer>& out) {
          for (int r = 0; r < ranks; ++r) {
            for (int d = 1; d < ranks; ++d)
              out.push_back({r, (r + d) % ranks, part, 0.0, cap});
          }
        });
        break;
      }
      const std::vector<std::vector<int>> orders = ring_orders(x);
      x.channels = std::max(x.channels, static_cast<int>(orders.size()));
      plan.channels = x.channels;
      if (spec.op == Op::broadcast) {
        // Pipelined chain from rank 0 along each channel's ring.
        plan.chunks = auto_chunks(spec, true);
        const int ch_n = x.channels;
        const double per = m / ch_n;
        const double cap = x.cap(false, 1);
        s.add_steps(ranks - 1, plan.chunks, step_key, [=](int i, std::vector<Transfer>& out) {
          for (int ch = 0; ch < ch_n; ++ch) {
            const std::vector<int>& o = orders[static_cast<std::size_t>(ch) % orders.size()];
            const auto it = std::find(o.begin(), o.end(), 0);
            const std::size_t start = static_cast<std::size_t>(it - o.begin());
            const int a = o[(start + static_cast<std::size_t>(i)) % o.size()];
            const int b = o[(start + static_cast<std::size_t>(i) + 1) % o.size()];
            out.push_back({a, b, per, 0.0, cap, ch});
          }
        });
        break;
      }
      if (spec.op != Op::allgather) add_ring_steps(s, x, orders, ranks - 1, m / p, true, 1);
      if (spec.op != Op::reduce_scatter) add_ring_steps(s, x, orders, ranks - 1, m / p, false, 1);
      break;
    }
    case Algorithm::tree: {
      if (spec.op != Op::allreduce && spec.op != Op::broadcast)
        unsupported(spec, "use allreduce or broadcast");
      plan.chunks = auto_chunks(spec, true);
      plan.channels = 1;
      s.add_compute(x.start_s());
      add_trees(s, x, {{ranks, false}}, m, is_allreduce, true, plan.chunks);
      break;
    }
    case Algorithm::double_binary_tree: {
      if (spec.op != Op::allreduce && spec.op != Op::broadcast)
        unsupported(spec, "use allreduce or broadcast");
      plan.chunks = auto_chunks(spec, true);
      s.add_compute(x.start_s());
      if (map.contiguous_nodes && spec.op == Op::allreduce &&
          c.collectives.library != CollectiveLibrary::none) {
        add_nccl_tree(s, x, m, plan.chunks);
      } else {
        plan.channels = 2;
        add_trees(s, x, {{ranks, false}, {ranks, true}}, m, is_allreduce, true, plan.chunks);
      }
      break;
    }
    case Algorithm::halving_doubling: {
      plan.channels = 1;
      s.add_compute(x.start_s());
      if (spec.op == Op::allreduce) {
        add_halving_doubling_allreduce(s, x, m);
      } else if (spec.op == Op::allgather) {
        add_bruck_allgather(s, ranks, m / p);
      } else if (spec.op == Op::reduce_scatter) {
        if ((ranks & (ranks - 1)) != 0)
          unsupported(spec, "reduce_scatter by recursive halving needs a power-of-two rank count");
        std::vector<int> members(static_cast<std::size_t>(ranks));
        std::iota(members.begin(), members.end(), 0);
        add_halving_doubling(s, x, members, m, false);
      } else {
        unsupported(spec, "use ring or tree for broadcast");
      }
      break;
    }
    case Algorithm::hierarchical:
    case Algorithm::collnet: {
      if (!is_allreduce) unsupported(spec, "it is an allreduce");
      if (!map.contiguous_nodes) {
        throw InputError("--ranks", std::string(algorithm_name(spec.algorithm)) +
                                        " allreduce needs whole nodes with the same number of "
                                        "ranks each");
      }
      if (collnet && !c.collectives.sharp)
        unsupported(spec, "the cluster's fabric has no in-network reduction (collectives.sharp)");
      if (collnet &&
          (c.inter_topology != InterTopology::star && c.inter_topology != InterTopology::fat_tree))
        unsupported(spec, "SHARP needs a switched (star or fat-tree) fabric");
      const int g = map.per_node;
      const int n = map.nodes;
      plan.channels = 1;
      plan.chunks = (n > 1 && g > 1) ? auto_chunks(spec, true) : 1;
      s.add_compute(x.start_s());
      const double intra_block = m / g;
      const double inter_block = intra_block / n;
      const double rs_c = x.serial_reduce_s(intra_block);
      const double ir_c = x.serial_reduce_s(inter_block);
      const double cap_r = x.cap(true, 1), cap_b = x.cap(false, 1);
      const int nics = std::max(1, c.nics_per_node);
      // Steps: intra reduce-scatter (g-1), inter allreduce (ring: 2(n-1); SHARP: up, down),
      // intra allgather (g-1); chunks flow through all three at once.
      const int intra = g > 1 ? g - 1 : 0;
      const int inter = n > 1 ? (collnet ? 2 : 2 * (n - 1)) : 0;
      const int total = 2 * intra + inter;
      const int ranks_c = ranks;
      s.add_steps(
          total, plan.chunks,
          [=](int i) -> std::uint64_t {
            if (i < intra) return 0;
            if (i < intra + inter)
              return collnet ? (i - intra == 0 ? 1 : 2) : (i - intra < n - 1 ? 1 : 2);
            return 3;
          },
          [=](int i, std::vector<Transfer>& out) {
            if (i < intra || i >= intra + inter) {
              const bool rs = i < intra;
              for (int r = 0; r < ranks_c; ++r) {
                const int node = r / g, local = r % g;
                out.push_back({r, node * g + (local + 1) % g, intra_block, rs ? rs_c : 0.0,
                               rs ? cap_r : cap_b});
              }
              return;
            }
            const int j = i - intra;
            for (int r = 0; r < ranks_c; ++r) {
              const int node = r / g, local = r % g;
              if (collnet) {
                const int root = ranks_c + local % nics;  // rail root of this rank's NIC
                // The switches reduce the node's reduce-scattered block across nodes and
                // multicast the result back.
                if (j == 0) {
                  out.push_back({r, root, intra_block, 0.0, cap_b});
                } else {
                  out.push_back({root, r, intra_block, 0.0, cap_b});
                }
              } else {
                out.push_back({r, ((node + 1) % n) * g + local, inter_block, j < n - 1 ? ir_c : 0.0,
                               j < n - 1 ? cap_r : cap_b});
              }
            }
          });
      break;
    }
    case Algorithm::nvls: {
      if (!is_allreduce) unsupported(spec, "NVLS is an allreduce here");
      if (!c.collectives.nvls || c.collectives.library != CollectiveLibrary::nccl)
        unsupported(spec, "the cluster's NVSwitch has no NVLink SHARP (collectives.nvls)");
      if (map.nodes != 1 || c.intra_topology != IntraTopology::switched || !c.p2p)
        unsupported(spec, "NVLS runs inside one NVSwitch node");
      // Each rank pushes its whole buffer up to the switch, which reduces each shard as the
      // owning rank reads it (multimem.ld_reduce: the shard back down, m/P), then the rank stores
      // the reduced shard (m/P up) and the switch multicasts it (m down to every rank): m(1+1/P)
      // each way per rank, both directions at once.
      plan.channels = x.channels;
      s.add_compute(x.start_s());
      const double each_way = m * (1 + 1 / p) / x.channels;
      const double eff = c.collectives.nvls_efficiency;
      const int ch_n = x.channels;
      const int ranks_c = ranks;
      s.add_steps(1, 1, same_key, [=](int, std::vector<Transfer>& out) {
        for (int ch = 0; ch < ch_n; ++ch) {
          for (int r = 0; r < ranks_c; ++r) {
            out.push_back({r, ranks_c, each_way / eff, 0.0, 0.0, ch});
            out.push_back({ranks_c, r, each_way / eff, 0.0, 0.0, ch});
          }
        }
      });
      break;
    }
    case Algorithm::parameter_server: {
      if (!is_allreduce)
        unsupported(spec, "a parameter server reduces (push) then broadcasts (pull)");
      const int hosts = spec.servers;
      if (hosts < 1 || hosts > c.nodes) {
        throw InputError("--servers", std::to_string(hosts) +
                                          " is not between 1 and the cluster's " +
                                          std::to_string(c.nodes) + " nodes");
      }
      plan.channels = 1;
      const double shard = m / hosts;
      const double host_c = k.host_reduce_s(shard);
      s.add_steps(1, 1, same_key, [=](int, std::vector<Transfer>& out) {
        for (int r = 0; r < ranks; ++r) {
          for (int h = 0; h < hosts; ++h)
            out.push_back({r, ranks + h, shard, host_c});
        }
      });
      s.add_steps(1, 1, same_key, [=](int, std::vector<Transfer>& out) {
        for (int h = 0; h < hosts; ++h) {
          for (int r = 0; r < ranks; ++r)
            out.push_back({ranks + h, r, shard, 0.0});
        }
      });
      break;
    }
    case Algorithm::topk:
    case Algorithm::gtopk: {
      if (!is_allreduce) unsupported(spec, "sparsified gradients are an allreduce");
      if (!(spec.density > 0 && spec.density <= 1)) {
        throw InputError("--density", std::to_string(spec.density) + " is not in (0, 1]");
      }
      plan.channels = 1;
      const double elements = std::floor(m / dtype_bytes(spec.dtype));
      plan.k = topk_count(m, spec.density, spec.dtype);
      const double kk = static_cast<double>(plan.k);
      const double pair_bytes = 2 * kk * dtype_bytes(spec.dtype);  // k values + k indices
      if (spec.include_selection) s.add_compute(k.topk_compress_s(elements, kk));
      if (spec.algorithm == Algorithm::topk) {
        add_bruck_allgather(s, ranks, pair_bytes);
        s.add_compute(k.launch_s() + k.scatter_add_s(p * kk));
        break;
      }
      // gTopKAllReduce: in round i the rank 2^i above a multiple of 2^(i+1) sends its k pairs
      // down; the receiver merges 2k candidates into the top k. Then rank 0 broadcasts the
      // global top k along the same binomial tree, reversed.
      const int rounds = ceil_log2(ranks);
      const double merge_c = k.topk_select_s(2 * kk, kk) + k.launch_s();
      s.add_steps(rounds, 1, step_key, [=](int i, std::vector<Transfer>& out) {
        const int dist = 1 << i;
        for (int r = dist; r < ranks; r += 2 * dist)
          out.push_back({r, r - dist, pair_bytes, merge_c});
      });
      s.add_steps(rounds, 1, step_key, [=](int i, std::vector<Transfer>& out) {
        const int dist = 1 << (rounds - 1 - i);
        for (int r = 0; r + dist < ranks; r += 2 * dist)
          out.push_back({r, r + dist, pair_bytes, 0.0});
      });
      s.add_compute(k.launch_s() + k.scatter_add_s(kk));
      break;
    }
  }
  return plan;
}

}  // namespace trainsim::sim::collectives
