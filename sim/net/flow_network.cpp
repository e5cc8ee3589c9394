#include "sim/net/flow_network.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace trainsim::sim {

FlowNetwork::FlowNetwork(Engine& engine, const Topology& topology, Options options)
    : engine_(engine), topology_(topology), options_(options), router_(topology) {
  const std::size_t links = topology.num_links();
  resource_of_directed_.resize(2 * links);
  link_bytes_.assign(2 * links, 0.0);
  for (LinkId l = 0; l < links; ++l) {
    const LinkProps& props = topology.link(l);
    const auto forward = solver_.add_resource(props.bw_bytes_per_s);
    resource_of_directed_[2 * l] = forward;
    resource_of_directed_[2 * l + 1] =
        props.duplex == Duplex::full ? solver_.add_resource(props.bw_bytes_per_s) : forward;
  }
}

FlowNetwork::~FlowNetwork() {
  if (event_) engine_.cancel(event_);
}

std::uint32_t FlowNetwork::acquire_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  flows_.emplace_back();
  return static_cast<std::uint32_t>(flows_.size() - 1);
}

FlowId FlowNetwork::start_flow(VertexId src, VertexId dst, double bytes, Callback on_done) {
  return start_flow(router_.route(src, dst), bytes, std::move(on_done));
}

FlowId FlowNetwork::start_flow(const Route& route, double bytes, Callback on_done) {
  return start_flow(route, bytes, std::numeric_limits<double>::infinity(), std::move(on_done));
}

FlowId FlowNetwork::start_flow(const Route& route, double bytes, double max_rate_bytes_per_s,
                               Callback on_done) {
  return start_flow(route, bytes, max_rate_bytes_per_s, 0.0, std::move(on_done));
}

FlowId FlowNetwork::start_flow(const Route& route, double bytes, double max_rate_bytes_per_s,
                               double weight, Callback on_done) {
  if (!(weight >= 0) || !std::isfinite(weight)) {
    throw std::invalid_argument("FlowNetwork::start_flow: the weight must be positive");
  }
  if (!(max_rate_bytes_per_s > 0)) {
    throw std::invalid_argument("FlowNetwork::start_flow: the rate cap must be positive");
  }
  if (!(bytes >= 0) || !std::isfinite(bytes)) {
    throw std::invalid_argument("FlowNetwork::start_flow: bytes must be non-negative and finite");
  }
  const std::uint32_t s = acquire_slot();
  Flow& f = flows_[s];
  f.on_done = std::move(on_done);
  f.directed.clear();
  f.resources.clear();
  for (const Hop& hop : route.hops) {
    if (hop.link >= topology_.num_links())
      throw std::invalid_argument("start_flow: route has an unknown link");
    const std::uint32_t d = 2 * hop.link + (hop.forward ? 0 : 1);
    f.directed.push_back(d);
    f.resources.push_back(resource_of_directed_[d]);
  }
  if (std::isfinite(max_rate_bytes_per_s) && !f.resources.empty()) {
    // Slots are reused, so their cap resources are too: at most one per concurrent flow.
    if (f.cap == kNoCap) {
      f.cap = solver_.add_resource(max_rate_bytes_per_s);
    } else {
      solver_.set_capacity(f.cap, max_rate_bytes_per_s);
    }
    f.resources.push_back(f.cap);
  }
  f.bytes = bytes;
  f.remaining = bytes;
  f.rate = 0;
  f.weight = weight > 0 ? weight
             : options_.sharing == Sharing::latency_weighted && route.latency_s > 0
                 ? 1.0 / route.latency_s
                 : 1.0;
  f.last_update = engine_.now();
  f.due = engine_.now() + route.latency;
  f.seq = next_seq_++;
  if (++f.generation == 0) f.generation = 1;
  f.var = MaxMinSolver::kNoVar;
  f.state = State::latency;
  heap_push(s);
  ++stats_.flows_started;
  if (++stats_.flows_active > stats_.peak_flows_active)
    stats_.peak_flows_active = stats_.flows_active;
  if (!in_event_) reschedule();
  return FlowId{s, f.generation};
}

bool FlowNetwork::active(FlowId id) const {
  return id && id.slot < flows_.size() && flows_[id.slot].generation == id.generation &&
         flows_[id.slot].state != State::free;
}

double FlowNetwork::rate_bytes_per_s(FlowId id) const {
  return active(id) ? flows_[id.slot].rate : 0.0;
}

void FlowNetwork::reschedule() {
  if (heap_.empty()) {
    if (event_) engine_.cancel(event_);
    event_ = EventId{};
    return;
  }
  const Time next = flows_[heap_.front()].due;
  if (event_ && event_time_ == next) return;
  if (event_) engine_.cancel(event_);
  event_time_ = next;
  event_ = engine_.at(next, [this] { on_event(); });
}

void FlowNetwork::set_rate(std::uint32_t s, double rate, Time now) {
  Flow& f = flows_[s];
  if (f.rate > 0) {
    f.remaining -= f.rate * (now - f.last_update).seconds();
    if (f.remaining < 0) f.remaining = 0;
  }
  f.last_update = now;
  f.rate = rate;
  f.due = now + Time::from_seconds(f.remaining / rate);
  heap_update(s);
}

void FlowNetwork::on_event() {
  event_ = EventId{};
  in_event_ = true;
  ++stats_.events;
  const Time now = engine_.now();
  // Each round: apply every transition due now as one batch, re-solve once, then run the
  // completion callbacks (which may start flows that are due now too: another round).
  while (!heap_.empty() && flows_[heap_.front()].due <= now) {
    done_.clear();
    while (!heap_.empty() && flows_[heap_.front()].due <= now) {
      const std::uint32_t s = heap_.front();
      heap_pop();
      Flow& f = flows_[s];
      if (f.state == State::latency) {
        f.state = State::transfer;
        f.last_update = now;
        if (f.resources.empty() || f.bytes == 0) {
          done_.push_back(s);  // nothing to share: arrives with its latency
          continue;
        }
        f.var = solver_.add_variable(f.weight, f.resources);
        if (var_owner_.size() <= f.var) var_owner_.resize(f.var + 1);
        var_owner_[f.var] = s;
        f.rate = 0;
        f.due = Time::max();
        heap_push(s);  // placed for real once its rate is known
      } else {
        solver_.remove_variable(f.var);
        f.var = MaxMinSolver::kNoVar;
        done_.push_back(s);
      }
    }
    ++stats_.rate_solves;
    stats_.flows_resolved += solver_.solve(
        [&](MaxMinSolver::VarId v, double rate) { set_rate(var_owner_[v], rate, now); });
    for (const std::uint32_t s : done_) {
      Flow& f = flows_[s];
      for (const std::uint32_t d : f.directed)
        link_bytes_[d] += f.bytes;
      f.state = State::free;
      f.rate = 0;
      Callback cb = std::move(f.on_done);
      free_slots_.push_back(s);
      ++stats_.flows_completed;
      --stats_.flows_active;
      if (cb) cb();  // may start flows: flows_ may grow, so `f` is not used after this
    }
  }
  in_event_ = false;
  reschedule();
}

bool FlowNetwork::heap_less(std::uint32_t a, std::uint32_t b) const {
  const Flow& x = flows_[a];
  const Flow& y = flows_[b];
  return x.due < y.due || (x.due == y.due && x.seq < y.seq);
}

void FlowNetwork::heap_place(std::size_t i, std::uint32_t slot) {
  heap_[i] = slot;
  flows_[slot].heap_pos = static_cast<std::uint32_t>(i);
}

void FlowNetwork::sift_up(std::size_t i) {
  const std::uint32_t slot = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!heap_less(slot, heap_[parent])) break;
    heap_place(i, heap_[parent]);
    i = parent;
  }
  heap_place(i, slot);
}

void FlowNetwork::sift_down(std::size_t i) {
  const std::uint32_t slot = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_less(heap_[child + 1], heap_[child])) ++child;
    if (!heap_less(heap_[child], slot)) break;
    heap_place(i, heap_[child]);
    i = child;
  }
  heap_place(i, slot);
}

void FlowNetwork::heap_push(std::uint32_t slot) {
  heap_.push_back(slot);
  sift_up(heap_.size() - 1);
}

void FlowNetwork::heap_pop() {
  const std::uint32_t last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) {
    heap_place(0, last);
    sift_down(0);
  }
}

void FlowNetwork::heap_update(std::uint32_t slot) {
  const std::size_t i = flows_[slot].heap_pos;
  sift_up(i);
  sift_down(flows_[slot].heap_pos);
}

}  // namespace trainsim::sim
