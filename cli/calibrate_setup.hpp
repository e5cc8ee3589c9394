#pragma once
// What `trainsim calibrate` fits: the free parameters (numeric paths in the scenario or in the
// profiles it names, checked before any fitting), the measured rows (scenario overrides plus a
// measured throughput), and the simulator as a black-box model of one row.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fit/calibration.hpp"
#include "fit/csv_table.hpp"
#include "fit/fit_types.hpp"
#include "sim/config/profile_library.hpp"

namespace trainsim::cli {

// Whether a value at `path` inside a kernels profile (e.g. "compute.conv.fp32") is an achieved
// fraction that calibration keeps in (0, 1]: the compute and memory efficiencies, the half-tile
// rate and the weight-gradient share.
bool is_kernels_fraction(const std::string& path);

struct FreeParameter {
  std::string path;  // in the scenario, e.g. cluster.node.accelerator.kernels.compute.gemm.fp16
  nlohmann::json as_written;  // the value as the owning document has it ("5 us", 0.6)
  double start = 0.0;         // SI base units
  double lower = 0.0;
  double upper = 0.0;
  std::string owner_prefix;  // path of the owning profile in the scenario; "" = the scenario itself
  std::string owner_origin;  // that document's file (or hw_profiles/... for a built-in profile)
  std::string path_in_owner;  // path relative to the owning document
};

struct MeasuredRow {
  int line = 0;
  std::vector<std::string> overrides;  // "PATH=VALUE" from the row's columns
  double throughput_samples_per_s = 0.0;
};

struct CalibrationSetup {
  std::string scenario_file;
  nlohmann::json scenario_doc;              // as read from the file
  std::vector<std::string> base_overrides;  // --set, applied to every row first
  nlohmann::json resolved_doc;  // doc + base overrides, profiles of free parameters inline
  std::vector<FreeParameter> free;
  std::string measured_file;
  std::vector<std::string> override_columns;
  std::vector<MeasuredRow> rows;
};

// Loads and checks everything; InputError (exit 2) naming the path, column or FILE:LINE.
CalibrationSetup prepare_calibration(const std::string& scenario_file,
                                     const std::vector<std::string>& base_overrides,
                                     const std::string& measured_file,
                                     const std::string& throughput_column,
                                     const std::vector<std::string>& free_paths,
                                     const sim::ProfileLibrary& profiles);

std::vector<fit::CalibrationParameter> calibration_parameters(const CalibrationSetup& setup);

// The simulated throughput (samples/s of the whole job) of row `point` with the free parameters
// at `values`.
double simulate_row(const CalibrationSetup& setup, const sim::ProfileLibrary& profiles,
                    std::span<const double> values, std::size_t point);

// "PATH=VALUE" with the value printed to round-trip exactly.
std::string override_text(const std::string& path, double value);

// A profile leaf as a number: a number, or a quantity string in any dimension the profiles use,
// in SI base units; nullopt for anything else.
std::optional<double> numeric_value(const nlohmann::json& leaf);

}  // namespace trainsim::cli
