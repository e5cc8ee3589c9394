#include "fit/points_csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "fit/csv_table.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::fit {
namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

std::size_t column_index(const std::vector<std::string>& header, const std::string& name,
                         const std::string& where, const std::string& role) {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) {
    throw InputError(where,
                     "no " + role + " column '" + name + "' (columns: " + join(header, ", ") + ")");
  }
  return static_cast<std::size_t>(it - header.begin());
}

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
  return value;
}

}  // namespace

std::vector<Series> parse_points_csv(std::string_view text, const std::string& file_name,
                                     const CsvColumns& columns) {
  std::vector<std::string> header;
  std::size_t batch_col = 0;
  std::size_t throughput_col = 0;
  std::optional<std::size_t> weight_col;
  std::vector<std::size_t> group_cols;
  std::vector<Series> series;
  std::map<std::vector<std::string>, std::size_t> series_index;

  int line_no = 0;
  // Spreadsheet exports often start with a UTF-8 byte-order mark; it is not part of the first name.
  std::size_t pos = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  while (pos < text.size()) {
    const auto eol = text.find('\n', pos);
    const std::string_view line =
        text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    ++line_no;
    const std::string where = file_name + ":" + std::to_string(line_no);
    const std::string_view body = trim_csv_field(line);
    if (body.empty() || body.front() == '#') continue;  // blank lines and comments carry no point
    std::vector<std::string> fields = split_csv_fields(body);
    if (header.empty()) {
      header = std::move(fields);
      for (std::size_t i = 0; i < header.size(); ++i) {
        if (std::find(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(i), header[i]) !=
            header.begin() + static_cast<std::ptrdiff_t>(i)) {
          throw InputError(where, "column '" + header[i] + "' appears twice in the header (" +
                                      join(header, ", ") + "): which one is meant is ambiguous");
        }
      }
      batch_col = column_index(header, columns.batch, where, "batch");
      const std::string throughput_name = columns.throughput.empty()
                                              ? default_throughput_column(header, where)
                                              : columns.throughput;
      throughput_col = column_index(header, throughput_name, where, "throughput");
      if (!columns.weight.empty())
        weight_col = column_index(header, columns.weight, where, "weight");
      for (const auto& g : columns.group)
        group_cols.push_back(column_index(header, g, where, "group"));
      continue;
    }
    if (fields.size() != header.size()) {
      throw InputError(where, "expected " + std::to_string(header.size()) + " fields (" +
                                  join(header, ",") + "), found " + std::to_string(fields.size()));
    }
    Point p;
    p.line = line_no;
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
  if (header.empty()) {
    throw InputError(file_name + ":" + std::to_string(std::max(line_no, 1)),
                     "empty file: expected a header line "
                     "naming the columns, then one point per line");
  }
  if (series.empty())
    throw InputError(file_name + ":" + std::to_string(line_no), "no data rows after the header");
  return series;
}

std::vector<Series> read_points_csv(const std::string& path, const CsvColumns& columns) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the points file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_points_csv(ss.str(), path, columns);
}

}  // namespace trainsim::fit
