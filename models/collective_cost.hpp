#pragma once
// What the gradient collectives of a training step cost. CollectiveCoster prices them with the
// flow-level message schedules of sim/collectives (channels, protocols, contention, routes,
// reduction kernels), memoized per size, at every rank count: message by message up to 64
// ranks, phase-aggregated beyond, on every fabric. The alpha-beta closed forms below price them
// only when the scenario asks for it (communication.model = "alpha_beta"), and the pipeline
// simulator's per-stage allreduces use them. The training step runs each collective as one
// timed operation on the communication stream.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "models/scenario.hpp"
#include "sim/collectives/collective.hpp"

namespace trainsim::models {

struct PathCost {
  double alpha_s;         // per-message latency: the slowest route between ring neighbours
  double bw_bytes_per_s;  // per-rank bandwidth
};

// The path a rank's ring traffic takes: NVLink/PCIe inside a node (through the host without
// peer-to-peer), the NIC share across nodes; alpha is the latency of the route (all its links),
// the intra-node neighbours' or, across nodes, the node-crossing neighbours'.
PathCost ring_path(const sim::ClusterSpec& c, int ranks);
// The link that bounds ring_path, for trace labels ("nvlink3", "pcie3-x16 via host", "eth-1g").
std::string ring_path_name(const sim::ClusterSpec& c, int ranks);

// Dense allreduce of `bytes` over `ranks` ranks, alpha-beta, plus the reduction kernels (each
// rank reduces (P-1)/P of the data, at the accelerator's reduction rate).
double allreduce_time_s(const sim::ClusterSpec& c, const CommSpec& comm, int ranks, double bytes);
// Sparsified exchange of k = density x elements values (+ k indices), per the gTop-k paper:
// topk: AllGather a log2 P + 2(P-1)k b; gtopk: 2 a log2 P + 4 k b log2 P (b per element).
double sparse_allreduce_time_s(const sim::ClusterSpec& c, const CommSpec& comm, int ranks,
                               double elements, int value_bytes);

class CollectiveCoster {
 public:
  // Collectives among the first `ranks` accelerators of the scenario's cluster, with its
  // communication settings (algorithm, compression, density, model) and gradient dtype.
  // `dtype`: what the collectives carry when it is not the gradients (tensor-parallel
  // activations).
  CollectiveCoster(const Scenario& s, int ranks, std::optional<sim::Dtype> dtype = std::nullopt);

  // Dense allreduce of one gradient bucket of `bytes`.
  double dense_allreduce_s(double bytes);
  // Channels (thread blocks, one per SM) the collective library runs that allreduce with: the
  // run's own count (sim/collectives channel_count), 1 without a library.
  int dense_allreduce_channels(double bytes);
  // Any dense collective of `bytes` (the whole buffer: an all-gather's output, a
  // reduce-scatter's input), priced as dense_allreduce_s is.
  double dense_s(sim::collectives::Op op, double bytes);
  // Top-k / gTop-k exchange of `elements` gradients: the messages, merges and scatter-adds; the
  // selection is compute the step charges before it (with sim/collectives/kernels.hpp's costs).
  double sparse_allreduce_s(double elements);

  // The gradients' dtype as the collectives carry them (the framework's mixed-precision mode).
  sim::Dtype gradient_dtype() const;

  // "flow-level", "flow-level (phase-aggregated)" or "alpha-beta (communication.model)".
  const std::string& model_name() const { return model_name_; }
  std::uint64_t events() const { return events_; }

 private:
  struct Priced {
    double time_s = 0;
    int channels = 1;
  };
  Priced priced(double bytes, bool sparse,
                sim::collectives::Op op = sim::collectives::Op::allreduce);
  const Priced& dense(double bytes);

  const Scenario& s_;
  int ranks_;
  bool flow_level_ = true;
  std::string model_name_;
  std::uint64_t events_ = 0;
  std::optional<sim::Dtype> dtype_;
  std::map<double, Priced> dense_memo_;
  std::map<std::pair<int, double>, double> op_memo_;
  std::map<double, double> sparse_memo_;
};

}  // namespace trainsim::models
