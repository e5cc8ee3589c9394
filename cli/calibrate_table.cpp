#include "cli/calibrate_table.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <sstream>

#include "cli/calibrate_setup.hpp"
#include "cli/validate_tables.hpp"
#include "fit/calibration.hpp"
#include "fit/validation.hpp"
#include "sim/config/nearest_name.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

namespace {

struct TableParameter {
  std::string text;  // as given: KIND/NAME:PATH
  std::string kind;
  std::string name;
  std::string path;
  double start = 0;
  double lower = 0;
  double upper = std::numeric_limits<double>::infinity();
};

TableParameter parse_parameter(const std::string& text, const sim::ProfileLibrary& lib) {
  const std::string where = "--free " + text;
  const auto slash = text.find('/');
  const auto colon = text.find(':');
  if (slash == std::string::npos || colon == std::string::npos || colon < slash) {
    throw UsageError(where,
                     "with --table, a free parameter is KIND/NAME:PATH inside a profile, e.g. "
                     "kernels/nvidia-volta:compute.gemm.fp32 or "
                     "framework/pytorch_eager:host.forward_per_kernel");
  }
  TableParameter p;
  p.text = text;
  p.kind = text.substr(0, slash);
  p.name = text.substr(slash + 1, colon - slash - 1);
  p.path = text.substr(colon + 1);
  const sim::ProfileEntry& e = lib.find(p.name, p.kind, where);
  const nlohmann::json* node = &e.json;
  std::size_t start = 0;
  while (true) {
    const auto dot = p.path.find('.', start);
    const std::string key =
        p.path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(key)) {
      throw InputError(where, e.origin + " has no value at '" + p.path + "'");
    }
    node = &(*node)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  const auto v = numeric_value(*node);
  if (!v || !(*v > 0)) {
    throw InputError(where, "is " + node->dump() + ": calibration needs a positive number");
  }
  p.start = *v;
  p.lower = 1e-6 * p.start;
  if (p.kind == "kernels" && is_kernels_fraction(p.path)) p.upper = 1.0;
  return p;
}

std::string pct(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2) << v << "%";
  return os.str();
}

double mape(const std::vector<fit::ValidationPoint>& pts, fit::Half half) {
  double s = 0;
  int n = 0;
  for (const auto& p : pts) {
    if (p.half != half) continue;
    s += std::abs(p.predicted - p.measured) / p.measured;
    ++n;
  }
  return n == 0 ? 0 : 100 * s / n;
}

// The half's shape MAPE as `trainsim validate` reports it.
double shape_mape(const ReferenceTable& table, const std::vector<fit::ValidationPoint>& pts,
                  fit::Half half) {
  return fit::summarize(table.name, table.source, half, pts).mape_shape_pct;
}

}  // namespace

int calibrate_on_table(const TableCalibrationRequest& req, const sim::ProfileLibrary& base,
                       CommandIo& io) {
  const std::vector<ReferenceTable> tables = reference_tables();
  const ReferenceTable* table = nullptr;
  std::vector<std::string> names;
  for (const ReferenceTable& t : tables) {
    names.push_back(t.name);
    if (t.name == req.table) table = &t;
  }
  if (table == nullptr) {
    const std::string near = sim::nearest_name(req.table, names);
    throw UsageError("--table " + req.table,
                     "unknown reference table" +
                         (near.empty() ? std::string() : " (did you mean '" + near + "'?)"));
  }
  if (req.free.empty()) throw UsageError("--free", "name at least one parameter to calibrate");
  std::vector<TableParameter> params;
  for (const std::string& f : req.free)
    params.push_back(parse_parameter(f, base));
  std::regex rows;
  try {
    rows = std::regex(req.rows.empty() ? ".*" : req.rows);
  } catch (const std::regex_error& e) {
    throw UsageError("--rows " + req.rows, std::string("not a regular expression: ") + e.what());
  }
  const auto library_at = [&](std::span<const double> values) {
    sim::ProfileLibrary lib = base;
    for (std::size_t i = 0; i < params.size(); ++i)
      lib.set_value(params[i].kind, params[i].name, params[i].path, values[i]);
    return lib;
  };
  const auto selected = [&](const fit::ValidationPoint& p) {
    return p.half == fit::Half::calibration && std::regex_search(p.label, rows);
  };
  // The table at the start values: the measured calibration-half points the fit uses.
  std::vector<double> start;
  for (const auto& p : params)
    start.push_back(p.start);
  const std::vector<fit::ValidationPoint> before = table->evaluate(library_at(start));
  std::vector<double> measured;
  std::vector<std::size_t> series;  // each row's series, for the mape+shape objective
  std::map<std::string, std::size_t> series_index;
  for (const auto& p : before) {
    if (!selected(p)) continue;
    measured.push_back(p.measured);
    series.push_back(series_index.emplace(p.series, series_index.size()).first->second);
  }
  if (measured.size() < params.size()) {
    throw InputError("--table " + req.table,
                     std::to_string(measured.size()) +
                         " calibration-half rows match --rows, fewer than the " +
                         std::to_string(params.size()) + " parameters to fit");
  }
  // One evaluation of the table per parameter vector (the solver asks point by point).
  std::map<std::vector<double>, std::vector<double>> cache;
  const fit::BlackBoxModel model = [&](std::span<const double> values, std::size_t point) {
    const std::vector<double> key(values.begin(), values.end());
    auto it = cache.find(key);
    if (it == cache.end()) {
      std::vector<double> predicted;
      for (const auto& p : table->evaluate(library_at(values))) {
        if (selected(p)) predicted.push_back(p.predicted);
      }
      if (cache.size() > 256) cache.clear();
      it = cache.emplace(key, std::move(predicted)).first;
    }
    return it->second.at(point);
  };
  std::vector<fit::CalibrationParameter> fit_params;
  for (const auto& p : params)
    fit_params.push_back({p.text, p.start, p.lower, p.upper});
  fit::CalibrationOptions options;
  options.max_iterations = req.max_iterations;
  options.objective = req.objective;
  options.series = series;
  const fit::CalibrationResult result = fit::calibrate(fit_params, measured, model, options);
  std::vector<double> values;
  for (const auto& p : result.parameters)
    values.push_back(p.value);
  const std::vector<fit::ValidationPoint> after = table->evaluate(library_at(values));

  nlohmann::ordered_json j;
  j["table"] = table->name;
  j["source"] = table->source;
  j["rows"] = req.rows.empty() ? ".*" : req.rows;
  j["points"] = measured.size();
  j["objective"] = objective_name(req.objective);
  j["converged"] = result.converged;
  j["parameters"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& r = result.parameters[i];
    j["parameters"].push_back(
        {{"name", params[i].text},
         {"start", params[i].start},
         {"value", r.value},
         {"std_error", std::isfinite(r.std_error) ? nlohmann::ordered_json(r.std_error) : nullptr},
         {"at_bound", r.at_bound}});
  }
  j["mape_pct"] = {{"calibration_before", mape(before, fit::Half::calibration)},
                   {"calibration_after", mape(after, fit::Half::calibration)},
                   {"validation_before", mape(before, fit::Half::validation)},
                   {"validation_after", mape(after, fit::Half::validation)}};
  j["mape_shape_pct"] = {{"calibration_before", shape_mape(*table, before, fit::Half::calibration)},
                         {"calibration_after", shape_mape(*table, after, fit::Half::calibration)},
                         {"validation_before", shape_mape(*table, before, fit::Half::validation)},
                         {"validation_after", shape_mape(*table, after, fit::Half::validation)}};
  j["rms_rel_err_fit"] = {{"before", result.rms_rel_err_before},
                          {"after", result.rms_rel_err_after}};
  if (req.json) {
    io.out << j.dump(2) << "\n";
  } else {
    io.out << "calibrated on " << table->name << " (calibration half, " << measured.size()
           << " rows" << (req.rows.empty() ? "" : " matching '" + req.rows + "'") << "; "
           << table->source << "), minimising the rows' "
           << (req.objective == fit::CalibrationObjective::relative_l1
                   ? "mean absolute relative error (soft-L1)"
               : req.objective == fit::CalibrationObjective::relative_l1_with_shape
                   ? "mean absolute relative error and the same within each series (shape), "
                     "summed (soft-L1)"
                   : "squared relative errors")
           << "\n\n";
    for (std::size_t i = 0; i < params.size(); ++i) {
      const auto& r = result.parameters[i];
      io.out << "  " << params[i].text << ": " << params[i].start << " -> " << r.value;
      if (std::isfinite(r.std_error)) io.out << "  (stderr " << r.std_error << ")";
      if (!r.at_bound.empty()) io.out << "  [at " << r.at_bound << " bound]";
      io.out << "\n";
    }
    const auto row = [&](const char* half_label, fit::Half half) {
      io.out << "    " << half_label << std::setw(8) << pct(mape(before, half)) << " "
             << std::setw(8) << pct(mape(after, half)) << "   " << std::setw(8)
             << pct(shape_mape(*table, before, half)) << " " << std::setw(8)
             << pct(shape_mape(*table, after, half)) << "\n";
    };
    io.out << "\n  table MAPE       before    after   shape before  after\n";
    row("calibration  ", fit::Half::calibration);
    row("validation   ", fit::Half::validation);
    io.out << (result.converged ? "  converged" : "  did NOT converge: " + result.termination)
           << " after " << result.iterations << " iterations, " << result.evaluations
           << " evaluations\n";
  }
  return 0;
}

}  // namespace trainsim::cli
