#pragma once
// Where a scenario comes from: a JSON file named on the command line, or, when none is named,
// the built-in demo scenario compiled into the binary. Shared by simulate, sweep, plan and
// calibrate.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "sim/config/json_source.hpp"
#include "sim/config/profile_library.hpp"

namespace trainsim::cli {

inline constexpr const char* kDefaultScenario = "resnet50_dgx_a100.json";

// Names a scenario with its overrides for messages: "FILE" or "FILE with --set A=1 --set B=2"
// (the built-in default is "<built-in>/examples/...").
std::string scenario_label(const std::string& file, const std::vector<std::string>& overrides);

// Loads `file` (or the built-in default when empty), applies `overrides` and validates it.
models::Scenario load_scenario_source(const std::string& file,
                                      const std::vector<std::string>& overrides,
                                      const sim::ProfileLibrary& profiles);

// The scenario document load_scenario_source reads, after the overrides (the profile names they
// reach inside expanded into the profiles' objects, every origin recorded in `source`): what the
// result's provenance is traced through (cli/parameter_provenance.hpp).
nlohmann::json resolved_scenario_doc(const std::string& file,
                                     const std::vector<std::string>& overrides,
                                     const sim::ProfileLibrary& profiles, sim::JsonSource& source);

}  // namespace trainsim::cli
