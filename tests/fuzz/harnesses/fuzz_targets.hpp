#pragma once
// The bodies of the fuzz harnesses, shared by the libFuzzer executables (tests/fuzz, built with
// clang -fsanitize=fuzzer) and by the replay test (tests/hostile/fuzz_replay_test.cpp) that runs
// every seed and every regression input through the ordinary build. Each body feeds one input
// to a reader of user input; rejecting it is fine (InputError / UsageError, exit 2 in the
// command), anything else escaping - another exception, a crash, a sanitizer report, a hang -
// is a finding.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/sweep_spec.hpp"
#include "fit/points_csv.hpp"
#include "models/scenario.hpp"
#include "sim/config/embedded_file.hpp"
#include "sim/config/json_reader.hpp"
#include "sim/config/json_source.hpp"
#include "sim/config/profile_library.hpp"
#include "sim/config/provenance.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::hw_profiles {
std::span<const sim::EmbeddedFile> embedded_files();
}
namespace trainsim::examples {
std::span<const sim::EmbeddedFile> embedded_files();
}

namespace trainsim::fuzz {

inline const sim::ProfileLibrary& profiles() {
  static const sim::ProfileLibrary library(hw_profiles::embedded_files(), {});
  return library;
}

inline nlohmann::json demo_scenario() {
  for (const auto& f : examples::embedded_files()) {
    if (f.path == "resnet50_dgx_a100.json")
      return sim::parse_json_text(std::string(f.content), "demo");
  }
  return nlohmann::json::object();
}

inline std::vector<std::string> lines_of(std::string_view data, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= data.size() && lines.size() < max_lines) {
    const auto end = data.find('\n', start);
    lines.emplace_back(data.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return lines;
}

// JSON text as a profile (by its "kind", with the sources of its comments) or else as a
// scenario.
inline void json_document(std::string_view data) {
  try {
    const nlohmann::json doc = sim::parse_json_text(std::string(data), "fuzz.json");
    (void)sim::show_json(doc);
    (void)sim::parse_provenance(data);  // its comments' sources, as a profile's are read
    if (!doc.is_object()) return;
    auto source = std::make_shared<sim::JsonSource>();
    source->file = "fuzz.json";
    const auto kind = doc.find("kind");
    if (kind != doc.end() && kind->is_string()) {
      sim::JsonReader r(doc, source);
      if (*kind == "accelerator") (void)sim::read_accelerator(r, profiles());
      if (*kind == "kernels") (void)sim::read_kernels(r);
      if (*kind == "framework") (void)sim::read_framework(r);
      if (*kind == "host") (void)sim::read_host(r);
      if (*kind == "link") (void)sim::read_link(r);
      if (*kind == "cluster") (void)profiles().cluster_from(r);
      return;
    }
    (void)models::load_scenario(doc, "fuzz.json", {}, profiles());
  } catch (const InputError&) {
  }
}

// A quantity with units in every dimension: a value, when accepted, is finite.
inline void quantity(std::string_view data) {
  for (const sim::Dimension d : sim::kAllDimensions) {
    const auto v = sim::parse_quantity(data, d);
    if (v && !std::isfinite(*v))
      throw std::logic_error("parse_quantity returned a non-finite value");
  }
}

// A CSV of measured points, with the default columns and with group and weight columns.
inline void csv_points(std::string_view data) {
  try {
    (void)fit::parse_points_csv(data, "fuzz.csv", fit::CsvColumns{});
  } catch (const InputError&) {
  }
  try {
    fit::CsvColumns columns;
    columns.group = {"g"};
    columns.weight = "w";
    (void)fit::parse_points_csv(data, "fuzz.csv", columns);
  } catch (const InputError&) {
  }
}

// Each line a `--set PATH=VALUE` on the built-in demo scenario.
inline void set_paths(std::string_view data) {
  try {
    (void)models::load_scenario(demo_scenario(), "demo", lines_of(data, 16), profiles());
  } catch (const InputError&) {
  }
}

// Each line a `--vary PATH=V1,V2,...` (lists and ranges).
inline void sweep_ranges(std::string_view data) {
  try {
    const auto axes = cli::parse_vary_list(lines_of(data, 8), 100'000);
    const std::size_t rows = cli::row_count(axes);
    if (rows > 0) (void)cli::row_overrides(axes, rows - 1);
  } catch (const InputError&) {
  }
}

}  // namespace trainsim::fuzz
