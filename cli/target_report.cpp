#include "cli/target_report.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "cli/units_format.hpp"

namespace trainsim::cli {

std::optional<TargetResult> evaluate_target(const models::Scenario& s, const models::StepReport& r,
                                            std::optional<double> price_per_hour) {
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
  if (price_per_hour) out.cost = *price_per_hour * out.at_echo.time_s / 3600.0;
  return out;
}

nlohmann::json to_target_json(const std::optional<TargetResult>& t, bool with_cost) {
  nlohmann::json j;
  j["steps"] = t ? nlohmann::json(t->at_echo.steps) : nlohmann::json();
  j["time_s"] = t ? nlohmann::json(t->at_echo.time_s) : nlohmann::json();
  j["fresh_samples"] = t ? nlohmann::json(t->at_echo.fresh_samples) : nlohmann::json();
  j["echo_speedup"] = t ? nlohmann::json(t->echo_speedup) : nlohmann::json();
  j["effective_batch"] = t ? nlohmann::json(t->at_echo.effective_batch) : nlohmann::json();
  if (with_cost) j["cost"] = t && t->cost ? nlohmann::json(*t->cost) : nlohmann::json();
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
     << " fresh samples; echo speedup to target " << format_number(t.echo_speedup, 3) << "x\n";
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
  // paper: the two-sided 95% quantile of the standard normal distribution.
  const double half = 1.959963984540054 * std::sqrt(std::max(0.0, var));
  return std::array<double, 2>{t - half, t + half};
}

nlohmann::json intervals_json(const models::Scenario& s, const models::StepReport& r) {
  nlohmann::json j;
  j["step_time_s"] = {r.step_time_s, r.step_time_s};
  j["throughput_samples_per_s"] = {r.throughput_samples_per_s, r.throughput_samples_per_s};
  nlohmann::json varied = nlohmann::json::array();
  if (const auto t = time_to_target_interval(s, r)) {
    j["to_target.time_s"] = {(*t)[0], (*t)[1]};
    varied.push_back("target.steps_min");
    varied.push_back("target.batch_noise");
  } else if (s.target) {
    const double t0 = evaluate_target(s, r)->at_echo.time_s;
    j["to_target.time_s"] = {t0, t0};
  } else {
    j["to_target.time_s"] = nullptr;
  }
  j["confidence"] = 0.95;
  j["method"] = "delta";
  j["varied"] = varied;
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

}  // namespace trainsim::cli
