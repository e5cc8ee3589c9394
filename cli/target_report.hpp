#pragma once
// Steps, time and cost to a scenario's `target` (models/convergence.hpp) from a simulated step,
// and the 95% intervals of `simulate --uncertainty`. Shared by simulate, sweep and plan.

#include <array>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/convergence.hpp"
#include "models/scenario.hpp"
#include "models/training_step.hpp"
#include "sim/config/profile_library.hpp"

namespace trainsim::cli {

struct TargetResult {
  models::ToTarget at_echo;        // with the scenario's echo factor
  double time_s_no_echo = 0;       // the same target at echo factor 1 (step time x echo_speedup)
  double echo_speedup = 1;         // time to target at e = 1 / time to target at e
  std::optional<double> cost_usd;  // time x devices x price per GPU hour, when a price is given
};

// Nothing when the scenario names no target. `price_per_hour` prices the whole job.
std::optional<TargetResult> evaluate_target(const models::Scenario& s, const models::StepReport& r,
                                            std::optional<double> price_per_hour = {});

// {"steps", "time_s", "fresh_samples", "echo_speedup", "effective_batch"[, "cost"]}; every key
// null when `t` is empty (CSV rows keep one set of columns).
nlohmann::json to_target_json(const std::optional<TargetResult>& t, bool with_cost = false);
void print_to_target_text(std::ostream& os, const models::Scenario& s, const TargetResult& t);

// 95% interval of the time to target from the covariance of (S_min, B_noise) by the delta
// method (normal quantile 1.96); nothing when the target carries no covariance.
std::optional<std::array<double, 2>> time_to_target_interval(const models::Scenario& s,
                                                             const models::StepReport& r);

// --price-per-gpu-hour TEXT: USD per accelerator hour, above 0 and at most 1e6 (an H100 rents for
// a few USD per hour; the limit keeps every cost finite). UsageError naming the option otherwise.
double parse_price_per_gpu_hour(const std::string& text);

struct ResultProvenance;

// The step time's variance from the calibrated profile values behind it. `trainsim calibrate`
// writes each fitted value's standard error into its source comment ("... -> 0.004721 (stderr
// 0.0046)", hw_profiles/README.md); each such value is moved by +-h (h = its stderr, halved while
// the profile refuses the value, e.g. an efficiency above 1) in two more simulations, and the
// central difference times the stderr is its part of the step time's standard deviation. The
// calibrations are independent fits (one table each), so the parts add in quadrature. Sequential
// and seeded by nothing: the result is bit-identical on every run.
struct StepUncertainty {
  double step_time_var_s2 = 0;
  std::vector<std::string> varied;   // "kind/name:path" of the values moved
  std::vector<std::string> skipped;  // calibrated values without a usable stderr or step
};
StepUncertainty step_time_uncertainty(const std::string& scenario_file,
                                      const std::vector<std::string>& sets,
                                      const sim::ProfileLibrary& profiles,
                                      const ResultProvenance& provenance);

// `simulate --uncertainty`: {"step_time_s", "throughput_samples_per_s", "to_target.time_s":
// [low, high] at 95% (normal quantile), "varied": the parameters with an uncertainty behind them,
// "method": "delta"}. The time to target adds the convergence parameters' covariance to the step
// time's variance (independent sources).
nlohmann::json intervals_json(const models::Scenario& s, const models::StepReport& r,
                              const StepUncertainty& step);
void print_intervals_text(std::ostream& os, const nlohmann::json& intervals);

// intervals_json of one run, from its scenario file and overrides: the values behind the run
// (result_provenance), their step-time variance (step_time_uncertainty), then the intervals.
// `simulate --uncertainty` and every row of `sweep --uncertainty` come through here; `provenance`
// is traced from the file and overrides when not given.
nlohmann::json run_intervals_json(const std::string& scenario_file,
                                  const std::vector<std::string>& sets,
                                  const sim::ProfileLibrary& profiles, const models::Scenario& s,
                                  const models::StepReport& r,
                                  const ResultProvenance* provenance = nullptr);

}  // namespace trainsim::cli
