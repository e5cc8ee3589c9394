#pragma once
// A collective as a sequence of phases. In a phase every endpoint first runs its compute (if
// any), then sends its transfers (a message moves once its receiver has reached the phase too:
// rendezvous); it moves to the next phase once its sends are delivered and its
// receives have arrived and been processed (the receiver's kernel, e.g. a reduction, runs on its
// accelerator right after arrival). Endpoints 0..ranks-1 are the ranks' accelerators,
// ranks + h is the host of node h (parameter servers), ranks + hosts + s is switch s (a node's
// NVSwitch for NVLS, a rail's root switch for SHARP; see Plan::switches).
//
// Phases with equal keys are identical, so the aggregated runner solves each key once: a ring
// has two keys however many ranks it has.

#include <cstdint>
#include <functional>
#include <vector>

namespace trainsim::sim::collectives {

struct Transfer {
  std::int32_t src = 0;
  std::int32_t dst = 0;
  double bytes = 0;
  double receiver_compute_s = 0;  // kernel the receiver runs on arrival (reduction, merge)
  // Cap on the message's rate (0: none): the channel's protocol throughput, or the receiver's
  // share of its reduction kernel when it reduces the data as it arrives (NCCL's fused reduce).
  double max_rate_bytes_per_s = 0;
  std::int32_t channel = 0;  // chunks of one channel between the same pair travel as one message
  // Channels this message stands for: k identical channels' messages (same route, size and cap)
  // travel as one of k times the bytes, cap and share weight, which max-min sharing treats
  // exactly as the k messages.
  std::int32_t multiplicity = 1;
  // A pipeline chunk behind the head chunk: it overlaps its latency with the chunks ahead of it
  // (NCCL's in-flight slots; add_steps).
  bool follower = false;
};

struct Phase {
  std::vector<Transfer> transfers;
  double compute_s = 0;  // run by every rank (not host endpoints) before its sends
};

class Schedule {
 public:
  using Emit = std::function<void(std::vector<Transfer>&)>;

  explicit Schedule(int ranks, int hosts = 0, int switches = 0)
      : ranks_(ranks), hosts_(hosts), switches_(switches) {}

  // A phase in which every rank runs a kernel of `seconds`.
  void add_compute(double seconds);
  // `steps` steps, step i's transfers from emit_step(i, out); step_key(i) identifies equal steps.
  // With chunks > 1 the payload is cut into chunks that move as a pipeline (wavefront): phase q
  // carries chunk j of step q - j for every j, bytes and receiver compute divided by `chunks`.
  // The head chunk pays each step's latency; the chunks behind it pay none (see Transfer): NCCL
  // keeps NCCL_STEPS = 8 chunks in flight per connection (NVIDIA/nccl src/include/device.h), so
  // their handshakes overlap the transfers ahead of them (hidden while a slice's transfer takes
  // more than 1/8 of a step latency: 512 KiB at 25 GB/s is 21 us against 2-25 us step latencies).
  void add_steps(int steps, int chunks, const std::function<std::uint64_t(int)>& step_key,
                 const std::function<void(int, std::vector<Transfer>&)>& emit_step);

  int ranks() const { return ranks_; }
  int hosts() const { return hosts_; }
  int switches() const { return switches_; }
  int endpoints() const { return ranks_ + hosts_ + switches_; }
  std::size_t num_phases() const { return keys_.size(); }
  std::size_t num_keys() const { return num_keys_; }
  std::uint32_t key(std::size_t phase) const { return keys_[phase]; }
  Phase build(std::size_t phase) const;
  // The same into `out`, reusing its storage.
  void build(std::size_t phase, Phase& out) const;

 private:
  struct Segment {
    std::size_t first_phase = 0;
    std::size_t phases = 0;
    double compute_s = 0;
    int steps = 0;
    int chunks = 1;
    std::function<void(int, std::vector<Transfer>&)> emit;
  };

  int ranks_;
  int hosts_;
  int switches_;
  std::vector<Segment> segments_;
  std::vector<std::uint32_t> keys_;
  std::uint32_t num_keys_ = 0;
};

}  // namespace trainsim::sim::collectives
