#include "cli/calibrate_setup.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "cli/run_checks.hpp"
#include "cli/scenario_source.hpp"
#include "cli/units_format.hpp"
#include "models/scenario.hpp"
#include "models/training_step.hpp"
#include "sim/config/json_source.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
namespace {

// The expansion load_scenario applies while overriding: profile names become their objects.
sim::StringExpander profile_expander(const sim::ProfileLibrary& profiles) {
  return models::scenario_expander(profiles);
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::string keys_of(const nlohmann::json& object) {
  std::string out;
  for (const auto& [key, value] : object.items())
    out += (out.empty() ? "" : ", ") + key;
  return out;
}

bool is_fraction(const std::vector<std::string>& parts) {
  // A kernels profile's efficiencies (is_kernels_fraction) and the sparsification density live in
  // (0, 1].
  const auto kernels = std::find(parts.begin(), parts.end(), "kernels");
  if (kernels != parts.end() && kernels + 1 != parts.end()) {
    std::string inside;
    for (auto it = kernels + 1; it != parts.end(); ++it)
      inside += (inside.empty() ? "" : ".") + *it;
    if (is_kernels_fraction(inside)) return true;
  }
  return std::any_of(
             parts.begin(), parts.end(),
             [](const std::string& p) { return p.find("efficiency") != std::string::npos; }) ||
         parts.back() == "density";
}

// Walks `path` in `doc`, expanding profile names on the way (recorded in `source`).
FreeParameter resolve(nlohmann::json& doc, sim::JsonSource& source, const std::string& path,
                      const sim::ProfileLibrary& profiles) {
  const std::string where = "--free " + path;
  const std::vector<std::string> parts = split_path(path);
  const sim::StringExpander expand = profile_expander(profiles);
  nlohmann::json* node = &doc;
  std::string walked;
  for (const std::string& key : parts) {
    if (key.empty()) throw UsageError(where, "empty component in path '" + path + "'");
    if (node->is_string()) expand(walked, *node, source);
    if (!node->is_object()) {
      throw InputError(
          where, "unknown path: '" + walked + "' is " + node->type_name() + ", not an object");
    }
    if (!node->contains(key)) {
      throw InputError(
          where,
          "unknown path: '" + (walked.empty() ? std::string("the scenario") : walked) +
              "' has no key '" + key + "' (keys: " + keys_of(*node) +
              "); a key left to its default must be set in the scenario or with --set first");
    }
    walked += (walked.empty() ? "" : ".") + key;
    node = &(*node)[key];
  }
  FreeParameter f;
  f.path = path;
  f.as_written = *node;
  const auto value = numeric_value(*node);
  if (!value)
    throw InputError(
        where, "is " + node->dump() + ", not a number or a quantity: it cannot be calibrated");
  if (!(*value > 0.0)) {
    throw InputError(where, "is " + node->dump() +
                                ": calibration needs a positive start value (it also sets the "
                                "parameter's scale); give one with --set " +
                                path + "=VALUE");
  }
  f.start = *value;
  f.lower = 1e-6 * f.start;  // positive; Ceres' bounds are inclusive
  f.upper = is_fraction(parts) ? 1.0 : std::numeric_limits<double>::infinity();
  if (f.start > f.upper) throw InputError(where, "is " + node->dump() + ", above its bound 1");
  // The owner: the longest prefix that a profile was expanded at (a --set origin owns nothing).
  for (const auto& [prefix, origin] : source.origins) {
    if (origin.rfind("--set ", 0) == 0) continue;
    const bool is_prefix = path.size() > prefix.size() &&
                           path.compare(0, prefix.size(), prefix) == 0 &&
                           path[prefix.size()] == '.';
    if (is_prefix && prefix.size() >= f.owner_prefix.size()) {
      f.owner_prefix = prefix;
      f.owner_origin = origin;
    }
  }
  if (f.owner_origin.empty()) f.owner_origin = source.file;
  f.path_in_owner = f.owner_prefix.empty() ? path : path.substr(f.owner_prefix.size() + 1);
  return f;
}

double parse_measured(const std::string& text, const std::string& column,
                      const std::string& where) {
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty()) throw InputError(where, "column '" + column + "' is empty");
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    throw InputError(where, "column '" + column + "': '" + text + "' is not a number");
  }
  if (!std::isfinite(value))
    throw InputError(where, "column '" + column + "': '" + text + "' is not finite");
  if (value <= 0.0)
    throw InputError(where, "column '" + column + "': " + text + " must be positive");
  if (value < fit::kMinFitValue || value > fit::kMaxFitValue) {
    throw InputError(where, "column '" + column + "': " + text +
                                " is outside the range a calibration handles (1e-06 to 1e+12 "
                                "samples/s)");
  }
  return value;
}

std::vector<std::string> overrides_for(const CalibrationSetup& setup, std::size_t point,
                                       std::span<const double> values) {
  std::vector<std::string> all = setup.base_overrides;
  const auto& row = setup.rows[point].overrides;
  all.insert(all.end(), row.begin(), row.end());
  for (std::size_t j = 0; j < setup.free.size(); ++j)
    all.push_back(override_text(setup.free[j].path, values[j]));
  return all;
}

}  // namespace

bool is_kernels_fraction(const std::string& path) {
  const auto starts = [&](const char* prefix) { return path.rfind(prefix, 0) == 0; };
  return starts("compute.") || starts("memory.") || starts("conv_weight_gradient.") ||
         starts("conv_weight_gradient_input_load.") || starts("conv_weight_gradient_bandwidth.") ||
         starts("conv_strided_data_gradient.") || starts("conv_phase_split_data_gradient.") ||
         starts("unaligned_gemm.") || path == "gemm_tile.half_tile_throughput" ||
         path == "gemm_tile.conv_half_tile_throughput";
}

// A number, or a quantity string in any dimension the profiles use, in SI base units.
std::optional<double> numeric_value(const nlohmann::json& leaf) {
  if (leaf.is_number()) return leaf.get<double>();
  if (!leaf.is_string()) return std::nullopt;
  for (const sim::Dimension d : sim::kAllDimensions) {
    if (const auto v = sim::parse_quantity(leaf.get<std::string>(), d)) return v;
  }
  return std::nullopt;
}

std::string override_text(const std::string& path, double value) {
  return path + "=" + nlohmann::json(value).dump();
}

CalibrationSetup prepare_calibration(const std::string& scenario_file,
                                     const std::vector<std::string>& base_overrides,
                                     const std::string& measured_file,
                                     const std::string& throughput_column,
                                     const std::vector<std::string>& free_paths,
                                     const sim::ProfileLibrary& profiles) {
  CalibrationSetup setup;
  setup.scenario_file = scenario_file;
  setup.scenario_doc = sim::load_json_file(scenario_file, "scenario");
  setup.base_overrides = base_overrides;
  setup.measured_file = measured_file;
  // The scenario as every row starts: it must load on its own.
  models::load_scenario(setup.scenario_doc, scenario_file, base_overrides, profiles);

  if (free_paths.empty()) throw UsageError("--free", "name at least one parameter to calibrate");
  sim::JsonSource source;
  source.file = scenario_file;
  setup.resolved_doc = setup.scenario_doc;
  for (const std::string& o : base_overrides) {
    sim::apply_override(setup.resolved_doc, o, source, profile_expander(profiles));
  }
  for (const std::string& path : free_paths) {
    for (const FreeParameter& f : setup.free) {
      if (f.path == path) throw UsageError("--free " + path, "named twice");
    }
    setup.free.push_back(resolve(setup.resolved_doc, source, path, profiles));
    // The simulator must accept a nearby non-integer value (an integer setting such as a worker
    // count would be rejected here rather than in the middle of the fit).
    const FreeParameter& f = setup.free.back();
    std::vector<std::string> trial = base_overrides;
    trial.push_back(override_text(path, f.start * 0.999));
    try {
      models::load_scenario(setup.scenario_doc, scenario_file, trial, profiles);
    } catch (const InputError& e) {
      throw InputError("--free " + path,
                       std::string("cannot be calibrated: the scenario rejects a nearby value (") +
                           e.what() + ")");
    }
  }

  const fit::CsvTable table = fit::read_csv_table(measured_file);
  const std::size_t tp = table.column(throughput_column, "measured throughput (--throughput-col)");
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    if (c == tp) continue;
    const std::string& col = table.header[c];
    for (const FreeParameter& f : setup.free) {
      if (f.path == col) {
        throw InputError(measured_file + ":" + std::to_string(table.header_line),
                         "column '" + col + "' sets a parameter that --free calibrates");
      }
    }
    setup.override_columns.push_back(col);
  }
  for (const fit::CsvRow& row : table.rows) {
    const std::string where = measured_file + ":" + std::to_string(row.line);
    MeasuredRow m;
    m.line = row.line;
    m.throughput_samples_per_s = parse_measured(row.fields[tp], table.header[tp], where);
    for (std::size_t c = 0; c < table.header.size(); ++c) {
      if (c == tp) continue;
      if (row.fields[c].empty())
        throw InputError(where, "column '" + table.header[c] + "' is empty");
      m.overrides.push_back(table.header[c] + "=" + row.fields[c]);
    }
    setup.rows.push_back(std::move(m));
  }
  // Every row must load with the start values before any fitting, and one Jacobian (each row
  // simulated twice per parameter, plus once) must fit the run-size limit; errors name the line.
  std::vector<double> start;
  for (const FreeParameter& f : setup.free)
    start.push_back(f.start);
  double events = 0;
  for (std::size_t i = 0; i < setup.rows.size(); ++i) {
    const std::string where = measured_file + ":" + std::to_string(setup.rows[i].line);
    try {
      const models::Scenario s = models::load_scenario(setup.scenario_doc, scenario_file,
                                                       overrides_for(setup, i, start), profiles);
      check_run_resources(s, scenario_label(scenario_file, overrides_for(setup, i, start)),
                          nullptr);
      events += estimate_run_events(s) * static_cast<double>(2 * setup.free.size() + 1);
    } catch (const InputError& e) {
      throw InputError(where, e.what());
    }
  }
  if (events > sim::limits::kMaxRunEvents) {
    throw InputError(measured_file, "one iteration of the calibration would simulate about " +
                                        format_number(events, 3) + " events (" +
                                        std::to_string(setup.rows.size()) + " rows x " +
                                        std::to_string(2 * setup.free.size() + 1) +
                                        " runs each), above the limit of " +
                                        format_number(sim::limits::kMaxRunEvents, 3) +
                                        "; use fewer rows, fewer --free parameters or fewer "
                                        "steps");
  }
  return setup;
}

std::vector<fit::CalibrationParameter> calibration_parameters(const CalibrationSetup& setup) {
  std::vector<fit::CalibrationParameter> out;
  for (const FreeParameter& f : setup.free)
    out.push_back({f.path, f.start, f.lower, f.upper});
  return out;
}

double simulate_row(const CalibrationSetup& setup, const sim::ProfileLibrary& profiles,
                    std::span<const double> values, std::size_t point) {
  const std::vector<std::string> overrides = overrides_for(setup, point, values);
  const models::Scenario s =
      models::load_scenario(setup.scenario_doc, setup.scenario_file, overrides, profiles);
  return simulate_checked(s, scenario_label(setup.scenario_file, overrides))
      .throughput_samples_per_s;
}

}  // namespace trainsim::cli
