#pragma once
// A collective as an event-driven process on an engine and a flow network owned by the caller,
// so that several collectives (and any other traffic: pipeline sends, host copies) can run at
// once and contend for links. This is how the training step's simulator runs its gradient
// collectives on the step's own engine:
//
//   const ClusterLayout layout(cluster);              // once per cluster
//   ClusterTopology topo = build_cluster_topology(cluster);
//   FlowNetwork net(engine, topo.topology);           // shared by all traffic of the step
//   Plan plan = plan_collective(cluster, spec);       // once per distinct bucket (memoize)
//   CollectiveProcess p(engine, net, layout, plan);   // one per bucket, kept alive until done
//   p.start([&] { bucket_done(); });                  // at the simulated time the bucket is ready
//
// Every message is a flow of `net` on the route ClusterLayout gives; each rank advances through
// its phases on its own (a message moves once its receiver reached the same phase, as NCCL's
// credits); serial kernels (merges, non-fused reductions) run on a per-rank timeline of the
// process. Reduction kernels fused into NCCL's collective kernel cap the arriving flows instead
// (Transfer::max_rate_bytes_per_s); taking device time from concurrent compute is the step
// simulator's part.

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/collectives/algorithms.hpp"
#include "sim/core/engine.hpp"
#include "sim/net/cluster_layout.hpp"
#include "sim/net/flow_network.hpp"

namespace trainsim::sim::collectives {

class CollectiveProcess {
 public:
  // `net` must run over build_cluster_topology(layout.spec()) (the layout's link ids). The
  // engine, network and layout must outlive the process; the process must outlive its run.
  CollectiveProcess(Engine& engine, FlowNetwork& net, const ClusterLayout& layout, Plan plan);
  CollectiveProcess(const CollectiveProcess&) = delete;
  CollectiveProcess& operator=(const CollectiveProcess&) = delete;

  // Starts now; `on_done` runs when every rank has finished (inside an engine event; at once,
  // inside start(), for a plan with nothing to do, e.g. one rank).
  void start(std::function<void()> on_done);
  bool finished() const { return finished_; }
  Time start_time() const { return start_; }
  Time finish_time() const { return finish_; }
  double duration_s() const { return (finish_ - start_).seconds(); }
  const Plan& plan() const { return plan_; }
  std::uint64_t messages() const { return transfers_; }  // the schedule's messages started

 private:
  struct Parked {
    std::size_t phase;
    std::uint32_t index;
  };
  struct Message {
    Route route;
    double wire_per_byte = 1;
  };

  void enter(std::size_t ep);
  void start_sends(std::size_t ep, std::size_t p);
  void start_parked(std::size_t ep, std::size_t p);
  void start_flow(std::size_t p, std::uint32_t i);
  void send_flow(VertexId from, VertexId to, std::size_t p, std::uint32_t i, bool first_leg);
  void send_compute_done(std::size_t ep);
  Time run_kernel(std::size_t ep, double seconds);
  void delivered(std::size_t p, std::uint32_t i);
  void received(std::size_t p, std::size_t dst);
  void check(std::size_t ep);
  const Message& message(VertexId from, VertexId to);

  Engine& engine_;
  FlowNetwork& net_;
  const ClusterLayout& layout_;
  Plan plan_;
  std::vector<VertexId> vertex_;
  std::vector<VertexId> staging_host_;  // per rank, only without peer-to-peer
  std::vector<Phase> phases_;
  std::vector<std::vector<std::uint32_t>> send_offsets_;
  std::vector<std::uint32_t> recv_left_;  // [phase * endpoints + endpoint]
  std::vector<std::size_t> cur_;
  std::vector<std::uint32_t> pending_;
  std::vector<Time> compute_free_;
  std::vector<std::vector<Parked>> parked_;  // by receiver: messages waiting for its phase
  std::unordered_map<std::uint64_t, Message> messages_cache_;
  std::function<void()> on_done_;
  std::size_t remaining_ = 0;  // endpoints not finished
  Time start_ = Time::zero();
  Time finish_ = Time::zero();
  bool finished_ = false;
  std::uint64_t messages_ = 0;  // flows (a staged message is two)
  std::uint64_t transfers_ = 0;
};

// Resolves a spec the way run_collective does (group, automatic algorithm, fastest protocol; the
// choices are made by standalone runs of the candidates, memoize the plan per distinct size) and
// returns the plan to run.
Plan plan_collective(const ClusterSpec& cluster, const CollectiveSpec& spec);

}  // namespace trainsim::sim::collectives
