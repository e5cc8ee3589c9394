#pragma once
// One sweep row: the varied values (under "vary") plus every field `simulate --format json`
// prints, as a CSV line or a compact JSON object. The wall-clock field sim.wall_s differs from
// run to run, so it is left out unless asked for (rows stay byte-identical across runs/--jobs).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/sweep_spec.hpp"
#include "models/training_step.hpp"

namespace trainsim::cli {

enum class RowFormat { csv, json };

// A value as JSON the way --set reads it: valid JSON text as that value, anything else a string.
nlohmann::json override_value_json(const std::string& text);

// The row as JSON: the simulate fields plus "vary": {PATH: value}.
// `to_target` (cli/target_report.hpp) is added as "to_target" when the sweep has a target, and
// `intervals` (intervals_json, cli/target_report.hpp) as "intervals" under --uncertainty.
nlohmann::json sweep_row_json(const std::vector<VaryAxis>& axes, std::size_t row,
                              const models::StepReport& report, bool wall_time,
                              const nlohmann::json* to_target = nullptr,
                              const nlohmann::json* intervals = nullptr);

// Column names of every CSV row: vary.PATH for each axis, then the simulate fields. The intervals
// take fixed columns in CSV: intervals.KEY.0 and .1 (low, high; both null for a row without a
// target's time), and `varied` / `skipped` as one column each, the names joined by ';'.
std::vector<std::string> sweep_csv_columns(const std::vector<VaryAxis>& axes, bool wall_time,
                                           bool with_target = false, bool with_cost = false,
                                           bool with_intervals = false);

// Quotes a CSV field when it holds a comma, quote or line break (RFC 4180).
std::string csv_field(const std::string& text);
std::string csv_line(const std::vector<std::string>& fields);

// The row as one output line (no trailing newline). In CSV the varied values are the texts
// given on the command line, so a JSON object value stays one column.
std::string format_sweep_row(const std::vector<VaryAxis>& axes, std::size_t row,
                             const models::StepReport& report, bool wall_time, RowFormat format,
                             const nlohmann::json* to_target = nullptr,
                             const nlohmann::json* intervals = nullptr);

}  // namespace trainsim::cli
