#pragma once
// `trainsim calibrate --table NAME --free KIND/NAME:PATH[,...]`: fits profile values (kernel
// efficiencies, framework host costs, ...) to the calibration half of a reference table of
// `trainsim validate`, and reports the table's error on both halves before and after. The
// validation half is never fitted.

#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "fit/calibration.hpp"
#include "sim/config/profile_library.hpp"

namespace trainsim::cli {

struct TableCalibrationRequest {
  std::string table;
  std::vector<std::string> free;  // KIND/NAME:PATH
  std::string rows;               // regular expression over row labels; empty: all rows
  int max_iterations = 50;
  bool json = false;
  // The table's report is its MAPE: by default the fit minimises it (soft-L1).
  fit::CalibrationObjective objective = fit::CalibrationObjective::relative_l1;
};

int calibrate_on_table(const TableCalibrationRequest& req, const sim::ProfileLibrary& base,
                       CommandIo& io);

}  // namespace trainsim::cli
