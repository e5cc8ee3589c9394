#pragma once
// The reference tables behind `trainsim validate`: each maps its rows (an embedded CSV from
// tests/reference_data/) to simulations and returns one point per row, with the halves assigned
// by fit::split_halves. Step-throughput and kernel tables are in cli/validate_tables.cpp,
// collective tables in cli/validate_collectives.cpp.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fit/validation.hpp"
#include "sim/config/profile_library.hpp"

namespace trainsim::cli {

struct ReferenceTable {
  std::string name;    // stable id, e.g. "lambda_dp_scaling_fp32"; `validate --table NAME`
  std::string source;  // where the numbers come from, as a reader can look it up
  std::string metric;  // what is compared, e.g. "samples/s", "busbw GB/s", "kernel ms"
  std::function<std::vector<fit::ValidationPoint>(const sim::ProfileLibrary&)> evaluate;
};

// Every shipped table, in report order.
std::vector<ReferenceTable> reference_tables();

// The collective (busbw) tables, appended to `tables`.
void add_collective_tables(std::vector<ReferenceTable>& tables);

// The text of an embedded reference CSV (a file name under tests/reference_data/); throws
// std::out_of_range for an unknown name.
std::string_view reference_csv(const std::string& file);

}  // namespace trainsim::cli
