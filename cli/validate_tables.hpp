#pragma once
// The reference tables behind `trainsim validate`: each maps its rows (an embedded CSV from
// tests/reference_data/) to simulations and returns one point per row, with the halves assigned
// by fit::split_halves. Step-throughput and kernel tables are in cli/validate_tables.cpp,
// collective tables in cli/validate_collectives.cpp, Megatron-LM's LLM tables in
// cli/validate_megatron.cpp.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fit/csv_table.hpp"
#include "fit/validation.hpp"
#include "models/zoo/net_builder.hpp"
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

// The Megatron-LM throughput tables (TFLOP/s per GPU), appended to `tables`.
void add_megatron_tables(std::vector<ReferenceTable>& tables);

// The text of an embedded reference CSV (a file name under tests/reference_data/); throws
// std::out_of_range for an unknown name.
std::string_view reference_csv(const std::string& file);

// An embedded reference CSV parsed (`file` as for reference_csv).
fit::CsvTable embedded_table(const std::string& file);

// The accelerator profile of a GPU as DeepBench's results name it (their `gpu` column), the fitted
// and the held-out GPUs alike; nullopt for a name DeepBench's tables do not use.
std::optional<std::string> deepbench_profile(const std::string& gpu);

// One row of a reference CSV with access by column name.
class TableRow {
 public:
  TableRow(const fit::CsvTable& t, const fit::CsvRow& r) : table_(t), row_(r) {}
  // The field; std::logic_error for a column the table does not have (a table mapping's bug).
  const std::string& at(const std::string& column) const;
  // The field as a finite number; nullopt when empty or not a number ("~32000 (text: ...)").
  std::optional<double> number(const std::string& column) const;
  int line() const { return row_.line; }

 private:
  const fit::CsvTable& table_;
  const fit::CsvRow& row_;
};

// A row of DeepBench's convolution table (deepbench_train_conv.csv) as a layer: its input
// (C, H, W), its filter, and the batch; nullopt where a shape column is empty.
struct DeepBenchConv {
  std::vector<std::int64_t> input;
  models::Conv2d spec;
  double batch = 0;
};
std::optional<DeepBenchConv> deepbench_conv_layer(const TableRow& r);

}  // namespace trainsim::cli
