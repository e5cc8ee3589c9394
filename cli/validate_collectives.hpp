#pragma once
// The collective (busbw) reference tables of `trainsim validate` (add_collective_tables in
// cli/validate_tables.hpp): each row of an nccl-tests / rccl-tests table is simulated on the
// cluster profile of the machine that measured it, with the library's automatic choice of
// algorithm and protocol (what the tests run by default), and compared as bus bandwidth.

#include <string>
#include <vector>

#include "fit/validation.hpp"
#include "sim/config/profile_library.hpp"

namespace trainsim::cli {

struct CollectiveTable {
  std::string name;     // stable id
  std::string file;     // under tests/reference_data/
  std::string source;   // where the numbers come from
  std::string cluster;  // the cluster profile of the machine
  std::string op;       // nccl-tests op: allreduce
};

// The shipped collective tables, in report order.
const std::vector<CollectiveTable>& collective_tables();

// One point per row: series "<name>/<op>", x = size in bytes, measured = the out-of-place busbw
// from the row's time (size / time x the nccl-tests factor; the printed busbw is rounded to
// 0.01 GB/s), predicted = the simulated busbw, both in GB/s; halves by fit::split_halves.
std::vector<fit::ValidationPoint> evaluate_collective_table(const CollectiveTable& table,
                                                            std::string_view csv,
                                                            const sim::ProfileLibrary& profiles);

}  // namespace trainsim::cli
