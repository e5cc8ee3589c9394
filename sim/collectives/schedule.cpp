#include "sim/collectives/schedule.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace trainsim::sim::collectives {

void Schedule::add_compute(double seconds) {
  Segment s;
  s.first_phase = keys_.size();
  s.phases = 1;
  s.compute_s = seconds;
  segments_.push_back(std::move(s));
  keys_.push_back(num_keys_++);
}

void Schedule::add_steps(int steps, int chunks, const std::function<std::uint64_t(int)>& step_key,
                         const std::function<void(int, std::vector<Transfer>&)>& emit_step) {
  if (steps <= 0) return;
  chunks = std::max(1, chunks);
  Segment s;
  s.first_phase = keys_.size();
  s.phases = static_cast<std::size_t>(steps + chunks - 1);
  s.steps = steps;
  s.chunks = chunks;
  s.emit = emit_step;
  // A wavefront phase is identified by the keys of the steps it carries (in order).
  std::map<std::vector<std::uint64_t>, std::uint32_t> ids;
  std::vector<std::uint64_t> window;
  for (std::size_t q = 0; q < s.phases; ++q) {
    window.clear();
    for (int j = 0; j < chunks; ++j) {
      const int step = static_cast<int>(q) - j;
      window.push_back(step >= 0 && step < steps ? step_key(step) : ~std::uint64_t{0});
    }
    const auto [it, fresh] = ids.emplace(window, num_keys_);
    if (fresh) ++num_keys_;
    keys_.push_back(it->second);
  }
  segments_.push_back(std::move(s));
}

Phase Schedule::build(std::size_t phase) const {
  Phase out;
  build(phase, out);
  return out;
}

void Schedule::build(std::size_t phase, Phase& out) const {
  auto seg = std::upper_bound(segments_.begin(), segments_.end(), phase,
                              [](std::size_t p, const Segment& s) { return p < s.first_phase; });
  const Segment& s = *(seg - 1);
  out.transfers.clear();
  out.compute_s = 0;
  if (!s.emit) {
    out.compute_s = s.compute_s;
    return;
  }
  const int q = static_cast<int>(phase - s.first_phase);
  if (s.chunks == 1) {  // one step, emitted in place
    s.emit(q, out.transfers);
    return;
  }
  std::vector<Transfer> step;
  for (int j = 0; j < s.chunks; ++j) {
    const int i = q - j;
    if (i < 0 || i >= s.steps) continue;
    step.clear();
    s.emit(i, step);
    for (Transfer t : step) {
      t.bytes /= s.chunks;
      t.receiver_compute_s /= s.chunks;
      if (j > 0) t.follower = true;
      out.transfers.push_back(t);
    }
  }
  if (s.chunks > 1) {
    // Chunks of different steps between the same pair on one channel travel as one message
    // (driven by the channel's one thread block: its rate cap is not added up).
    std::stable_sort(out.transfers.begin(), out.transfers.end(),
                     [](const Transfer& a, const Transfer& b) {
                       return std::tie(a.src, a.dst, a.channel) < std::tie(b.src, b.dst, b.channel);
                     });
    std::size_t w = 0;
    for (std::size_t r = 0; r < out.transfers.size(); ++r) {
      Transfer& last = out.transfers[w > 0 ? w - 1 : 0];
      const Transfer& t = out.transfers[r];
      if (w > 0 && last.src == t.src && last.dst == t.dst && last.channel == t.channel) {
        last.bytes += t.bytes;
        last.receiver_compute_s += t.receiver_compute_s;
        last.follower = last.follower && t.follower;
        last.max_rate_bytes_per_s =
            last.max_rate_bytes_per_s > 0 && t.max_rate_bytes_per_s > 0
                ? std::max(last.max_rate_bytes_per_s, t.max_rate_bytes_per_s)
                : 0.0;
      } else {
        out.transfers[w++] = out.transfers[r];
      }
    }
    out.transfers.resize(w);
  }
}

}  // namespace trainsim::sim::collectives
