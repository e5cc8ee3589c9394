// trainsim fit POINTS.csv: fits v = b/(b/v0 + t) per group of measured points (fit/).

#include <cmath>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "fit/fit_series.hpp"
#include "fit/joint_fit.hpp"
#include "fit/points_csv.hpp"
#include "fit/report.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
namespace {

std::vector<std::string> split_commas(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    std::size_t start = 0;
    while (start <= v.size()) {
      const auto comma = v.find(',', start);
      const std::string item =
          v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!item.empty()) out.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

fit::Loss parse_loss(const std::string& text) {
  if (text == "l2") return fit::Loss::l2;
  if (text == "huber") return fit::Loss::huber;
  if (text == "cauchy") return fit::Loss::cauchy;
  throw UsageError("--loss " + text, "unknown loss (expected l2, huber or cauchy)");
}

fit::Shared parse_shared(const std::string& text) {
  if (text == "v0") return fit::Shared::v0;
  if (text == "t") return fit::Shared::t;
  throw UsageError("--shared " + text, "unknown parameter (expected v0 or t)");
}

}  // namespace

int run_fit(const Args& args, CommandIo& io) {
  po::options_description options("options");
  std::string points_path;
  std::vector<std::string> group_cols;
  std::vector<std::string> predict_texts;
  fit::CsvColumns columns;
  std::string loss_text = "l2";
  std::string loss_scale_text;
  std::string curve_path;
  std::string shared_text;
  std::string format = "text";
  bool relative = false;
  options.add_options()("points", po::value(&points_path)->required(),
                        "CSV of measured points (header line, one point per line)")(
      "group-col", po::value(&group_cols)->composing(),
      "column(s) whose values split the points into series; repeat or give a comma list "
      "(gpu,model)")("batch-col", po::value(&columns.batch)->default_value("batch"),
                     "batch-size column")(
      "throughput-col", po::value(&columns.throughput),
      "throughput column (default: the one named throughput, images_per_s or samples_per_s)")(
      "weight-col", po::value(&columns.weight),
      "per-point weight column (multiplies the squared residual)")(
      "loss", po::value(&loss_text)->default_value("l2"), "l2, huber or cauchy")(
      "loss-scale", po::value(&loss_scale_text),
      "residual size where huber/cauchy start to down-weight (throughput units, or a fraction with "
      "--relative; "
      "default 1, like scipy's f_scale)")("relative", po::bool_switch(&relative),
                                          "fit relative errors (v - f)/v instead of v - f")(
      "predict", po::value(&predict_texts)->composing(),
      "batch sizes to predict at, e.g. 64,128,1024")(
      "curve", po::value(&curve_path), "write the fitted curve and its 95% bands to this CSV")(
      "shared", po::value(&shared_text), "joint fit across groups sharing v0 or t")(
      "format", po::value(&format)->default_value("text"), "text, json or csv");
  po::positional_options_description positional;
  positional.add("points", 1);
  po::variables_map vm;
  if (!parse_command_line("fit", "POINTS.csv [options]", args, options, positional, vm, io))
    return 0;

  if (format != "text" && format != "json" && format != "csv") {
    throw UsageError("--format " + format, "expected text, json or csv");
  }
  fit::FitOptions fit_options;
  fit_options.loss = parse_loss(loss_text);
  fit_options.relative = relative;
  if (!loss_scale_text.empty()) {
    if (fit_options.loss == fit::Loss::l2)
      throw UsageError("--loss-scale " + loss_scale_text, "applies only to --loss huber or cauchy");
    fit_options.loss_scale =
        parse_number_option("--loss-scale", loss_scale_text, 0.0, fit::kMaxFitValue, true);
  }
  std::vector<double> predict_batches;
  for (const std::string& b : split_commas(predict_texts)) {
    predict_batches.push_back(
        parse_number_option("--predict", b, fit::kMinFitValue, fit::kMaxFitValue));
  }
  columns.group = split_commas(group_cols);
  const fit::Shared shared = shared_text.empty() ? fit::Shared::none : parse_shared(shared_text);

  // Open the curve file before fitting, so a bad path fails before any report is printed.
  std::ofstream curve;
  if (!curve_path.empty()) {
    if (std::filesystem::is_directory(curve_path))
      throw UsageError("--curve " + curve_path, "is a folder, not a file");
    curve.open(curve_path, std::ios::binary);
    if (!curve) throw UsageError("--curve " + curve_path, "cannot open the file for writing");
  }
  const std::vector<fit::Series> series = fit::read_points_csv(points_path, columns);
  std::vector<fit::ThroughputFit> fits;
  fit::ReportContext context;
  context.group_columns = columns.group;
  context.confidence = fit_options.confidence;
  if (shared == fit::Shared::none) {
    // Check every group before fitting any, so one bad group fails fast with its lines.
    for (const fit::Series& s : series)
      fit::require_identifiable(s);
    for (const fit::Series& s : series)
      fits.push_back(fit::fit_series(s, fit_options, predict_batches));
  } else {
    fit::JointFit joint = fit::fit_joint(series, shared, fit_options, predict_batches);
    fits = std::move(joint.fits);
    context.joint = joint.summary;
  }

  if (format == "json") {
    io.out << fit::fits_to_json(fits, context).dump(2) << "\n";
  } else if (format == "csv") {
    fit::write_csv(io.out, fits);
  } else {
    fit::write_text(io.out, fits, context);
  }
  if (!curve_path.empty()) {
    fit::write_curve_csv(curve, fits);
    curve.close();
    if (!curve) throw std::runtime_error("--curve " + curve_path + ": writing the file failed");
  }
  // Problems are in the report too; stderr makes sure a script piping JSON still sees them.
  for (const fit::ThroughputFit& f : fits) {
    if (!f.converged)
      io.err << "trainsim: warning: group " << f.group
             << ": fit did not converge: " << f.termination << "\n";
    for (const std::string& p : f.at_bound) {
      io.err << "trainsim: warning: group " << f.group << ": " << p
             << " ended on its bound; intervals not meaningful\n";
    }
  }
  return 0;
}

}  // namespace trainsim::cli
