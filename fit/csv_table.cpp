#include "fit/csv_table.hpp"

#include <algorithm>

#include "sim/config/input_file.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/utf8.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::fit {
std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

std::string_view trim_csv_field(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

std::vector<std::string> split_csv_fields(std::string_view line) {
  std::vector<std::string> fields;
  std::string current;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        current += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        current += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back(trim_csv_field(current));
      current.clear();
    } else {
      current += c;
    }
  }
  fields.emplace_back(trim_csv_field(current));
  return fields;
}

std::size_t CsvTable::column(const std::string& name, const std::string& role) const {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) {
    throw InputError(file + ":" + std::to_string(header_line),
                     "no " + role + " column '" + name + "' (columns: " + join(header) + ")");
  }
  return static_cast<std::size_t>(it - header.begin());
}

CsvTable parse_csv_table(std::string_view text, const std::string& file_name) {
  CsvTable table;
  table.file = file_name;
  int line_no = 0;
  std::size_t pos = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  while (pos < text.size()) {
    const auto eol = text.find('\n', pos);
    const std::string_view line =
        text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    ++line_no;
    const std::string where = file_name + ":" + std::to_string(line_no);
    // Fields reach JSON output (group names), which must be valid UTF-8.
    if (!sim::is_valid_utf8(line)) throw InputError(where, "the line is not valid UTF-8 text");
    const std::string_view body = trim_csv_field(line);
    if (body.empty() || body.front() == '#') continue;
    std::vector<std::string> fields = split_csv_fields(body);
    if (table.header.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (std::find(fields.begin(), fields.begin() + static_cast<std::ptrdiff_t>(i), fields[i]) !=
            fields.begin() + static_cast<std::ptrdiff_t>(i)) {
          throw InputError(where, "column '" + fields[i] + "' appears twice in the header (" +
                                      join(fields) + "): which one is meant is ambiguous");
        }
      }
      table.header = std::move(fields);
      table.header_line = line_no;
      continue;
    }
    if (fields.size() != table.header.size()) {
      throw InputError(where, "expected " + std::to_string(table.header.size()) + " fields (" +
                                  join(table.header, ",") + "), found " +
                                  std::to_string(fields.size()));
    }
    if (static_cast<std::int64_t>(table.rows.size()) >= sim::limits::kMaxCsvRows) {
      throw InputError(where, "more than the limit of " + std::to_string(sim::limits::kMaxCsvRows) +
                                  " data rows");
    }
    table.rows.push_back(CsvRow{line_no, std::move(fields)});
  }
  if (table.header.empty()) {
    throw InputError(
        file_name + ":" + std::to_string(std::max(line_no, 1)),
        "empty file: expected a header line naming the columns, then one row per line");
  }
  if (table.rows.empty())
    throw InputError(file_name + ":" + std::to_string(line_no), "no data rows after the header");
  return table;
}

CsvTable read_csv_table(const std::string& path) {
  return parse_csv_table(sim::read_input_file(path, sim::limits::kMaxCsvFileBytes, "CSV"), path);
}

}  // namespace trainsim::fit
