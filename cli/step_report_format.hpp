#pragma once
// How a simulated training step is shown: JSON (the documented keys), flat CSV columns and the
// human-readable text report. Shared by simulate, sweep and plan so every command prints the
// same fields.

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/training_step.hpp"

namespace trainsim::cli {

nlohmann::json step_report_json(const models::StepReport& r);
// Flattens nested objects and arrays into dotted column names (stages.0.layers), in key order.
void flatten_json(const nlohmann::json& j, const std::string& prefix,
                  std::vector<std::pair<std::string, std::string>>& out);
void print_step_report_text(std::ostream& os, const models::StepReport& r);

}  // namespace trainsim::cli
