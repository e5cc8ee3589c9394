#include <algorithm>
#include <memory>

#include "sim/collectives/runners.hpp"
#include "sim/core/engine.hpp"
#include "sim/net/cluster_topology.hpp"
#include "sim/net/flow_network.hpp"

namespace trainsim::sim::collectives {

namespace {

class ExactRun {
 public:
  ExactRun(const ClusterSpec& cluster, const Schedule& schedule)
      : topo_(build_cluster_topology(cluster)), net_(engine_, topo_.topology), schedule_(schedule) {
    const int ranks = schedule.ranks();
    for (int r = 0; r < ranks; ++r)
      vertex_.push_back(topo_.accelerator(r));
    if (!cluster.p2p) {
      // Without peer-to-peer a message between two accelerators of one node is copied into host
      // memory and out again (cudaMemcpy / NCCL's SHM transport staging): store and forward.
      for (int r = 0; r < ranks; ++r)
        staging_host_.push_back(topo_.host(topo_.node_of_rank(r)));
    }
    for (int h = 0; h < schedule.hosts(); ++h)
      vertex_.push_back(topo_.host(h));
    const std::size_t e = vertex_.size();
    const std::size_t n = schedule.num_phases();
    phases_.resize(n);
    send_offsets_.resize(n);
    recv_left_.assign(n * e, 0);
    for (std::size_t p = 0; p < n; ++p) {
      Phase ph = schedule.build(p);
      std::stable_sort(ph.transfers.begin(), ph.transfers.end(),
                       [](const Transfer& a, const Transfer& b) { return a.src < b.src; });
      std::vector<std::uint32_t>& off = send_offsets_[p];
      off.assign(e + 1, 0);
      for (const Transfer& t : ph.transfers) {
        ++off[static_cast<std::size_t>(t.src) + 1];
        ++recv_left_[p * e + static_cast<std::size_t>(t.dst)];
      }
      for (std::size_t i = 0; i < e; ++i)
        off[i + 1] += off[i];
      phases_[p] = std::move(ph);
    }
    cur_.assign(e, 0);
    pending_.assign(e, 0);
    compute_free_.assign(e, Time::zero());
    parked_.resize(e);
  }

  RunOutput run() {
    for (std::size_t ep = 0; ep < vertex_.size(); ++ep)
      enter(ep);
    engine_.run();
    RunOutput out;
    out.time_s = finish_.seconds();
    out.events = engine_.stats().events_executed;
    const Topology& t = topo_.topology;
    for (LinkId l = 0; l < t.num_links(); ++l) {
      const double b = net_.link_bytes(l);
      if (b > 0) out.link_bytes.push_back({t.link(l).name, b});
    }
    return out;
  }

 private:
  std::size_t endpoints() const { return vertex_.size(); }

  // Starts phase cur_[ep] (and any that complete at once).
  void enter(std::size_t ep) {
    const std::size_t n = phases_.size();
    while (cur_[ep] < n) {
      const std::size_t p = cur_[ep];
      const Phase& ph = phases_[p];
      const std::uint32_t first = send_offsets_[p][ep], last = send_offsets_[p][ep + 1];
      pending_[ep] = last - first;
      start_parked(ep, p);
      const bool computes = ph.compute_s > 0 && ep < static_cast<std::size_t>(schedule_.ranks());
      if (computes) {
        ++pending_[ep];
        const Time done = run_kernel(ep, ph.compute_s);
        engine_.at(done, [this, ep] { send_compute_done(ep); });
      } else {
        start_sends(ep, p);
      }
      if (pending_[ep] > 0 || recv_left_[p * endpoints() + ep] > 0) return;
      ++cur_[ep];
    }
    finish_ = std::max(finish_, engine_.now());
  }

  void start_sends(std::size_t ep, std::size_t p) {
    const std::uint32_t first = send_offsets_[p][ep], last = send_offsets_[p][ep + 1];
    for (std::uint32_t i = first; i < last; ++i) {
      const auto dst = static_cast<std::size_t>(phases_[p].transfers[i].dst);
      if (cur_[dst] >= p) {
        start_flow(p, i);
      } else {
        parked_[dst].push_back({p, i});
      }
    }
  }

  // Rendezvous: a message moves once its receiver has reached the phase too (it has posted the
  // buffer), as NCCL's credit-based protocol and MPI's large-message protocol do.
  void start_parked(std::size_t ep, std::size_t p) {
    std::vector<Parked>& list = parked_[ep];
    std::size_t w = 0;
    for (std::size_t r = 0; r < list.size(); ++r) {
      if (list[r].phase == p) {
        start_flow(list[r].phase, list[r].index);
      } else {
        list[w++] = list[r];
      }
    }
    list.resize(w);
  }

  void start_flow(std::size_t p, std::uint32_t i) {
    const Transfer& t = phases_[p].transfers[i];
    const auto src = static_cast<std::size_t>(t.src), dst = static_cast<std::size_t>(t.dst);
    if (src < staging_host_.size() && dst < staging_host_.size() &&
        staging_host_[src] == staging_host_[dst]) {
      net_.start_flow(vertex_[src], staging_host_[src], t.bytes, [this, p, i] {
        const Transfer& u = phases_[p].transfers[i];
        const auto to = static_cast<std::size_t>(u.dst);
        net_.start_flow(staging_host_[to], vertex_[to], u.bytes, [this, p, i] { delivered(p, i); });
      });
      return;
    }
    net_.start_flow(vertex_[src], vertex_[dst], t.bytes, [this, p, i] { delivered(p, i); });
  }

  void send_compute_done(std::size_t ep) {
    start_sends(ep, cur_[ep]);
    --pending_[ep];
    check(ep);
  }

  Time run_kernel(std::size_t ep, double seconds) {
    const Time start = std::max(engine_.now(), compute_free_[ep]);
    compute_free_[ep] = start + Time::from_seconds(seconds);
    return compute_free_[ep];
  }

  void delivered(std::size_t p, std::uint32_t i) {
    const Transfer& t = phases_[p].transfers[i];
    const auto src = static_cast<std::size_t>(t.src), dst = static_cast<std::size_t>(t.dst);
    --pending_[src];
    check(src);
    if (t.receiver_compute_s > 0) {
      engine_.at(run_kernel(dst, t.receiver_compute_s), [this, p, dst] { received(p, dst); });
    } else {
      received(p, dst);
    }
  }

  void received(std::size_t p, std::size_t dst) {
    --recv_left_[p * endpoints() + dst];
    check(dst);
  }

  void check(std::size_t ep) {
    const std::size_t p = cur_[ep];
    if (p >= phases_.size() || pending_[ep] > 0 || recv_left_[p * endpoints() + ep] > 0) return;
    ++cur_[ep];
    enter(ep);
  }

  Engine engine_;
  ClusterTopology topo_;
  FlowNetwork net_;
  const Schedule& schedule_;
  std::vector<VertexId> vertex_;
  std::vector<VertexId> staging_host_;  // per rank, only without peer-to-peer
  std::vector<Phase> phases_;
  std::vector<std::vector<std::uint32_t>> send_offsets_;
  std::vector<std::uint32_t> recv_left_;  // [phase * endpoints + endpoint]
  std::vector<std::size_t> cur_;
  std::vector<std::uint32_t> pending_;
  std::vector<Time> compute_free_;
  struct Parked {
    std::size_t phase;
    std::uint32_t index;
  };
  std::vector<std::vector<Parked>>
      parked_;  // by receiver: messages waiting for it to reach their phase
  Time finish_ = Time::zero();
};

}  // namespace

RunOutput run_exact(const ClusterSpec& cluster, const Schedule& schedule) {
  auto run = std::make_unique<ExactRun>(cluster, schedule);
  return run->run();
}

}  // namespace trainsim::sim::collectives
