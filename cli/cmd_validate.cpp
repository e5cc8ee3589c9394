// trainsim validate [--table NAME]... [--format text|json]: every shipped reference table run
// through the simulator, with its accuracy on the calibration half and on the validation half.

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/profiles_source.hpp"
#include "cli/units_format.hpp"
#include "cli/validate_tables.hpp"
#include "sim/config/nearest_name.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

namespace {

nlohmann::json accuracy_json(const fit::TableAccuracy& a, const ReferenceTable& t) {
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : a.worst) {
    worst.push_back({{"label", w.label},
                     {"measured", w.measured},
                     {"predicted", w.predicted},
                     {"error_pct", w.error_pct}});
  }
  return {{"name", a.name},
          {"source", a.source},
          {"metric", t.metric},
          {"half", fit::half_name(a.half)},
          {"points", a.points},
          {"mape_abs_pct", a.mape_abs_pct},
          {"mape_shape_pct", a.mape_shape_pct},
          {"mape_scaling_pct",
           a.mape_scaling_pct ? nlohmann::json(*a.mape_scaling_pct) : nlohmann::json(nullptr)},
          {"worst", worst}};
}

std::string pct(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << v << "%";
  return os.str();
}

}  // namespace

int run_validate(const Args& args, CommandIo& io) {
  po::options_description options("validate options");
  std::vector<std::string> tables;
  std::vector<std::string> dirs;
  std::string format = "text";
  std::string points_file;
  options.add_options()("table", po::value(&tables),
                        "run only this reference table (repeatable); default: all")(
      "format", po::value(&format), "text | json")(
      "points", po::value(&points_file),
      "also write every point (table, half, series, label, measured, simulated) to this CSV")(
      "profile-dir", po::value(&dirs), "extra folder of profile JSON files (repeatable)");
  po::positional_options_description pos;
  po::variables_map vm;
  if (!parse_command_line("validate", "[--table NAME]... [--format text|json]", args, options, pos,
                          vm, io)) {
    return 0;
  }
  if (format != "text" && format != "json") {
    throw UsageError("--format " + format, "expected text or json");
  }
  const sim::ProfileLibrary profiles = load_profile_library(dirs);
  const std::vector<ReferenceTable> all = reference_tables();
  std::vector<std::string> names;
  for (const ReferenceTable& t : all)
    names.push_back(t.name);
  for (const std::string& t : tables) {
    if (std::find(names.begin(), names.end(), t) == names.end()) {
      const std::string near = sim::nearest_name(t, names);
      std::string known;
      for (const auto& n : names)
        known += (known.empty() ? "" : ", ") + n;
      throw UsageError("--table " + t, "unknown reference table" +
                                           (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                                           "; tables: " + known);
    }
  }
  const std::set<std::string> wanted(tables.begin(), tables.end());
  std::ofstream points_out;
  if (!points_file.empty()) {
    points_out.open(points_file);
    if (!points_out)
      throw UsageError("--points " + points_file, "cannot open the file for writing");
    points_out << "table,half,series,x,gpus,label,measured,simulated,error_pct\n";
  }
  nlohmann::json out = {{"tables", nlohmann::json::array()}};
  // The table column fits the longest name shown.
  int name_width = 6;
  for (const ReferenceTable& t : all)
    if (wanted.empty() || wanted.count(t.name) != 0)
      name_width = std::max(name_width, static_cast<int>(t.name.size()) + 2);
  std::ostringstream text;
  text << std::left << std::setw(name_width) << "table" << std::setw(13) << "half" << std::right
       << std::setw(7) << "points" << std::setw(11) << "MAPE abs" << std::setw(12) << "MAPE shape"
       << std::setw(14) << "MAPE scaling"
       << "   metric\n";
  std::ostringstream worst_text;
  std::ostringstream excluded_text;
  nlohmann::json excluded = nlohmann::json::array();
  for (const ReferenceTable& t : all) {
    if (!wanted.empty() && wanted.count(t.name) == 0) continue;
    if (io.err_is_terminal) io.err << "validate: " << t.name << "...\n";
    const std::vector<fit::ValidationPoint> points = t.evaluate(profiles);
    if (points_out) {
      const auto quoted = [](std::string v) {
        std::string q = "\"";
        for (char c : v)
          q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
      };
      for (const auto& p : points) {
        points_out << t.name << "," << fit::half_name(p.half) << "," << quoted(p.series) << ","
                   << p.x << "," << p.gpus << "," << quoted(p.label) << "," << p.measured << ","
                   << p.predicted << "," << 100 * (p.predicted - p.measured) / p.measured << "\n";
      }
    }
    for (const auto& p : points) {
      if (p.half != fit::Half::excluded) continue;
      excluded.push_back({{"table", t.name},
                          {"label", p.label},
                          {"measured", p.measured},
                          {"simulated", p.predicted},
                          {"reason", p.excluded_because}});
      excluded_text << "  " << t.name << ": " << p.label << ": measured "
                    << format_number(p.measured, 4) << ", simulated "
                    << format_number(p.predicted, 4) << "; " << p.excluded_because << "\n";
    }
    for (const fit::Half half : {fit::Half::calibration, fit::Half::validation}) {
      const fit::TableAccuracy a = fit::summarize(t.name, t.source, half, points, 3);
      out["tables"].push_back(accuracy_json(a, t));
      text << std::left << std::setw(name_width) << t.name << std::setw(13) << fit::half_name(half)
           << std::right << std::setw(7) << a.points << std::setw(11) << pct(a.mape_abs_pct)
           << std::setw(12) << pct(a.mape_shape_pct) << std::setw(14)
           << (a.mape_scaling_pct ? pct(*a.mape_scaling_pct) : std::string("-")) << "   "
           << t.metric << "\n";
      if (half == fit::Half::validation && !a.worst.empty()) {
        worst_text << "  " << t.name << " (" << t.source << "):\n";
        for (const auto& w : a.worst) {
          worst_text << "    " << std::showpos << std::fixed << std::setprecision(1) << w.error_pct
                     << std::noshowpos << "%  " << w.label << ": measured "
                     << format_number(w.measured, 4) << ", simulated "
                     << format_number(w.predicted, 4) << "\n";
        }
      }
    }
  }
  out["excluded"] = excluded;
  if (format == "json") {
    io.out << out.dump(2) << "\n";
  } else {
    io.out << text.str() << "\nworst points of each validation half:\n" << worst_text.str();
    if (!excluded.empty())
      io.out << "\nrows left out of both halves (failed runs, and rows beyond the GPUs' peak; "
                "fitted and scored on by nothing):\n"
             << excluded_text.str();
  }
  return 0;
}

}  // namespace trainsim::cli
