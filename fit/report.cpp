#include "fit/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "fit/csv_table.hpp"
#include "fit/uncertainty.hpp"
#include "sim/config/units.hpp"

namespace trainsim::fit {
namespace {

std::string fmt(double value, const char* format = "%.6g") {
  if (!std::isfinite(value)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// A percentage with two decimals, or in exponent form when that would print dozens of digits.
std::string percent(double fraction) {
  const double v = 100.0 * fraction;
  return fmt(v, std::abs(v) < 1e6 ? "%.2f" : "%.4g") + "%";
}

std::string interval(const std::array<double, 2>& ci, const char* format = "%.6g") {
  std::string out = "[";
  out += fmt(ci[0], format);
  out += ", ";
  out += fmt(ci[1], format);
  out += ']';
  return out;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// CSV fields: quoted when they hold a comma or a quote.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_number(double v) {
  return std::isfinite(v) ? sim::format_significant(v, 10) : "";
}

}  // namespace

std::string loss_name(Loss loss) {
  switch (loss) {
    case Loss::huber:
      return "huber";
    case Loss::cauchy:
      return "cauchy";
    case Loss::l2:
      break;
  }
  return "l2";
}

std::string shared_name(Shared shared) {
  switch (shared) {
    case Shared::v0:
      return "v0";
    case Shared::t:
      return "t";
    case Shared::none:
      break;
  }
  return "none";
}

nlohmann::ordered_json fits_to_json(const std::vector<ThroughputFit>& fits,
                                    const ReportContext& context) {
  using json = nlohmann::ordered_json;
  json out;
  out["model"] = "v = b/(b/v0 + t)";
  out["confidence"] = context.confidence;
  json list = json::array();
  for (const ThroughputFit& f : fits) {
    json j;
    j["group"] = f.group;
    if (!context.group_columns.empty() && context.group_columns.size() == f.group_values.size()) {
      json values = json::object();
      for (std::size_t i = 0; i < f.group_values.size(); ++i)
        values[context.group_columns[i]] = f.group_values[i];
      j["group_values"] = values;
    }
    j["v0"] = f.v0_samples_per_s;
    j["t_s"] = f.t_s;
    j["v0_stderr"] = f.v0_stderr;
    j["t_stderr"] = f.t_stderr;
    j["v0_ci95"] = f.v0_ci;
    j["t_ci95"] = f.t_ci;
    j["corr"] = f.corr;
    j["r2"] = f.r2;
    j["rmse"] = f.rmse_samples_per_s;
    j["max_rel_err"] = f.max_rel_err;
    j["n"] = f.n;
    j["dof"] = f.dof;
    j["b50"] = f.b50;
    j["b50_ci95"] = f.b50_ci;
    j["b90"] = f.b90;
    j["converged"] = f.converged;
    j["at_bound"] = f.at_bound;
    j["termination"] = f.termination;
    j["iterations"] = f.iterations;
    j["loss"] = loss_name(f.loss);
    if (f.loss != Loss::l2) j["loss_scale"] = f.loss_scale;
    j["relative"] = f.relative;
    j["shared"] = f.shared == Shared::none ? json(nullptr) : json(shared_name(f.shared));
    json residuals = json::array();
    for (const PointResidual& r : f.residuals) {
      residuals.push_back(json{{"line", r.point.line},
                               {"batch", r.point.batch},
                               {"measured", r.point.throughput_samples_per_s},
                               {"predicted", r.predicted_samples_per_s},
                               {"residual", r.residual_samples_per_s},
                               {"rel_err", r.rel_err}});
    }
    j["residuals"] = residuals;
    json predictions = json::array();
    for (const Prediction& p : f.predictions) {
      predictions.push_back(json{{"batch", p.batch},
                                 {"throughput", p.throughput_samples_per_s},
                                 {"ci95", p.ci},
                                 {"pi95", p.pi}});
    }
    j["predictions"] = predictions;
    list.push_back(j);
  }
  out["fits"] = list;
  if (context.joint) {
    const JointSummary& s = *context.joint;
    out["joint"] = json{{"shared", shared_name(s.shared)},
                        {"n", s.n},
                        {"parameters", s.parameters},
                        {"dof", s.dof},
                        {"residual_variance", s.residual_variance},
                        {"f_statistic", s.f_statistic},
                        {"f_dof", {s.f_dof1, s.f_dof2}},
                        {"p_value", s.p_value}};
  }
  return out;
}

void write_text(std::ostream& os, const std::vector<ThroughputFit>& fits,
                const ReportContext& context) {
  const std::string pct = fmt(100.0 * context.confidence, "%.4g") + "%";
  if (!fits.empty()) {
    const ThroughputFit& f0 = fits.front();
    os << "fit of v = b/(b/v0 + t); loss " << loss_name(f0.loss);
    if (f0.loss != Loss::l2) os << " (scale " << fmt(f0.loss_scale) << ")";
    if (f0.relative) os << ", relative errors";
    os << "; " << pct << " intervals from Student-t\n";
  }
  if (context.joint) {
    const JointSummary& s = *context.joint;
    os << "joint fit, " << shared_name(s.shared) << " shared: n=" << s.n
       << ", parameters=" << s.parameters << ", dof=" << s.dof;
    if (!std::isnan(s.p_value)) {
      os << "; F test vs separate fits F(" << s.f_dof1 << "," << s.f_dof2
         << ")=" << fmt(s.f_statistic, "%.4g") << ", p=" << fmt(s.p_value, "%.3g");
    }
    os << "\n";
  }
  for (const ThroughputFit& f : fits) {
    os << "\ngroup " << f.group << "  (n=" << f.n << ", dof=" << f.dof << ", "
       << (f.converged ? "converged" : "NOT CONVERGED: " + f.termination) << ")\n";
    if (!f.at_bound.empty()) {
      os << "  WARNING: " << join(f.at_bound, " and ")
         << " on its bound (v0 > 0, t >= 0): the intervals assume an interior optimum and are not "
            "meaningful\n";
    }
    if (f.dof < 1)
      os << "  note: as many parameters as points: no residual variance, no intervals\n";
    os << "  v0 = " << pad(fmt(f.v0_samples_per_s), 12) << " samples/s  stderr "
       << pad(fmt(f.v0_stderr, "%.3g"), 10) << "  " << pct << " CI " << interval(f.v0_ci) << "\n";
    os << "  t  = " << pad(fmt(f.t_s), 12) << " s          stderr "
       << pad(fmt(f.t_stderr, "%.3g"), 10) << "  " << pct << " CI " << interval(f.t_ci) << "\n";
    os << "  corr(v0,t) = " << fmt(f.corr, "%.3f") << "  R^2 = " << fmt(f.r2, "%.5f")
       << "  RMSE = " << fmt(f.rmse_samples_per_s, "%.4g")
       << " samples/s  max rel err = " << percent(f.max_rel_err) << "\n";
    os << "  b50 = " << fmt(f.b50, "%.4g") << " (" << pct << " CI " << interval(f.b50_ci, "%.4g")
       << ")  b90 = " << fmt(f.b90, "%.4g") << "  (batch at 50% / 90% of v0)\n";
    os << "      batch    measured   predicted    residual   rel err\n";
    for (const PointResidual& r : f.residuals) {
      os << "  " << pad(fmt(r.point.batch), 9)
         << pad(fmt(r.point.throughput_samples_per_s, "%.5g"), 12)
         << pad(fmt(r.predicted_samples_per_s, "%.5g"), 12)
         << pad(fmt(r.residual_samples_per_s, "%.4g"), 12) << pad(percent(r.rel_err), 10) << "\n";
    }
    if (!f.predictions.empty()) {
      os << "  predictions:\n      batch  throughput   " << pct << " CI (curve)      " << pct
         << " PI (new point)\n";
      for (const Prediction& p : f.predictions) {
        os << "  " << pad(fmt(p.batch), 9) << pad(fmt(p.throughput_samples_per_s, "%.5g"), 12)
           << "   " << interval(p.ci, "%.5g") << "   " << interval(p.pi, "%.5g") << "\n";
      }
    }
  }
}

void write_csv(std::ostream& os, const std::vector<ThroughputFit>& fits) {
  os << "group,n,v0,v0_stderr,v0_ci_lo,v0_ci_hi,t_s,t_stderr,t_ci_lo,t_ci_hi,corr,r2,rmse,max_rel_"
        "err,b50,b90,"
        "converged,at_bound\n";
  for (const ThroughputFit& f : fits) {
    os << csv_field(f.group) << "," << f.n << "," << csv_number(f.v0_samples_per_s) << ","
       << csv_number(f.v0_stderr) << "," << csv_number(f.v0_ci[0]) << "," << csv_number(f.v0_ci[1])
       << "," << csv_number(f.t_s) << "," << csv_number(f.t_stderr) << "," << csv_number(f.t_ci[0])
       << "," << csv_number(f.t_ci[1]) << "," << csv_number(f.corr) << "," << csv_number(f.r2)
       << "," << csv_number(f.rmse_samples_per_s) << "," << csv_number(f.max_rel_err) << ","
       << csv_number(f.b50) << "," << csv_number(f.b90) << "," << (f.converged ? "true" : "false")
       << "," << join(f.at_bound, ";") << "\n";
  }
}

void write_curve_csv(std::ostream& os, const std::vector<ThroughputFit>& fits,
                     int points_per_group) {
  os << "group,batch,throughput,ci_lo,ci_hi,pi_lo,pi_hi\n";
  for (const ThroughputFit& f : fits) {
    double lo = 0.0;
    double hi = 0.0;
    for (const PointResidual& r : f.residuals) {
      lo = lo == 0.0 ? r.point.batch : std::min(lo, r.point.batch);
      hi = std::max(hi, r.point.batch);
    }
    lo /= 2.0;
    hi *= 2.0;
    for (int i = 0; i < points_per_group; ++i) {
      const double frac =
          points_per_group > 1 ? static_cast<double>(i) / (points_per_group - 1) : 0.0;
      const Prediction p = predict(f, lo * std::pow(hi / lo, frac));
      os << csv_field(f.group) << "," << csv_number(p.batch) << ","
         << csv_number(p.throughput_samples_per_s) << "," << csv_number(p.ci[0]) << ","
         << csv_number(p.ci[1]) << "," << csv_number(p.pi[0]) << "," << csv_number(p.pi[1]) << "\n";
    }
  }
}

}  // namespace trainsim::fit
