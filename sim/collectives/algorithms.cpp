#include "sim/collectives/algorithms.hpp"

#include <algorithm>
#include <cmath>
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
using Key = std::function<std::uint64_t(int)>;

std::uint64_t same_key(int) {
  return 0;
}
std::uint64_t step_key(int i) {
  return static_cast<std::uint64_t>(i);
}

// Ring reduce-scatter (reduce) or allgather over `channels` rings: ring c sends rank r's block to
// r + stride[c], each ring carrying 1/channels of the data. `block_bytes` is one rank's block.
void add_ring(Schedule& s, int ranks, const std::vector<int>& strides, double block_bytes,
              bool reduce, int chunks, const KernelCosts& k) {
  const double per_channel = block_bytes / static_cast<double>(strides.size());
  const double compute = reduce ? k.reduce_s(per_channel) : 0.0;
  s.add_steps(ranks - 1, chunks, same_key, [=](int, std::vector<Transfer>& out) {
    for (int stride : strides) {
      for (int r = 0; r < ranks; ++r)
        out.push_back({r, (r + stride) % ranks, per_channel, compute});
    }
  });
}

// Heap-ordered binary tree over virtual indices v (parent (v-1)/2), rank = map(v).
struct BinaryTree {
  int ranks;
  bool mirrored;
  int rank(int v) const { return mirrored ? ranks - 1 - v : v; }
  int depth() const { return floor_log2(ranks); }
};

// Tree reduce (leaves up) and/or broadcast (root down) over one or two trees, each tree carrying
// bytes / trees.
void add_trees(Schedule& s, const std::vector<BinaryTree>& trees, double bytes, bool do_reduce,
               bool do_bcast, int chunks, const KernelCosts& k) {
  if (trees.empty() || trees[0].ranks < 2) return;
  const int depth = trees[0].depth();
  const double per_tree = bytes / static_cast<double>(trees.size());
  const double compute = k.reduce_s(per_tree);
  const int reduce_steps = do_reduce ? depth : 0;
  const int steps = reduce_steps + (do_bcast ? depth : 0);
  s.add_steps(steps, chunks, step_key, [=](int i, std::vector<Transfer>& out) {
    const bool reducing = i < reduce_steps;
    const int d = reducing ? depth - i : i - reduce_steps + 1;  // depth of the children moving
    for (const BinaryTree& t : trees) {
      const int first = (1 << d) - 1;
      const int last = std::min(t.ranks - 1, (2 << d) - 2);
      for (int v = first; v <= last; ++v) {
        const int child = t.rank(v), parent = t.rank((v - 1) / 2);
        if (reducing) {
          out.push_back({child, parent, per_tree, compute});
        } else {
          out.push_back({parent, child, per_tree, 0.0});
        }
      }
    }
  });
}

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
void add_halving_doubling(Schedule& s, const std::vector<int>& members, double bytes,
                          bool allgather, const KernelCosts& k) {
  const int p2 = static_cast<int>(members.size());
  const int levels = floor_log2(p2);
  s.add_steps(levels, 1, step_key, [=](int i, std::vector<Transfer>& out) {
    const int dist = p2 >> (i + 1);
    const double b = bytes / static_cast<double>(2 << i);
    const double c = k.reduce_s(b);
    for (int v = 0; v < p2; ++v)
      out.push_back({members[v], members[v ^ dist], b, c});
  });
  if (!allgather) return;
  s.add_steps(levels, 1, step_key, [=](int i, std::vector<Transfer>& out) {
    const int dist = 1 << i;
    const double b = bytes / static_cast<double>(p2 >> i);
    for (int v = 0; v < p2; ++v)
      out.push_back({members[v], members[v ^ dist], b, 0.0});
  });
}

void add_halving_doubling_allreduce(Schedule& s, int ranks, double bytes, const KernelCosts& k) {
  const int p2 = 1 << floor_log2(ranks);
  const int extra = ranks - p2;
  // Non-powers of two: the first 2 x extra ranks pair up; odd ones hand their data to the even
  // one before and get the result back after (Rabenseifner's scheme).
  std::vector<int> members(static_cast<std::size_t>(p2));
  for (int v = 0; v < p2; ++v)
    members[static_cast<std::size_t>(v)] = v < extra ? 2 * v : v + extra;
  const double fold = k.reduce_s(bytes);
  s.add_steps(extra > 0 ? 1 : 0, 1, same_key, [=](int, std::vector<Transfer>& out) {
    for (int i = 0; i < extra; ++i)
      out.push_back({2 * i + 1, 2 * i, bytes, fold});
  });
  add_halving_doubling(s, members, bytes, true, k);
  s.add_steps(extra > 0 ? 1 : 0, 1, same_key, [=](int, std::vector<Transfer>& out) {
    for (int i = 0; i < extra; ++i)
      out.push_back({2 * i, 2 * i + 1, bytes, 0.0});
  });
}

// Rings of a fully connected node: stride s visits every rank when gcd(s, P) = 1, and rings of
// different strides use different directed links, so RCCL-style multi-ring channels load every
// such link at once.
std::vector<int> ring_strides(const ClusterSpec& c, int ranks) {
  std::vector<int> strides{1};
  if (c.p2p && c.intra_topology == IntraTopology::fully_connected &&
      ranks <= c.accelerators_per_node && ranks > 2) {
    strides.clear();
    for (int s = 1; s < ranks; ++s) {
      if (std::gcd(s, ranks) == 1) strides.push_back(s);
    }
  }
  return strides;
}

int auto_chunks(const CollectiveSpec& spec, bool pipelined) {
  if (spec.chunks > 0) return spec.chunks;
  if (!pipelined) return 1;
  // Estimate: 512 KiB pipeline slices (NCCL's tree/chain protocols move data in slices of a few
  // hundred KiB), at most 64 in flight per collective.
  const double slice_bytes = 512.0 * 1024;
  return static_cast<int>(std::clamp(std::ceil(spec.bytes / slice_bytes), 1.0, 64.0));
}

[[noreturn]] void unsupported(const CollectiveSpec& spec, const std::string& why) {
  throw InputError(std::string("--algorithm ") + algorithm_name(spec.algorithm),
                   std::string("not available for --op ") + op_name(spec.op) + ": " + why);
}

}  // namespace

std::int64_t topk_count(double bytes, double density, Dtype dtype) {
  const double elements = std::floor(bytes / dtype_bytes(dtype));
  return static_cast<std::int64_t>(std::max(1.0, std::ceil(density * elements)));
}

Plan build_plan(const ClusterSpec& c, const CollectiveSpec& spec, int ranks, const KernelCosts& k) {
  Plan plan;
  const bool servers = spec.algorithm == Algorithm::parameter_server;
  plan.schedule = Schedule(ranks, servers ? spec.servers : 0);
  Schedule& s = plan.schedule;
  const double m = spec.bytes;
  const double p = ranks;
  if (ranks < 2) return plan;
  const bool is_allreduce = spec.op == Op::allreduce;
  switch (spec.algorithm) {
    case Algorithm::ring: {
      const std::vector<int> strides = ring_strides(c, ranks);
      plan.channels = static_cast<int>(strides.size());
      plan.chunks = auto_chunks(spec, spec.op == Op::broadcast);
      if (spec.op == Op::broadcast) {
        plan.channels = 1;
        s.add_compute(k.launch_s());
        s.add_steps(ranks - 1, plan.chunks, step_key, [=](int i, std::vector<Transfer>& out) {
          out.push_back({i, i + 1, m, 0.0});
        });
        break;
      }
      s.add_compute(k.launch_s());
      if (spec.op != Op::allgather) add_ring(s, ranks, strides, m / p, true, plan.chunks, k);
      if (spec.op != Op::reduce_scatter) add_ring(s, ranks, strides, m / p, false, plan.chunks, k);
      break;
    }
    case Algorithm::tree:
    case Algorithm::double_binary_tree: {
      if (spec.op != Op::allreduce && spec.op != Op::broadcast)
        unsupported(spec, "use allreduce or broadcast");
      plan.chunks = auto_chunks(spec, true);
      std::vector<BinaryTree> trees{{ranks, false}};
      if (spec.algorithm == Algorithm::double_binary_tree) trees.push_back({ranks, true});
      plan.channels = static_cast<int>(trees.size());
      s.add_compute(k.launch_s());
      add_trees(s, trees, m, is_allreduce, true, plan.chunks, k);
      break;
    }
    case Algorithm::halving_doubling: {
      s.add_compute(k.launch_s());
      if (spec.op == Op::allreduce) {
        add_halving_doubling_allreduce(s, ranks, m, k);
      } else if (spec.op == Op::allgather) {
        add_bruck_allgather(s, ranks, m / p);
      } else if (spec.op == Op::reduce_scatter) {
        if ((ranks & (ranks - 1)) != 0)
          unsupported(spec, "reduce_scatter by recursive halving needs a power-of-two rank count");
        std::vector<int> members(static_cast<std::size_t>(ranks));
        std::iota(members.begin(), members.end(), 0);
        add_halving_doubling(s, members, m, false, k);
      } else {
        unsupported(spec, "use ring or tree for broadcast");
      }
      break;
    }
    case Algorithm::hierarchical: {
      if (!is_allreduce) unsupported(spec, "hierarchical is an allreduce");
      const int g = std::min(ranks, c.accelerators_per_node);
      if (ranks % g != 0) {
        throw InputError("--ranks",
                         "hierarchical allreduce needs whole nodes: " + std::to_string(ranks) +
                             " ranks on nodes of " + std::to_string(g));
      }
      const int n = ranks / g;
      s.add_compute(k.launch_s());
      const double intra_block = m / g;
      const double rs_c = k.reduce_s(intra_block);
      if (g > 1) {
        s.add_steps(g - 1, 1, same_key, [=](int, std::vector<Transfer>& out) {
          for (int r = 0; r < ranks; ++r)
            out.push_back({r, r - r % g + (r % g + 1) % g, intra_block, rs_c});
        });
      }
      if (n > 1) {
        const double inter_block = intra_block / n;
        const double ir_c = k.reduce_s(inter_block);
        s.add_steps(
            2 * (n - 1), 1, [=](int i) -> std::uint64_t { return i < n - 1 ? 0 : 1; },
            [=](int i, std::vector<Transfer>& out) {
              for (int r = 0; r < ranks; ++r) {
                const int node = r / g, local = r % g;
                out.push_back(
                    {r, ((node + 1) % n) * g + local, inter_block, i < n - 1 ? ir_c : 0.0});
              }
            });
      }
      if (g > 1) {
        s.add_steps(g - 1, 1, same_key, [=](int, std::vector<Transfer>& out) {
          for (int r = 0; r < ranks; ++r)
            out.push_back({r, r - r % g + (r % g + 1) % g, intra_block, 0.0});
        });
      }
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
      const double elements = std::floor(m / dtype_bytes(spec.dtype));
      plan.k = topk_count(m, spec.density, spec.dtype);
      const double kk = static_cast<double>(plan.k);
      const double pair_bytes = 2 * kk * dtype_bytes(spec.dtype);  // k values + k indices
      s.add_compute(k.launch_s() + k.residual_s(elements) + k.launch_s() +
                    k.topk_select_s(elements, kk));
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
