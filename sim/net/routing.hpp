#pragma once
// Shortest-path routing over a Topology: fewest hops first, then lowest latency (compared in
// integer picoseconds so equal sums tie exactly), then the lowest vertex id settled first, so the
// same topology always yields the same routes. Routes are computed on first use and cached per
// (src, dst); a cached route's address stays valid for the Router's lifetime.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/net/topology.hpp"

namespace trainsim::sim {

struct Hop {
  LinkId link = 0;
  bool forward = true;  // traversed from the link's `a` endpoint to its `b` endpoint
};

struct Route {
  VertexId src = 0;
  VertexId dst = 0;
  std::vector<Hop> hops;
  double latency_s = 0;         // sum of the links' latencies, in route order
  Time latency = Time::zero();  // latency_s rounded to the picosecond
};

class Router {
 public:
  explicit Router(const Topology& topology) : topology_(topology) {}

  // Throws std::invalid_argument for an unknown vertex, std::runtime_error when dst is unreachable.
  const Route& route(VertexId src, VertexId dst);
  std::size_t cached_routes() const { return cache_.size(); }

 private:
  Route compute(VertexId src, VertexId dst);

  const Topology& topology_;
  std::unordered_map<std::uint64_t, Route> cache_;
  // Dijkstra scratch, reused across computations.
  std::vector<std::uint32_t> hops_;
  std::vector<std::int64_t> latency_ps_;
  std::vector<std::int64_t> pred_link_;  // -1: none
  std::vector<std::uint32_t> visit_epoch_;
  std::vector<std::uint32_t> settled_epoch_;
  std::uint32_t epoch_ = 0;
};

}  // namespace trainsim::sim
