#pragma once
// A small CSV reader for measured data: a header line naming the columns, then rows. Blank lines
// and lines starting with '#' are skipped but counted, so line numbers match an editor's; a
// UTF-8 byte-order mark (spreadsheet exports) is dropped; double quotes protect commas.

#include <string>
#include <string_view>
#include <vector>

namespace trainsim::fit {

std::string_view trim_csv_field(std::string_view s);
// The items with `sep` between them ("a, b, c"): column lists in messages, series keys.
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
// Splits one line on commas; "" inside quotes is a quote. Fields are trimmed.
std::vector<std::string> split_csv_fields(std::string_view line);

struct CsvRow {
  int line = 0;  // 1-based
  std::vector<std::string> fields;
};

struct CsvTable {
  std::string file;
  int header_line = 0;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;

  // Index of column `name`; InputError naming FILE:HEADER_LINE, the role and the columns present.
  std::size_t column(const std::string& name, const std::string& role) const;
};

// InputError for an empty file, no rows, a column named twice, or a row with the wrong number of
// fields, each naming FILE:LINE.
CsvTable parse_csv_table(std::string_view text, const std::string& file_name);
CsvTable read_csv_table(const std::string& path);

}  // namespace trainsim::fit
