#pragma once
// The outputs of `trainsim calibrate`: the text and JSON reports (parameters with intervals,
// before/after error per point) and the calibrated documents written with --out.

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/calibrate_setup.hpp"
#include "fit/calibration.hpp"

namespace trainsim::cli {

void write_calibration_text(std::ostream& os, const CalibrationSetup& setup,
                            const fit::CalibrationResult& result);
nlohmann::ordered_json calibration_json(const CalibrationSetup& setup,
                                        const fit::CalibrationResult& result);

// Writes every document that owns a calibrated parameter into `dir`, with the new values and a
// leading comment saying what was calibrated against what: profiles as DIR/<kind>s/<name>.json
// (load them with --profile-dir DIR), the scenario as DIR/<its file name>. Returns the paths.
std::vector<std::string> write_calibrated_documents(const std::string& dir,
                                                    const CalibrationSetup& setup,
                                                    const fit::CalibrationResult& result);

}  // namespace trainsim::cli
