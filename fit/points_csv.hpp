#pragma once
// Reads measured (batch, throughput) points from a CSV file with a header line, split into one
// series per distinct value of the group column(s). Every problem is an InputError naming
// FILE:LINE, the column and the offending value.

#include <string>
#include <string_view>
#include <vector>

#include "fit/fit_types.hpp"

namespace trainsim::fit {

struct CsvColumns {
  std::vector<std::string> group;  // empty: one series named "all"
  std::string batch = "batch";
  std::string throughput;  // empty: the one column named throughput, images_per_s or samples_per_s
  std::string weight;      // empty: every point weighs 1
};

std::vector<Series> parse_points_csv(std::string_view text, const std::string& file_name,
                                     const CsvColumns& columns);
std::vector<Series> read_points_csv(const std::string& path, const CsvColumns& columns);

}  // namespace trainsim::fit
