#include "fit/points_csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "fit/csv_table.hpp"
#include "sim/config/input_file.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::fit {
namespace {

std::string default_throughput_column(const std::vector<std::string>& header,
                                      const std::string& where) {
  std::vector<std::string> found;
  for (const char* name : {"throughput", "images_per_s", "samples_per_s"}) {
    if (std::find(header.begin(), header.end(), name) != header.end()) found.emplace_back(name);
  }
  if (found.empty()) {
    throw InputError(where,
                     "no throughput column: name it with --throughput-col (looked for throughput, "
                     "images_per_s, samples_per_s; columns: " +
                         join(header, ", ") + ")");
  }
  if (found.size() > 1) {
    throw InputError(where, "ambiguous throughput column (" + join(found, ", ") +
                                "): choose one with --throughput-col");
  }
  return found.front();
}

double parse_positive(const std::string& text, const std::string& column,
                      const std::string& where) {
  double value = 0.0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text.empty()) throw InputError(where, "column '" + column + "' is empty");
  if (ec != std::errc() || ptr != end) {
    throw InputError(where, "column '" + column + "': '" + text + "' is not a number");
  }
  if (!std::isfinite(value))
    throw InputError(where, "column '" + column + "': '" + text + "' is not finite");
  if (value <= 0.0)
    throw InputError(where, "column '" + column + "': " + text + " must be positive");
  if (value < kMinFitValue || value > kMaxFitValue) {
    throw InputError(where, "column '" + column + "': " + text +
                                " is outside the range a fit handles (1e-06 to 1e+12)");
  }
  return value;
}

}  // namespace

std::vector<Series> parse_points_csv(std::string_view text, const std::string& file_name,
                                     const CsvColumns& columns) {
  const CsvTable table = parse_csv_table(text, file_name);
  const std::vector<std::string>& header = table.header;
  const std::size_t batch_col = table.column(columns.batch, "batch");
  const std::string throughput_name =
      columns.throughput.empty()
          ? default_throughput_column(header, file_name + ":" + std::to_string(table.header_line))
          : columns.throughput;
  const std::size_t throughput_col = table.column(throughput_name, "throughput");
  std::optional<std::size_t> weight_col;
  if (!columns.weight.empty()) weight_col = table.column(columns.weight, "weight");
  std::vector<std::size_t> group_cols;
  for (const auto& g : columns.group)
    group_cols.push_back(table.column(g, "group"));

  std::vector<Series> series;
  std::map<std::vector<std::string>, std::size_t> series_index;
  for (const CsvRow& row : table.rows) {
    const std::string where = file_name + ":" + std::to_string(row.line);
    const std::vector<std::string>& fields = row.fields;
    Point p;
    p.line = row.line;
    p.batch = parse_positive(fields[batch_col], header[batch_col], where);
    p.throughput_samples_per_s =
        parse_positive(fields[throughput_col], header[throughput_col], where);
    if (weight_col) p.weight = parse_positive(fields[*weight_col], header[*weight_col], where);
    std::vector<std::string> key;
    for (const std::size_t g : group_cols) {
      if (fields[g].empty()) throw InputError(where, "group column '" + header[g] + "' is empty");
      key.push_back(fields[g]);
    }
    auto [it, inserted] = series_index.try_emplace(key, series.size());
    if (inserted)
      series.push_back(Series{key.empty() ? "all" : join(key, "/"), key, {}, file_name});
    series[it->second].points.push_back(p);
  }
  return series;
}

std::vector<Series> read_points_csv(const std::string& path, const CsvColumns& columns) {
  return parse_points_csv(sim::read_input_file(path, sim::limits::kMaxCsvFileBytes, "points CSV"),
                          path, columns);
}

}  // namespace trainsim::fit
