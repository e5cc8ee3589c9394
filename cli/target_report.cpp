#include "cli/target_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <regex>

#include "cli/options.hpp"
#include "cli/parameter_provenance.hpp"
#include "cli/run_checks.hpp"
#include "cli/scenario_source.hpp"
#include "cli/units_format.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
namespace {
// The two-sided 95% quantile of the standard normal distribution (Phi^-1(0.975)).
constexpr double kNormal95 = 1.959963984540054;

std::string number_text(double v) {
  return sim::format_significant(v, 17);
}
}  // namespace

double parse_price_per_gpu_hour(const std::string& text) {
  return parse_number_option("--price-per-gpu-hour", text, 0.0, 1e6, true);
}

std::optional<TargetResult> evaluate_target(const models::Scenario& s, const models::StepReport& r,
                                            std::optional<double> usd_per_gpu_hour) {
  if (!s.target) return std::nullopt;
  const models::ConvergenceTarget& t = *s.target;
  const double batch = static_cast<double>(r.global_batch);
  const int e = std::max(1, r.echo_factor);
  TargetResult out;
  out.at_echo = models::to_target(t.params, batch, e, t.repeat_weight, r.step_time_s);
  // The report's echo_speedup is step time at e = 1 over step time at e (a second simulation).
  const double step_no_echo = r.step_time_s * r.echo_speedup;
  out.time_s_no_echo = models::to_target(t.params, batch, 1, t.repeat_weight, step_no_echo).time_s;
  out.echo_speedup = out.time_s_no_echo / out.at_echo.time_s;
  if (usd_per_gpu_hour) out.cost_usd = *usd_per_gpu_hour * r.devices * out.at_echo.time_s / 3600.0;
  return out;
}

nlohmann::json to_target_json(const std::optional<TargetResult>& t, bool with_cost) {
  nlohmann::json j;
  j["steps"] = t ? nlohmann::json(t->at_echo.steps) : nlohmann::json();
  j["time_s"] = t ? nlohmann::json(t->at_echo.time_s) : nlohmann::json();
  j["fresh_samples"] = t ? nlohmann::json(t->at_echo.fresh_samples) : nlohmann::json();
  j["echo_speedup"] = t ? nlohmann::json(t->echo_speedup) : nlohmann::json();
  j["effective_batch"] = t ? nlohmann::json(t->at_echo.effective_batch) : nlohmann::json();
  if (with_cost) j["cost_usd"] = t && t->cost_usd ? nlohmann::json(*t->cost_usd) : nlohmann::json();
  return j;
}

void print_to_target_text(std::ostream& os, const models::Scenario& s, const TargetResult& t) {
  const models::ConvergenceTarget& c = *s.target;
  os << "  to target           "
     << (c.workload.empty() ? std::string("S_min ") + format_number(c.params.steps_min, 4) +
                                  ", B_noise " + format_number(c.params.batch_noise, 4)
                            : c.workload + " (" + c.metric + ")")
     << ": " << format_number(t.at_echo.steps, 4) << " steps, " << format_duration(t.at_echo.time_s)
     << ", " << format_number(t.at_echo.fresh_samples, 4)
     << " fresh samples; echo speedup to target " << format_number(t.echo_speedup, 3) << "x";
  if (t.cost_usd) os << "; " << format_number(*t.cost_usd, 4) << " USD";
  os << "\n";
}

std::optional<std::array<double, 2>> time_to_target_interval(const models::Scenario& s,
                                                             const models::StepReport& r) {
  if (!s.target || !s.target->params.covariance) return std::nullopt;
  const models::ConvergenceParams& p = s.target->params;
  const auto& c = *p.covariance;
  const double b_eff = models::effective_batch(static_cast<double>(r.global_batch),
                                               std::max(1, r.echo_factor), s.target->repeat_weight);
  // time = S_min (1 + B_noise / B_eff) x step time: gradient in (S_min, B_noise).
  const double g0 = (1.0 + p.batch_noise / b_eff) * r.step_time_s;
  const double g1 = p.steps_min / b_eff * r.step_time_s;
  const double var = g0 * g0 * c.steps_var + 2 * g0 * g1 * c.cross + g1 * g1 * c.noise_var;
  const double t = models::steps_to_target(p, b_eff) * r.step_time_s;
  const double half = kNormal95 * std::sqrt(std::max(0.0, var));
  return std::array<double, 2>{t - half, t + half};
}

StepUncertainty step_time_uncertainty(const std::string& scenario_file,
                                      const std::vector<std::string>& sets,
                                      const sim::ProfileLibrary& profiles,
                                      const ResultProvenance& provenance) {
  StepUncertainty out;
  static const std::regex kFitted(R"(->\s*([-+0-9.eE]+)\s*\(stderr\s*([-+0-9.eE]+)\))");
  const auto step_at = [&](const std::string& path, double value) -> std::optional<double> {
    std::vector<std::string> o = sets;
    o.push_back(path + "=" + number_text(value));
    try {
      const models::Scenario s = load_scenario_source(scenario_file, o, profiles);
      return simulate_checked(s, scenario_label(scenario_file, o)).step_time_s;
    } catch (const InputError&) {
      return std::nullopt;  // the profile refuses the moved value (a bound): a smaller step
    }
  };
  for (const ParameterSource& p : provenance.parameters) {
    if (p.provenance.kind != sim::ProvenanceKind::calibrated) continue;
    std::smatch m;
    const std::string& text = p.provenance.citation;
    double x = 0;
    double stderr_value = 0;
    if (!std::regex_search(text, m, kFitted) || p.scenario_path.empty()) {
      out.skipped.push_back(p.name());
      continue;
    }
    try {
      x = std::stod(m[1].str());
      stderr_value = std::stod(m[2].str());
    } catch (const std::exception&) {
      out.skipped.push_back(p.name());
      continue;
    }
    if (!(stderr_value > 0) || !std::isfinite(x)) {
      out.skipped.push_back(p.name());
      continue;
    }
    double h = stderr_value;
    if (x > 0) h = std::min(h, 0.5 * x);  // positive quantities stay positive
    std::optional<double> derivative;
    for (int tries = 0; tries < 4 && !derivative; ++tries, h *= 0.5) {
      const auto up = step_at(p.scenario_path, x + h);
      const auto down = step_at(p.scenario_path, x - h);
      if (up && down) derivative = (*up - *down) / (2 * h);
    }
    if (!derivative) {
      out.skipped.push_back(p.name());
      continue;
    }
    const double sd = *derivative * stderr_value;
    out.step_time_var_s2 += sd * sd;
    out.varied.push_back(p.name());
  }
  return out;
}

nlohmann::json intervals_json(const models::Scenario& s, const models::StepReport& r,
                              const StepUncertainty& step) {
  nlohmann::json j;
  const double st_half = kNormal95 * std::sqrt(step.step_time_var_s2);
  const double lo = std::max(0.0, r.step_time_s - st_half);
  const double hi = r.step_time_s + st_half;
  j["step_time_s"] = {lo, hi};
  // Throughput is samples per step over step time: the interval's ends map to each other.
  const double samples_per_step = r.throughput_samples_per_s * r.step_time_s;
  j["throughput_samples_per_s"] = {samples_per_step / hi,
                                   lo > 0 ? samples_per_step / lo : r.throughput_samples_per_s};
  nlohmann::json varied = step.varied;
  if (s.target) {
    const TargetResult t = *evaluate_target(s, r);
    double var = t.at_echo.steps * t.at_echo.steps * step.step_time_var_s2;
    if (const auto conv = time_to_target_interval(s, r)) {
      const double half = ((*conv)[1] - (*conv)[0]) / 2 / kNormal95;
      var += half * half;
      varied.push_back("target.steps_min");
      varied.push_back("target.batch_noise");
    }
    const double half = kNormal95 * std::sqrt(var);
    j["to_target.time_s"] = {t.at_echo.time_s - half, t.at_echo.time_s + half};
  } else {
    j["to_target.time_s"] = nullptr;
  }
  j["confidence"] = 0.95;
  j["method"] = "delta";
  j["varied"] = varied;
  j["skipped"] = step.skipped;
  return j;
}

void print_intervals_text(std::ostream& os, const nlohmann::json& intervals) {
  const auto show = [&os](const char* label, const nlohmann::json& v, bool duration) {
    if (v.is_null()) return;
    const double lo = v[0].get<double>();
    const double hi = v[1].get<double>();
    os << "  " << label << " 95% [" << (duration ? format_duration(lo) : format_number(lo, 4))
       << ", " << (duration ? format_duration(hi) : format_number(hi, 4)) << "]\n";
  };
  show("step time        ", intervals["step_time_s"], true);
  show("throughput /s    ", intervals["throughput_samples_per_s"], false);
  show("time to target   ", intervals["to_target.time_s"], true);
  std::string varied;
  for (const auto& v : intervals["varied"])
    varied += (varied.empty() ? "" : ", ") + v.get<std::string>();
  os << "  varied: " << (varied.empty() ? std::string("nothing with a covariance") : varied)
     << " (delta method)\n";
}

nlohmann::json run_intervals_json(const std::string& scenario_file,
                                  const std::vector<std::string>& sets,
                                  const sim::ProfileLibrary& profiles, const models::Scenario& s,
                                  const models::StepReport& r, const ResultProvenance* provenance) {
  std::optional<ResultProvenance> traced;
  if (provenance == nullptr) {
    sim::JsonSource source;
    nlohmann::json doc = resolved_scenario_doc(scenario_file, sets, profiles, source);
    traced.emplace(result_provenance(std::move(doc), std::move(source), profiles, s));
    provenance = &*traced;
  }
  return intervals_json(s, r, step_time_uncertainty(scenario_file, sets, profiles, *provenance));
}

}  // namespace trainsim::cli
