#include "sim/collectives/process.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/collectives/runners.hpp"

namespace trainsim::sim::collectives {

CollectiveProcess::CollectiveProcess(Engine& engine, FlowNetwork& net, const ClusterLayout& layout,
                                     Plan plan)
    : engine_(engine), net_(net), layout_(layout), plan_(std::move(plan)) {
  if (net.topology().num_links() != layout.num_links())
    throw std::invalid_argument("CollectiveProcess: the network is not the layout's topology");
  const Schedule& schedule = plan_.schedule;
  const int ranks = schedule.ranks();
  for (int e = 0; e < schedule.endpoints(); ++e)
    vertex_.push_back(endpoint_vertex(layout, plan_, e));
  if (!layout.spec().p2p) {
    // Without peer-to-peer a message between two accelerators of one node is copied into host
    // memory and out again (cudaMemcpy / NCCL's SHM transport staging): store and forward.
    for (int r = 0; r < ranks; ++r)
      staging_host_.push_back(
          layout.host(layout.node_of_vertex(vertex_[static_cast<std::size_t>(r)])));
  }
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

void CollectiveProcess::start(std::function<void()> on_done) {
  on_done_ = std::move(on_done);
  start_ = engine_.now();
  finish_ = start_;
  remaining_ = vertex_.size();
  std::fill(compute_free_.begin(), compute_free_.end(), start_);
  for (std::size_t ep = 0; ep < vertex_.size(); ++ep)
    enter(ep);
}

const CollectiveProcess::Message& CollectiveProcess::message(VertexId from, VertexId to) {
  const std::uint64_t key = (std::uint64_t{from} << 32) | to;
  auto it = messages_cache_.find(key);
  if (it != messages_cache_.end()) return it->second;
  Message m;
  m.route = layout_.route(from, to);
  const MessageCost cost = message_cost(layout_, plan_.protocol, m.route.hops, m.route.latency_s);
  m.route.latency_s = cost.latency_s;
  m.route.latency = Time::from_seconds(cost.latency_s);
  m.wire_per_byte = cost.wire_per_byte;
  return messages_cache_.emplace(key, std::move(m)).first->second;
}

// Starts phase cur_[ep] (and any that complete at once).
void CollectiveProcess::enter(std::size_t ep) {
  const std::size_t n = phases_.size();
  while (cur_[ep] < n) {
    const std::size_t p = cur_[ep];
    const Phase& ph = phases_[p];
    const std::uint32_t first = send_offsets_[p][ep], last = send_offsets_[p][ep + 1];
    pending_[ep] = last - first;
    start_parked(ep, p);
    const bool computes = ph.compute_s > 0 && ep < static_cast<std::size_t>(plan_.schedule.ranks());
    if (computes) {
      ++pending_[ep];
      const Time done = run_kernel(ep, ph.compute_s);
      engine_.at(done, [this, ep] { send_compute_done(ep); });
    } else {
      start_sends(ep, p);
    }
    if (pending_[ep] > 0 || recv_left_[p * vertex_.size() + ep] > 0) return;
    ++cur_[ep];
  }
  finish_ = std::max(finish_, engine_.now());
  if (--remaining_ == 0) {
    finished_ = true;
    if (on_done_) on_done_();
  }
}

void CollectiveProcess::start_sends(std::size_t ep, std::size_t p) {
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
void CollectiveProcess::start_parked(std::size_t ep, std::size_t p) {
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

void CollectiveProcess::send_flow(VertexId from, VertexId to, std::size_t p, std::uint32_t i,
                                  bool first_leg) {
  const Transfer& t = phases_[p].transfers[i];
  const Message& m = message(from, to);
  const double cap = t.max_rate_bytes_per_s > 0 ? t.max_rate_bytes_per_s * m.wire_per_byte
                                                : std::numeric_limits<double>::infinity();
  ++messages_;
  const Route* route = &m.route;
  Route scaled;
  if (t.follower) {  // a pipeline chunk behind the head: start_flow copies the route
    scaled = m.route;
    scaled.latency_s = 0;
    scaled.latency = Time::from_seconds(scaled.latency_s);
    route = &scaled;
  }
  // NCCL's channels are GPU copies that links arbitrate per flow: equal shares (0: the network's
  // round-trip rule, for plain message schedules).
  const double weight = plan_.protocol.modeled ? t.multiplicity
                        : t.multiplicity == 1  ? 0.0
                                              : t.multiplicity / std::max(m.route.latency_s, 1e-12);
  if (first_leg) {
    net_.start_flow(*route, t.bytes * m.wire_per_byte, cap, weight, [this, p, i] {
      const Transfer& u = phases_[p].transfers[i];
      const auto to_rank = static_cast<std::size_t>(u.dst);
      send_flow(staging_host_[to_rank], vertex_[to_rank], p, i, false);
    });
    return;
  }
  net_.start_flow(*route, t.bytes * m.wire_per_byte, cap, weight,
                  [this, p, i] { delivered(p, i); });
}

void CollectiveProcess::start_flow(std::size_t p, std::uint32_t i) {
  const Transfer& t = phases_[p].transfers[i];
  transfers_ += static_cast<std::uint64_t>(t.multiplicity);
  const auto src = static_cast<std::size_t>(t.src), dst = static_cast<std::size_t>(t.dst);
  if (src < staging_host_.size() && dst < staging_host_.size() &&
      staging_host_[src] == staging_host_[dst]) {
    send_flow(vertex_[src], staging_host_[src], p, i, true);
    return;
  }
  send_flow(vertex_[src], vertex_[dst], p, i, false);
}

void CollectiveProcess::send_compute_done(std::size_t ep) {
  start_sends(ep, cur_[ep]);
  --pending_[ep];
  check(ep);
}

Time CollectiveProcess::run_kernel(std::size_t ep, double seconds) {
  const Time start = std::max(engine_.now(), compute_free_[ep]);
  compute_free_[ep] = start + Time::from_seconds(seconds);
  return compute_free_[ep];
}

void CollectiveProcess::delivered(std::size_t p, std::uint32_t i) {
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

void CollectiveProcess::received(std::size_t p, std::size_t dst) {
  --recv_left_[p * vertex_.size() + dst];
  check(dst);
}

void CollectiveProcess::check(std::size_t ep) {
  const std::size_t p = cur_[ep];
  if (p >= phases_.size() || pending_[ep] > 0 || recv_left_[p * vertex_.size() + ep] > 0) return;
  ++cur_[ep];
  enter(ep);
}

}  // namespace trainsim::sim::collectives
