#include "cli/calibrate_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "cli/units_format.hpp"
#include "sim/config/json_source.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
namespace {

// NaN never reaches JSON output: an undefined quantity is null.
nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nullptr;
}

// Two or four decimals; exponent form where fixed notation would print dozens of digits.
std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  std::ostringstream s;
  if (std::abs(fraction) >= 1e4) {
    s << std::setprecision(4) << fraction * 100 << "%";
  } else {
    s << std::fixed << std::setprecision(std::abs(fraction) < 0.001 ? 4 : 2) << fraction * 100
      << "%";
  }
  return s.str();
}

std::string signed_percent(double fraction) {
  return (fraction >= 0 ? "+" : "") + percent(fraction);
}

std::string report_num(double v) {
  if (!std::isfinite(v)) return "n/a";
  std::ostringstream s;
  s << std::setprecision(6) << v;
  return s.str();
}

std::string bound_text(double v) {
  return std::isfinite(v) ? report_num(v) : "unbounded";
}

double rel_err(double measured, double predicted) {
  return (measured - predicted) / measured;
}

std::string owner_label(const FreeParameter& f) {
  return f.owner_prefix.empty() ? "scenario " + f.owner_origin : f.owner_origin;
}

}  // namespace

void write_calibration_text(std::ostream& os, const CalibrationSetup& setup,
                            const fit::CalibrationResult& r) {
  os << "calibrated " << r.parameters.size() << " parameter(s) of " << setup.scenario_file
     << " against " << setup.measured_file << " (" << r.n << " points, dof " << r.dof
     << "): " << (r.converged ? "converged" : "NOT converged") << " after " << r.iterations
     << " iterations, " << r.evaluations << " simulations\n";
  if (!r.converged) os << "  solver: " << r.termination << "\n";
  os << "\n";
  for (std::size_t j = 0; j < r.parameters.size(); ++j) {
    const fit::CalibratedParameter& p = r.parameters[j];
    const FreeParameter& f = setup.free[j];
    os << "  " << p.name << "  (" << owner_label(f) << ": " << f.path_in_owner << ")\n";
    os << "    start " << report_num(p.initial) << " (as written: " << f.as_written.dump()
       << ")  ->  calibrated " << report_num(p.value) << "  stderr " << report_num(p.std_error)
       << "  95% CI [" << report_num(p.ci[0]) << ", " << report_num(p.ci[1]) << "]  bounds ["
       << bound_text(p.lower) << ", " << bound_text(p.upper) << "]\n";
    if (!p.at_bound.empty())
      os << "    on its " << p.at_bound
         << " bound: the data want it beyond; interval not meaningful\n";
  }
  if (r.parameters.size() > 1) {
    os << "  correlation:";
    for (Eigen::Index a = 0; a < r.correlation.rows(); ++a) {
      for (Eigen::Index b = a + 1; b < r.correlation.cols(); ++b) {
        os << "  (" << a + 1 << "," << b + 1 << ") " << report_num(r.correlation(a, b));
      }
    }
    os << "\n";
  }
  os << "\n  relative error (measured - simulated) / measured: RMS "
     << percent(r.rms_rel_err_before) << " -> " << percent(r.rms_rel_err_after) << ", max "
     << percent(r.max_rel_err_before) << " -> " << percent(r.max_rel_err_after) << "\n\n";
  os << "  " << std::setw(5) << "line";
  for (const std::string& c : setup.override_columns)
    os << "  " << std::setw(std::max<int>(8, static_cast<int>(c.size()))) << c;
  os << "  " << std::setw(12) << "measured"
     << "  " << std::setw(12) << "before"
     << "  " << std::setw(9) << "err"
     << "  " << std::setw(12) << "after"
     << "  " << std::setw(9) << "err"
     << "\n";
  for (std::size_t i = 0; i < setup.rows.size(); ++i) {
    os << "  " << std::setw(5) << setup.rows[i].line;
    for (std::size_t c = 0; c < setup.override_columns.size(); ++c) {
      const std::string& o = setup.rows[i].overrides[c];
      os << "  " << std::setw(std::max<int>(8, static_cast<int>(setup.override_columns[c].size())))
         << o.substr(o.find('=') + 1);
    }
    os << "  " << std::setw(12) << format_number(r.measured[i], 6) << "  " << std::setw(12)
       << format_number(r.before[i], 6) << "  " << std::setw(9)
       << signed_percent(rel_err(r.measured[i], r.before[i])) << "  " << std::setw(12)
       << format_number(r.after[i], 6) << "  " << std::setw(9)
       << signed_percent(rel_err(r.measured[i], r.after[i])) << "\n";
  }
  if (!r.failed_evaluation.empty()) {
    os << "\n  note: some trial values were rejected by the simulator (the solver backed off): "
       << r.failed_evaluation << "\n";
  }
}

nlohmann::ordered_json calibration_json(const CalibrationSetup& setup,
                                        const fit::CalibrationResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = setup.scenario_file;
  j["measured"] = setup.measured_file;
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < r.parameters.size(); ++k) {
    const fit::CalibratedParameter& p = r.parameters[k];
    const FreeParameter& f = setup.free[k];
    params.push_back({{"path", p.name},
                      {"owner", f.owner_origin},
                      {"path_in_owner", f.path_in_owner},
                      {"start", p.initial},
                      {"value", p.value},
                      {"stderr", number_or_null(p.std_error)},
                      {"ci95", {number_or_null(p.ci[0]), number_or_null(p.ci[1])}},
                      {"bounds", {p.lower, number_or_null(p.upper)}},
                      {"at_bound", p.at_bound.empty() ? nlohmann::ordered_json(nullptr)
                                                      : nlohmann::ordered_json(p.at_bound)}});
  }
  j["parameters"] = params;
  j["rms_rel_err_before"] = r.rms_rel_err_before;
  j["rms_rel_err_after"] = r.rms_rel_err_after;
  j["max_rel_err_before"] = r.max_rel_err_before;
  j["max_rel_err_after"] = r.max_rel_err_after;
  j["n"] = r.n;
  j["dof"] = r.dof;
  j["converged"] = r.converged;
  j["termination"] = r.termination;
  j["iterations"] = r.iterations;
  j["simulations"] = r.evaluations;
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < setup.rows.size(); ++i) {
    nlohmann::ordered_json set = nlohmann::ordered_json::object();
    for (const std::string& o : setup.rows[i].overrides) {
      const auto eq = o.find('=');
      set[o.substr(0, eq)] = o.substr(eq + 1);
    }
    points.push_back({{"line", setup.rows[i].line},
                      {"set", set},
                      {"measured", r.measured[i]},
                      {"before", r.before[i]},
                      {"after", r.after[i]},
                      {"rel_err_before", rel_err(r.measured[i], r.before[i])},
                      {"rel_err_after", rel_err(r.measured[i], r.after[i])}});
  }
  j["points"] = points;
  return j;
}

std::vector<std::string> write_calibrated_documents(const std::string& dir,
                                                    const CalibrationSetup& setup,
                                                    const fit::CalibrationResult& r) {
  // One document per owner, in the order the owners first appear among --free.
  std::vector<std::string> owners;
  std::map<std::string, std::vector<std::size_t>> params_of;
  for (std::size_t k = 0; k < setup.free.size(); ++k) {
    const std::string& o = setup.free[k].owner_prefix;
    if (!params_of.contains(o)) owners.push_back(o);
    params_of[o].push_back(k);
  }
  std::vector<std::string> written;
  for (const std::string& owner : owners) {
    nlohmann::json doc;
    std::filesystem::path path;
    sim::JsonSource unused;
    unused.file = "calibrated";
    if (owner.empty()) {
      // The scenario as given (plus --set), with the calibrated values.
      doc = setup.scenario_doc;
      for (const std::string& o : setup.base_overrides)
        sim::apply_override(doc, o, unused);
      for (const std::size_t k : params_of[owner]) {
        sim::apply_override(doc, override_text(setup.free[k].path, r.parameters[k].value), unused);
      }
      path = std::filesystem::path(dir) / std::filesystem::path(setup.scenario_file).filename();
    } else {
      std::string pointer = "/" + owner;
      std::replace(pointer.begin(), pointer.end(), '.', '/');
      doc = setup.resolved_doc.at(nlohmann::json::json_pointer(pointer));
      for (const std::size_t k : params_of[owner]) {
        sim::apply_override(doc, override_text(setup.free[k].path_in_owner, r.parameters[k].value),
                            unused);
      }
      // The folder of the profile's kind, as hw_profiles/ lays them out (kernels is plural).
      const std::string kind = doc.at("kind").get<std::string>();
      path = std::filesystem::path(dir) / (kind == "kernels" ? kind : kind + "s") /
             (doc.at("name").get<std::string>() + ".json");
    }
    std::ostringstream header;
    header << "// Calibrated by `trainsim calibrate " << setup.scenario_file << " "
           << setup.measured_file << "` from " << setup.free[params_of[owner].front()].owner_origin
           << ":\n";
    if (!setup.base_overrides.empty()) {
      header << "//   with";
      for (const std::string& o : setup.base_overrides)
        header << " --set " << o;
      header << "\n";
    }
    for (const std::size_t k : params_of[owner]) {
      const fit::CalibratedParameter& p = r.parameters[k];
      header << "//   " << setup.free[k].path_in_owner << ": " << setup.free[k].as_written.dump()
             << " -> " << report_num(p.value) << " (stderr " << report_num(p.std_error)
             << ", 95% CI [" << report_num(p.ci[0]) << ", " << report_num(p.ci[1]) << "]"
             << (p.at_bound.empty() ? "" : ", on its " + p.at_bound + " bound") << ")\n";
    }
    header << "// fitted to " << r.n << " measured throughputs; RMS relative error "
           << percent(r.rms_rel_err_before) << " -> " << percent(r.rms_rel_err_after)
           << (r.converged ? "" : "; the solver did NOT converge") << ".\n"
           << "// Calibrated values are in SI base units; the sources of the other values are in "
              "the original.\n";
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary);
    if (!out) throw InputError("--out " + dir, "cannot write '" + path.string() + "'");
    out << header.str() << doc.dump(2) << "\n";
    written.push_back(path.string());
  }
  return written;
}

}  // namespace trainsim::cli
