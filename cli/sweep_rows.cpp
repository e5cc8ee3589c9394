#include "cli/sweep_rows.hpp"

#include "cli/step_report_format.hpp"
#include "cli/target_report.hpp"
#include "sim/config/json_source.hpp"

namespace trainsim::cli {

nlohmann::json override_value_json(const std::string& text) {
  return sim::parse_override_value(text, "--vary value " + text);
}

namespace {

// Every row has the same fields: the per-stage objects (as many as the row's pipeline depth)
// are left to `simulate --format json`; the pipeline summary stays.
nlohmann::json report_fields(const models::StepReport& report, bool wall_time,
                             const nlohmann::json* to_target, const nlohmann::json* intervals) {
  nlohmann::json j = step_report_json(report);
  j.erase("stages");
  if (!wall_time) j["sim"].erase("wall_s");
  if (to_target != nullptr) j["to_target"] = *to_target;
  if (intervals != nullptr) j["intervals"] = *intervals;
  return j;
}

// The intervals with one set of CSV columns whatever the row: an interval that is null (no target)
// becomes [null, null], and the lists of names become one ';'-joined text each.
nlohmann::json csv_intervals(const nlohmann::json& intervals) {
  nlohmann::json j = intervals;
  for (const char* key : {"step_time_s", "throughput_samples_per_s", "to_target.time_s"}) {
    if (!j.contains(key) || j[key].is_null()) j[key] = {nullptr, nullptr};
  }
  for (const char* key : {"varied", "skipped"}) {
    std::string names;
    if (j.contains(key)) {
      for (const auto& v : j[key])
        names += (names.empty() ? "" : ";") + v.get<std::string>();
    }
    j[key] = names;
  }
  return j;
}

}  // namespace

nlohmann::json sweep_row_json(const std::vector<VaryAxis>& axes, std::size_t row,
                              const models::StepReport& report, bool wall_time,
                              const nlohmann::json* to_target, const nlohmann::json* intervals) {
  nlohmann::json j = report_fields(report, wall_time, to_target, intervals);
  nlohmann::json vary = nlohmann::json::object();
  const auto idx = row_indices(axes, row);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    vary[axes[i].path] = override_value_json(axes[i].values[idx[i]]);
  }
  j["vary"] = std::move(vary);
  return j;
}

std::vector<std::string> sweep_csv_columns(const std::vector<VaryAxis>& axes, bool wall_time,
                                           bool with_target, bool with_cost, bool with_intervals) {
  std::vector<std::string> names;
  for (const auto& a : axes)
    names.push_back("vary." + a.path);
  std::vector<std::pair<std::string, std::string>> cols;
  const nlohmann::json empty_target = to_target_json(std::nullopt, with_cost);
  const nlohmann::json empty_intervals = csv_intervals(
      {{"confidence", nullptr}, {"method", nullptr}, {"varied", {}}, {"skipped", {}}});
  flatten_json(report_fields(models::StepReport{}, wall_time, with_target ? &empty_target : nullptr,
                             with_intervals ? &empty_intervals : nullptr),
               "", cols);
  for (const auto& c : cols)
    names.push_back(c.first);
  return names;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string q = "\"";
  for (char c : text) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i != 0) line += ',';
    line += csv_field(fields[i]);
  }
  return line;
}

std::string format_sweep_row(const std::vector<VaryAxis>& axes, std::size_t row,
                             const models::StepReport& report, bool wall_time, RowFormat format,
                             const nlohmann::json* to_target, const nlohmann::json* intervals) {
  if (format == RowFormat::json)
    return sweep_row_json(axes, row, report, wall_time, to_target, intervals).dump();
  std::vector<std::string> fields;
  const auto idx = row_indices(axes, row);
  for (std::size_t i = 0; i < axes.size(); ++i)
    fields.push_back(axes[i].values[idx[i]]);
  std::vector<std::pair<std::string, std::string>> cols;
  const nlohmann::json flat_intervals =
      intervals != nullptr ? csv_intervals(*intervals) : nlohmann::json();
  flatten_json(
      report_fields(report, wall_time, to_target, intervals != nullptr ? &flat_intervals : nullptr),
      "", cols);
  for (const auto& c : cols)
    fields.push_back(c.second);
  return csv_line(fields);
}

}  // namespace trainsim::cli
