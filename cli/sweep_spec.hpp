#pragma once
// What a sweep varies: `--vary PATH=V1,V2,...` axes (values are --set overrides, ranges such as
// 1..1024x2 expanded), and the cross product of their values as rows, last axis fastest.

#include <cstddef>
#include <string>
#include <vector>

namespace trainsim::cli {

struct VaryAxis {
  std::string path;                 // e.g. parallelism.data
  std::vector<std::string> values;  // override texts, e.g. "1", "fp16", "{\"name\":\"vgg16\"}"
};

// Parses one --vary argument. Values are split on commas outside brackets, braces and quotes;
// an item A..B (step 1), A..B+S (arithmetic) or A..BxF (geometric, F > 1) expands to the numbers
// from A up to B. UsageError naming the argument for anything malformed.
VaryAxis parse_vary(const std::string& argument);

// Axes in command-line order; UsageError on a repeated path or a sweep of more than
// `max_rows` rows.
std::vector<VaryAxis> parse_vary_list(const std::vector<std::string>& arguments,
                                      std::size_t max_rows = 10'000'000);

std::size_t row_count(const std::vector<VaryAxis>& axes);
// Value index of each axis for row `row` (row-major: the last axis varies fastest).
std::vector<std::size_t> row_indices(const std::vector<VaryAxis>& axes, std::size_t row);
// "PATH=VALUE" overrides of one row, in axis order.
std::vector<std::string> row_overrides(const std::vector<VaryAxis>& axes, std::size_t row);

}  // namespace trainsim::cli
