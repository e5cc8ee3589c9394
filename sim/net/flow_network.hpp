#pragma once
// Flow-level network on the event engine (SimGrid's CM02 model, without its TCP-gamma window cap
// and with cross-traffic off). A transfer first pays its route latency (sum of the links'
// latencies) without using bandwidth, then its bytes flow at a max-min fair share of every link
// direction on its route; shares are re-solved whenever a transfer starts flowing or ends.
//
// As in CM02, sharing is weighted by 1 / route latency (a transfer on a longer route gets a
// proportionally smaller share at a common bottleneck, like TCP's RTT unfairness); a zero-latency
// route has weight 1. Sharing::equal gives plain (unweighted) max-min instead.
//
// The network keeps at most one pending engine event: the earliest of its transfers' next
// transitions (latency paid, or last byte delivered), moved with Engine::cancel when rates change.
// Transition times are integer picoseconds; the same calls give bit-identical completion times.

#include <cstdint>
#include <vector>

#include "sim/core/engine.hpp"
#include "sim/net/max_min.hpp"
#include "sim/net/routing.hpp"
#include "sim/net/topology.hpp"

namespace trainsim::sim {

struct FlowId {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;  // 0: no flow
  explicit operator bool() const { return generation != 0; }
};

struct FlowNetworkStats {
  std::uint64_t flows_started = 0;
  std::uint64_t flows_completed = 0;
  std::size_t flows_active = 0;  // started and not yet completed (latency phase included)
  std::size_t peak_flows_active = 0;
  std::uint64_t rate_solves = 0;     // re-solves of dirty components
  std::uint64_t flows_resolved = 0;  // flows visited by those re-solves
  std::uint64_t events = 0;          // network events executed
};

class FlowNetwork {
 public:
  using Callback = Engine::Callback;
  enum class Sharing {
    latency_weighted,  // CM02: weight 1 / route latency
    equal,             // plain max-min
  };
  struct Options {
    Sharing sharing = Sharing::latency_weighted;
  };

  // The topology must outlive the network and must not gain links afterwards.
  FlowNetwork(Engine& engine, const Topology& topology, Options options);
  FlowNetwork(Engine& engine, const Topology& topology)
      : FlowNetwork(engine, topology, Options{}) {}
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;
  ~FlowNetwork();

  // Starts sending `bytes` (>= 0, finite) from src to dst now; on_done runs (as part of a network
  // event) at the simulated time the last byte arrives. src == dst completes at once.
  FlowId start_flow(VertexId src, VertexId dst, double bytes, Callback on_done);
  // Same, over a route from this network's router (or any route valid on this topology).
  FlowId start_flow(const Route& route, double bytes, Callback on_done);
  // Same, with the flow's rate capped at max_rate_bytes_per_s (> 0; infinity: no cap), e.g. the
  // copy throughput of the GPU thread block that drives one collective channel. The cap is a
  // resource of the flow's own, so it takes part in max-min sharing like a link.
  FlowId start_flow(const Route& route, double bytes, double max_rate_bytes_per_s,
                    Callback on_done);
  // Same, with the flow's sharing weight given (> 0) instead of the network's rule: e.g. flows
  // of GPU copy engines, which links arbitrate per flow, not by round-trip time.
  FlowId start_flow(const Route& route, double bytes, double max_rate_bytes_per_s, double weight,
                    Callback on_done);

  Router& router() { return router_; }
  const Topology& topology() const { return topology_; }
  const FlowNetworkStats& stats() const { return stats_; }

  // Current rate of a flow in bytes/s: 0 while it pays latency or after it completed.
  double rate_bytes_per_s(FlowId id) const;
  bool active(FlowId id) const;

  // Bytes delivered over a link by completed flows, per direction or in total.
  double link_bytes(LinkId link, bool forward) const {
    return link_bytes_[2 * link + (forward ? 0 : 1)];
  }
  double link_bytes(LinkId link) const { return link_bytes_[2 * link] + link_bytes_[2 * link + 1]; }

 private:
  enum class State : std::uint8_t { free, latency, transfer };
  struct Flow {
    Callback on_done;
    std::vector<std::uint32_t> directed;  // 2 * link + (forward ? 0 : 1)
    std::vector<MaxMinSolver::ResourceId> resources;
    double bytes = 0;
    double remaining = 0;  // bytes left at last_update
    double rate = 0;
    double weight = 1;
    Time last_update;
    Time due;  // next transition
    std::uint64_t seq = 0;
    std::uint32_t generation = 0;
    std::uint32_t heap_pos = 0;
    MaxMinSolver::VarId var = MaxMinSolver::kNoVar;
    MaxMinSolver::ResourceId cap = kNoCap;  // this slot's rate-cap resource, made on first use
    State state = State::free;
  };
  static constexpr MaxMinSolver::ResourceId kNoCap = MaxMinSolver::kNoVar;

  std::uint32_t acquire_slot();
  void on_event();
  void reschedule();
  void set_rate(std::uint32_t slot, double rate, Time now);
  // Indexed min-heap of flow slots on (due, seq).
  bool heap_less(std::uint32_t a, std::uint32_t b) const;
  void heap_push(std::uint32_t slot);
  void heap_pop();
  void heap_update(std::uint32_t slot);
  void heap_place(std::size_t i, std::uint32_t slot);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);

  Engine& engine_;
  const Topology& topology_;
  Options options_;
  Router router_;
  MaxMinSolver solver_;
  std::vector<MaxMinSolver::ResourceId> resource_of_directed_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> var_owner_;  // solver variable -> flow slot
  std::vector<std::uint32_t> heap_;
  std::vector<std::uint32_t> done_;  // scratch: flows completing in the current event
  std::vector<double> link_bytes_;
  EventId event_;
  Time event_time_;
  std::uint64_t next_seq_ = 1;
  bool in_event_ = false;
  FlowNetworkStats stats_;
};

}  // namespace trainsim::sim
