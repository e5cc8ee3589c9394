// trainsim fit POINTS.csv: fits v = b/(b/v0 + t) per group of measured points (fit/).

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "fit/echo_fit.hpp"
#include "fit/fit_series.hpp"
#include "fit/joint_fit.hpp"
#include "fit/points_csv.hpp"
#include "fit/report.hpp"
#include "fit/steps_fit.hpp"
#include "models/convergence.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
namespace {

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

std::string num(double v) {
  return std::isfinite(v) ? sim::format_significant(v, 6) : "n/a";
}

nlohmann::ordered_json json_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

// `trainsim fit --model steps-to-target`: S(B) = S_min (1 + B_noise/B) per group of
// (batch, steps) rows, through the throughput fit (fit/steps_fit.hpp).
int run_steps_fit(const std::string& points_path, fit::CsvColumns columns,
                  const std::string& format, bool halves, CommandIo& io) {
  const std::vector<fit::Series> series = fit::read_points_csv(points_path, columns);
  std::vector<fit::StepsFit> fits;
  for (const fit::Series& s : series) {
    std::vector<fit::StepsPoint> pts;
    for (const fit::Point& p : s.points)
      pts.push_back({p.batch, p.throughput_samples_per_s, p.line, true});
    if (halves) fit::split_steps_halves(pts);
    fits.push_back(fit::fit_steps_to_target(pts, s.name, s.source));
  }
  if (format == "json") {
    nlohmann::ordered_json j;
    j["model"] = "steps-to-target";
    j["confidence"] = 0.95;
    j["fits"] = nlohmann::ordered_json::array();
    for (const fit::StepsFit& f : fits) {
      nlohmann::ordered_json g;
      g["group"] = f.group;
      g["steps_min"] = f.steps_min;
      g["batch_noise"] = f.batch_noise;
      g["steps_min_stderr"] = json_or_null(f.steps_min_stderr);
      g["batch_noise_stderr"] = json_or_null(f.batch_noise_stderr);
      g["covariance"] = {{json_or_null(f.covariance(0, 0)), json_or_null(f.covariance(0, 1))},
                         {json_or_null(f.covariance(1, 0)), json_or_null(f.covariance(1, 1))}};
      g["correlation"] = json_or_null(f.corr);
      g["steps_min_ci"] = {json_or_null(f.steps_min_ci[0]), json_or_null(f.steps_min_ci[1])};
      g["batch_noise_ci"] = {json_or_null(f.batch_noise_ci[0]), json_or_null(f.batch_noise_ci[1])};
      g["n"] = f.n;
      g["dof"] = f.dof;
      g["calibration_mape_pct"] = f.calibration_mape;
      g["validation_n"] = f.validation_n;
      g["validation_mape_pct"] = f.validation_mape;
      g["converged"] = f.converged;
      g["residuals"] = nlohmann::ordered_json::array();
      for (const fit::StepsResidual& r : f.residuals) {
        g["residuals"].push_back({{"line", r.point.line},
                                  {"batch", r.point.batch},
                                  {"steps", r.point.steps},
                                  {"predicted_steps", r.predicted_steps},
                                  {"rel_err", r.rel_err},
                                  {"half", r.point.calibration ? "calibration" : "validation"}});
      }
      j["fits"].push_back(g);
    }
    io.out << j.dump(2) << "\n";
  } else if (format == "csv") {
    io.out << "group,steps_min,steps_min_stderr,steps_min_ci_lo,steps_min_ci_hi,batch_noise,"
              "batch_noise_stderr,batch_noise_ci_lo,batch_noise_ci_hi,correlation,n,dof,"
              "calibration_mape_pct,validation_n,validation_mape_pct\n";
    for (const fit::StepsFit& f : fits) {
      io.out << f.group << "," << num(f.steps_min) << "," << num(f.steps_min_stderr) << ","
             << num(f.steps_min_ci[0]) << "," << num(f.steps_min_ci[1]) << "," << num(f.batch_noise)
             << "," << num(f.batch_noise_stderr) << "," << num(f.batch_noise_ci[0]) << ","
             << num(f.batch_noise_ci[1]) << "," << num(f.corr) << "," << f.n << "," << f.dof << ","
             << num(f.calibration_mape) << "," << f.validation_n << "," << num(f.validation_mape)
             << "\n";
    }
  } else {
    for (const fit::StepsFit& f : fits) {
      io.out << "group " << f.group << ": S(B) = S_min (1 + B_noise/B), " << f.n
             << " rows fitted (relative error), dof " << f.dof << "\n"
             << "  S_min    " << num(f.steps_min) << " steps  +- " << num(f.steps_min_stderr)
             << "  95% [" << num(f.steps_min_ci[0]) << ", " << num(f.steps_min_ci[1]) << "]\n"
             << "  B_noise  " << num(f.batch_noise) << " samples  +- " << num(f.batch_noise_stderr)
             << "  95% [" << num(f.batch_noise_ci[0]) << ", " << num(f.batch_noise_ci[1]) << "]\n"
             << "  corr(S_min, B_noise) " << num(f.corr) << "; calibration MAPE "
             << num(f.calibration_mape) << "%";
      if (f.validation_n > 0)
        io.out << ", validation MAPE " << num(f.validation_mape) << "% (" << f.validation_n
               << " held-out rows)";
      io.out << "\n  "
             << "   batch        steps    predicted   rel err  half\n";
      for (const fit::StepsResidual& r : f.residuals) {
        char line[160];
        std::snprintf(line, sizeof line, "  %8.6g %12.6g %12.6g %8.2f%%  %s\n", r.point.batch,
                      r.point.steps, r.predicted_steps, 100.0 * r.rel_err,
                      r.point.calibration ? "calibration" : "validation");
        io.out << line;
      }
      if (!f.converged) {
        io.err << "trainsim: warning: group " << f.group
               << ": fit did not converge: " << f.termination << "\n";
      }
    }
  }
  return 0;
}

// `trainsim fit --model echo`: the worth of an echoed sample (fit/echo_fit.hpp) from fresh examples
// to a target per (batch, echo factor), given B_noise.
int run_echo_fit(const std::string& points_path, fit::CsvColumns columns, double batch_noise,
                 const std::string& format, CommandIo& io) {
  const std::string echo_col = columns.group.front();
  const std::vector<fit::Series> series = fit::read_points_csv(points_path, columns);
  std::map<double, double> baseline;  // batch -> fresh examples at echo 1
  std::vector<std::pair<int, const fit::Point*>> echoed;
  for (const fit::Series& s : series) {
    const std::string& text = s.group_values.front();
    const int line = s.points.front().line;
    const std::string where = points_path + ":" + std::to_string(line);
    std::size_t used = 0;
    long long e = 0;
    try {
      e = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || e < 1 || e > sim::limits::kMaxEchoFactor) {
      throw InputError(where, "column '" + echo_col + "': '" + text +
                                  "' is not an echo factor (an integer from 1 to " +
                                  std::to_string(sim::limits::kMaxEchoFactor) + ")");
    }
    for (const fit::Point& p : s.points) {
      if (e == 1) {
        if (baseline.contains(p.batch)) {
          throw InputError(points_path + ":" + std::to_string(p.line),
                           "a second echo-1 row at batch " + num(p.batch));
        }
        baseline[p.batch] = p.throughput_samples_per_s;
      } else {
        echoed.emplace_back(static_cast<int>(e), &p);
      }
    }
  }
  if (echoed.empty()) {
    throw InputError(points_path, "no rows with an echo factor above 1 to fit the repeat weight");
  }
  std::vector<fit::EchoPoint> pts;
  for (const auto& [e, p] : echoed) {
    const auto base = baseline.find(p->batch);
    if (base == baseline.end()) {
      throw InputError(points_path + ":" + std::to_string(p->line),
                       "no echo-1 row at batch " + num(p->batch) + " to compare with");
    }
    pts.push_back({p->batch, e, p->throughput_samples_per_s / base->second, p->line});
  }
  const auto model = [batch_noise](double batch, int echo, double w) {
    const models::ConvergenceParams p{1.0, batch_noise, std::nullopt};
    return models::steps_to_target(p, models::effective_batch(batch, echo, w)) /
           (echo * models::steps_to_target(p, batch));
  };
  const fit::EchoFit f = fit::fit_repeat_weight(pts, model);
  if (format == "json") {
    nlohmann::ordered_json j;
    j["model"] = "echo";
    j["batch_noise"] = batch_noise;
    j["repeat_weight"] = f.repeat_weight;
    j["repeat_weight_stderr"] = json_or_null(f.stderr_value);
    j["repeat_weight_ci"] = {json_or_null(f.ci[0]), json_or_null(f.ci[1])};
    j["at_bound"] = f.at_bound;
    j["n"] = f.n;
    j["dof"] = f.dof;
    j["mape_pct"] = f.mape;
    j["residuals"] = nlohmann::ordered_json::array();
    for (const fit::EchoResidual& r : f.residuals) {
      j["residuals"].push_back({{"line", r.point.line},
                                {"batch", r.point.batch},
                                {"echo", r.point.echo},
                                {"fresh_ratio", r.point.fresh_ratio},
                                {"predicted_ratio", r.predicted_ratio},
                                {"rel_err", r.rel_err}});
    }
    io.out << j.dump(2) << "\n";
  } else if (format == "csv") {
    io.out << "repeat_weight,repeat_weight_stderr,ci_lo,ci_hi,at_bound,n,dof,mape_pct\n"
           << num(f.repeat_weight) << "," << num(f.stderr_value) << "," << num(f.ci[0]) << ","
           << num(f.ci[1]) << "," << (f.at_bound ? "true" : "false") << "," << f.n << "," << f.dof
           << "," << num(f.mape) << "\n";
  } else {
    io.out << "repeat weight w = " << num(f.repeat_weight) << "  +- " << num(f.stderr_value)
           << "  95% [" << num(f.ci[0]) << ", " << num(f.ci[1]) << "]"
           << " (B_noise " << num(batch_noise) << ", " << f.n << " echoed rows, MAPE "
           << num(f.mape) << "%)"
           << (f.at_bound ? "; on its bound: the interval is not meaningful" : "") << "\n"
           << "     batch  echo  fresh ratio  predicted  rel err\n";
    for (const fit::EchoResidual& r : f.residuals) {
      char line[160];
      std::snprintf(line, sizeof line, "  %8.6g %5d %12.6g %10.6g %7.2f%%\n", r.point.batch,
                    r.point.echo, r.point.fresh_ratio, r.predicted_ratio, 100.0 * r.rel_err);
      io.out << line;
    }
  }
  return 0;
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
  std::string model_text = "throughput";
  std::string steps_col = "steps";
  std::string split_text = "none";
  std::string batch_noise_text;
  std::string echo_col = "echo";
  std::string fresh_col = "fresh_examples";
  options.add_options()("model", po::value(&model_text)->default_value("throughput"),
                        "throughput (v = b/(b/v0 + t)), steps-to-target (S = S_min (1 + "
                        "B_noise/B) from batch and steps columns) or echo (the worth of an echoed "
                        "sample from batch, echo and fresh_examples columns)")(
      "batch-noise", po::value(&batch_noise_text), "B_noise in samples (--model echo)")(
      "echo-col", po::value(&echo_col)->default_value("echo"), "echo factor column (--model echo)")(
      "fresh-col", po::value(&fresh_col)->default_value("fresh_examples"),
      "fresh examples to the target column (--model echo)")(
      "steps-col", po::value(&steps_col)->default_value("steps"),
      "steps-to-target column (--model steps-to-target)")(
      "split", po::value(&split_text)->default_value("none"),
      "none, or halves: fit every other row by batch, report the rest as validation "
      "(--model steps-to-target)")("points", po::value(&points_path)->required(),
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
  if (model_text != "throughput" && model_text != "steps-to-target" && model_text != "echo")
    throw UsageError("--model " + model_text, "expected throughput, steps-to-target or echo");
  if (model_text == "echo") {
    if (shared_text.size() || predict_texts.size() || curve_path.size() || relative ||
        loss_text != "l2" || loss_scale_text.size() || columns.weight.size() ||
        !group_cols.empty() || split_text != "none") {
      throw UsageError(
          "--model echo",
          "takes --batch-noise, --batch-col, --echo-col, --fresh-col and --format only");
    }
    if (batch_noise_text.empty())
      throw UsageError("--model echo", "needs --batch-noise (B_noise of the workload, samples)");
    const double batch_noise = parse_number_option("--batch-noise", batch_noise_text,
                                                   fit::kMinFitValue, fit::kMaxFitValue);
    columns.group = {echo_col};
    columns.throughput = fresh_col;
    return run_echo_fit(points_path, columns, batch_noise, format, io);
  }
  if (!batch_noise_text.empty())
    throw UsageError("--batch-noise " + batch_noise_text, "applies to --model echo only");
  if (split_text != "none" && split_text != "halves")
    throw UsageError("--split " + split_text, "expected none or halves");
  if (model_text == "steps-to-target") {
    if (shared_text.size() || predict_texts.size() || curve_path.size() || relative ||
        loss_text != "l2" || loss_scale_text.size() || columns.weight.size()) {
      throw UsageError("--model steps-to-target",
                       "takes --group-col, --batch-col, --steps-col, --split and --format only");
    }
    columns.throughput = steps_col;
    columns.group = split_commas(group_cols);
    return run_steps_fit(points_path, columns, format, split_text == "halves", io);
  }
  if (split_text != "none")
    throw UsageError("--split " + split_text, "applies to --model steps-to-target only");
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
