#pragma once
// Steps, time and cost to a scenario's `target` (models/convergence.hpp) from a simulated step,
// and the 95% intervals of `simulate --uncertainty`. Shared by simulate, sweep and plan.

#include <array>
#include <iosfwd>
#include <optional>

#include <nlohmann/json.hpp>

#include "models/convergence.hpp"
#include "models/scenario.hpp"
#include "models/training_step.hpp"

namespace trainsim::cli {

struct TargetResult {
  models::ToTarget at_echo;    // with the scenario's echo factor
  double time_s_no_echo = 0;   // the same target at echo factor 1 (step time x echo_speedup)
  double echo_speedup = 1;     // time to target at e = 1 / time to target at e
  std::optional<double> cost;  // time x price per hour, when a price is known
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

// `simulate --uncertainty`: {"step_time_s", "throughput_samples_per_s", "to_target.time_s":
// [low, high] at 95%, "varied": the parameters with a covariance behind them}. The step's own
// profile values carry their calibration stderr only in comments so far, so step time and
// throughput are point intervals (README, Known gaps); the time to target carries the
// convergence parameters' covariance.
nlohmann::json intervals_json(const models::Scenario& s, const models::StepReport& r);
void print_intervals_text(std::ostream& os, const nlohmann::json& intervals);

}  // namespace trainsim::cli
