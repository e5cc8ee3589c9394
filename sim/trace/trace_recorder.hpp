#pragma once
// Records what simulated resources did (spans on named tracks) and writes Chrome trace-event
// JSON that Perfetto and chrome://tracing open. A track is a (process, thread) pair: e.g.
// ("gpu0", "compute"), ("host0", "input workers"), ("link nvlink 0->1", "busy"). Output order is
// insertion order, so identical runs give byte-identical traces.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/core/time.hpp"

namespace trainsim::sim {

class TraceRecorder {
 public:
  using TrackId = std::uint32_t;

  // Returns the track for (process, thread), creating it on first use.
  TrackId track(std::string_view process, std::string_view thread);
  // A span of activity [start, end) on `track`; `category` groups spans (e.g. "compute",
  // "comm", "stall", "bubble") so the viewer can colour and filter them.
  void span(TrackId track, std::string_view name, std::string_view category, Time start, Time end);
  // A zero-length marker (e.g. "step 3 end").
  void instant(TrackId track, std::string_view name, Time at);

  std::size_t spans() const { return spans_.size(); }
  std::size_t tracks() const { return tracks_.size(); }

  // {"traceEvents": [...], "displayTimeUnit": "ns"}; timestamps in microseconds printed exactly
  // from picoseconds.
  void write_chrome_json(std::ostream& os) const;

 private:
  struct Track {
    std::uint32_t pid;
    std::uint32_t tid;
    std::string thread;
  };
  struct Span {
    TrackId track;
    std::uint32_t name;
    std::uint32_t category;  // kInstant for instants
    std::int64_t start_ps;
    std::int64_t end_ps;
  };
  static constexpr std::uint32_t kInstant = 0xffffffffu;

  std::uint32_t intern(std::string_view text);

  std::vector<std::string> processes_;
  std::unordered_map<std::string, std::uint32_t> process_ids_;
  std::vector<Track> tracks_;
  std::unordered_map<std::string, TrackId> track_ids_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint32_t> string_ids_;
  std::vector<Span> spans_;
};

}  // namespace trainsim::sim
