// trainsim calibrate SCENARIO MEASURED.csv --free PATH[,PATH...]: fits chosen numeric scenario or
// profile parameters so that simulated throughput matches measured points (fit/calibration).

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/calibrate_report.hpp"
#include "cli/calibrate_setup.hpp"
#include "cli/calibrate_table.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/profiles_source.hpp"
#include "fit/calibration.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
int run_calibrate(const Args& args, CommandIo& io) {
  po::options_description options("calibrate options");
  std::string scenario_file;
  std::string measured_file;
  std::vector<std::string> free_texts;
  std::vector<std::string> sets;
  std::vector<std::string> dirs;
  std::string throughput_col = "throughput";
  std::string out_dir;
  std::string format = "text";
  std::string max_iterations_text = "50";
  std::string table;
  std::string rows;
  std::string objective_text;
  options.add_options()("scenario", po::value(&scenario_file), "scenario JSON file")(
      "table", po::value(&table),
      "instead of SCENARIO and MEASURED: fit profile values (--free KIND/NAME:PATH) to the "
      "calibration half of this `trainsim validate` table")(
      "rows", po::value(&rows), "with --table: only the rows whose label matches this regex")(
      "measured", po::value(&measured_file),
      "CSV: one column per scenario path to set for the row (e.g. batch_per_replica, "
      "parallelism.data) plus the "
      "measured throughput of the whole job in samples/s")(
      "free", po::value(&free_texts)->composing(),
      "numeric scenario/profile path(s) to calibrate, e.g. "
      "cluster.node.accelerator.kernels.compute.conv.fp16; repeat or "
      "give a comma list")("throughput-col",
                           po::value(&throughput_col)->default_value("throughput"),
                           "measured throughput column")(
      "set", po::value(&sets)->composing(),
      "override PATH=VALUE for every row (repeatable); also sets start values")(
      "profile-dir", po::value(&dirs)->composing(),
      "extra folder of profile JSON files (repeatable)")(
      "out", po::value(&out_dir),
      "folder to write the calibrated profile(s) (<kind>s/<name>.json, load with --profile-dir) "
      "and/or scenario")("max-iterations", po::value(&max_iterations_text),
                         "solver iteration limit (default 50)")(
      "format", po::value(&format)->default_value("text"), "text or json")(
      "objective", po::value(&objective_text),
      "what the fit minimises over the rows' relative errors: mape (their mean absolute value, "
      "what `trainsim validate` reports; the default with --table), mape+shape (with --table: "
      "that plus the same after each series is divided by its mean, validate's shape) or rms "
      "(least squares; the default with SCENARIO and MEASURED)");
  po::positional_options_description positional;
  positional.add("scenario", 1).add("measured", 1);
  po::variables_map vm;
  if (!parse_command_line("calibrate",
                          "SCENARIO.json MEASURED.csv --free PATH[,PATH...] [options]\n"
                          "       trainsim calibrate --table NAME --free KIND/NAME:PATH[,...] "
                          "[--rows REGEX] [options]",
                          args, options, positional, vm, io)) {
    return 0;
  }
  if (format != "text" && format != "json") {
    throw UsageError("--format " + format, "expected text or json");
  }
  const auto max_iterations =
      static_cast<int>(parse_integer_option("--max-iterations", max_iterations_text, 1, 1000));
  std::optional<fit::CalibrationObjective> objective;
  if (vm.count("objective")) {
    objective = fit::objective_named(objective_text);
    if (!objective) {
      throw UsageError("--objective " + objective_text, "expected mape, mape+shape or rms");
    }
    if (*objective == fit::CalibrationObjective::relative_l1_with_shape && table.empty()) {
      throw UsageError("--objective " + objective_text,
                       "needs --table: a measured CSV's rows form no series");
    }
  }
  // The output folder must be usable before the calibration runs, not after the report.
  if (!out_dir.empty()) {
    std::error_code ec;
    if (std::filesystem::exists(out_dir, ec) && !std::filesystem::is_directory(out_dir, ec))
      throw UsageError("--out " + out_dir, "is a file, not a folder");
    std::filesystem::create_directories(out_dir, ec);
    if (ec || !std::filesystem::is_directory(out_dir))
      throw UsageError("--out " + out_dir, "cannot create the folder (" + ec.message() + ")");
  }
  const sim::ProfileLibrary profiles = load_profile_library(dirs);
  if (!table.empty()) {
    if (!scenario_file.empty() || !measured_file.empty()) {
      throw UsageError("--table " + table, "takes no SCENARIO or MEASURED file");
    }
    TableCalibrationRequest req{table, split_commas(free_texts), rows, max_iterations,
                                format == "json"};
    if (objective) req.objective = *objective;
    return calibrate_on_table(req, profiles, io);
  }
  if (scenario_file.empty() || measured_file.empty()) {
    throw UsageError("trainsim calibrate", "needs SCENARIO.json and MEASURED.csv, or --table NAME");
  }
  const CalibrationSetup setup = prepare_calibration(
      scenario_file, sets, measured_file, throughput_col, split_commas(free_texts), profiles);

  std::vector<double> measured;
  for (const MeasuredRow& row : setup.rows)
    measured.push_back(row.throughput_samples_per_s);
  fit::CalibrationOptions fit_options;
  fit_options.max_iterations = max_iterations;
  if (objective) fit_options.objective = *objective;
  const std::vector<fit::CalibrationParameter> parameters = calibration_parameters(setup);
  const fit::BlackBoxModel model = [&setup, &profiles](std::span<const double> values,
                                                       std::size_t point) {
    return simulate_row(setup, profiles, values, point);
  };
  const fit::CalibrationResult result = fit::calibrate(parameters, measured, model, fit_options);

  if (format == "json") {
    io.out << calibration_json(setup, result).dump(2) << "\n";
  } else {
    write_calibration_text(io.out, setup, result);
  }
  if (!out_dir.empty()) {
    for (const std::string& path : write_calibrated_documents(out_dir, setup, result)) {
      io.err << "trainsim: wrote " << path << "\n";
    }
  }
  if (!result.converged)
    io.err << "trainsim: warning: calibration did not converge: " << result.termination << "\n";
  for (const fit::CalibratedParameter& p : result.parameters) {
    if (!p.at_bound.empty()) {
      io.err << "trainsim: warning: " << p.name << " ended on its " << p.at_bound
             << " bound; interval not meaningful\n";
    }
  }
  return 0;
}

}  // namespace trainsim::cli
