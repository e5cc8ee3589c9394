#include "sim/trace/trace_recorder.hpp"

#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace trainsim::sim {

namespace {

// Picoseconds as a decimal number of microseconds, exact (no floating point).
std::string microseconds(std::int64_t ps) {
  const bool negative = ps < 0;
  const std::uint64_t magnitude =
      negative ? static_cast<std::uint64_t>(-(ps + 1)) + 1 : static_cast<std::uint64_t>(ps);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%06" PRIu64, negative ? "-" : "",
                magnitude / 1'000'000u, magnitude % 1'000'000u);
  return buf;
}

std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump();
}

}  // namespace

std::uint32_t TraceRecorder::intern(std::string_view text) {
  auto [it, inserted] =
      string_ids_.try_emplace(std::string(text), static_cast<std::uint32_t>(strings_.size()));
  if (inserted) strings_.emplace_back(text);
  return it->second;
}

TraceRecorder::TrackId TraceRecorder::track(std::string_view process, std::string_view thread) {
  std::string key;
  key.reserve(process.size() + thread.size() + 1);
  key.append(process).push_back('\0');
  key.append(thread);
  if (auto it = track_ids_.find(key); it != track_ids_.end()) return it->second;
  auto [pit, new_process] =
      process_ids_.try_emplace(std::string(process), static_cast<std::uint32_t>(processes_.size()));
  if (new_process) processes_.emplace_back(process);
  std::uint32_t tid = 0;
  for (const auto& t : tracks_)
    tid += t.pid == pit->second ? 1 : 0;
  const auto id = static_cast<TrackId>(tracks_.size());
  tracks_.push_back({pit->second, tid, std::string(thread)});
  track_ids_.emplace(std::move(key), id);
  return id;
}

void TraceRecorder::span(TrackId track, std::string_view name, std::string_view category,
                         Time start, Time end) {
  if (track >= tracks_.size()) throw std::logic_error("TraceRecorder::span: unknown track");
  if (end < start) throw std::logic_error("TraceRecorder::span: end before start");
  spans_.push_back({track, intern(name), intern(category), start.picoseconds(), end.picoseconds()});
}

void TraceRecorder::instant(TrackId track, std::string_view name, Time at) {
  if (track >= tracks_.size()) throw std::logic_error("TraceRecorder::instant: unknown track");
  spans_.push_back({track, intern(name), kInstant, at.picoseconds(), at.picoseconds()});
}

void TraceRecorder::write_chrome_json(std::ostream& os) const {
  os << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) os << ",\n";
    first = false;
  };
  for (std::size_t p = 0; p < processes_.size(); ++p) {
    sep();
    os << R"({"ph":"M","name":"process_name","pid":)" << p << R"(,"args":{"name":)"
       << quoted(processes_[p]) << "}}";
    sep();
    os << R"({"ph":"M","name":"process_sort_index","pid":)" << p << R"(,"args":{"sort_index":)" << p
       << "}}";
  }
  for (const auto& t : tracks_) {
    sep();
    os << R"({"ph":"M","name":"thread_name","pid":)" << t.pid << ",\"tid\":" << t.tid
       << R"(,"args":{"name":)" << quoted(t.thread) << "}}";
  }
  for (const auto& s : spans_) {
    const Track& t = tracks_[s.track];
    sep();
    if (s.category == kInstant) {
      os << R"({"ph":"i","s":"t","name":)" << quoted(strings_[s.name]) << ",\"pid\":" << t.pid
         << ",\"tid\":" << t.tid << ",\"ts\":" << microseconds(s.start_ps) << "}";
    } else {
      os << R"({"ph":"X","name":)" << quoted(strings_[s.name])
         << ",\"cat\":" << quoted(strings_[s.category]) << ",\"pid\":" << t.pid
         << ",\"tid\":" << t.tid << ",\"ts\":" << microseconds(s.start_ps)
         << ",\"dur\":" << microseconds(s.end_ps - s.start_ps) << "}";
    }
  }
  os << "\n]}\n";
}

}  // namespace trainsim::sim
