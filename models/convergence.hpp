#pragma once
// Steps and examples to a target quality as a function of the global batch, and what an echoed
// sample is worth (pure functions; the fitting lives in fit/, the reporting in cli/).
//
// Large-batch model: McCandlish, Kaplan, Amodei et al. 2018, "An Empirical Model of Large-Batch
// Training", arXiv:1812.06162, Sec. 2 (the steps/examples trade-off and the critical batch):
//   S(B) = S_min (1 + B_noise / B)      steps to the target at global batch B
//   E(B) = E_min (1 + B / B_noise)      examples to the target, E_min = S_min B_noise
// i.e. the paper's (S/S_min - 1)(E/E_min - 1) = 1 with B_crit = E_min / S_min = B_noise. B_noise
// is the batch at which training needs twice the minimum steps and twice the minimum examples.
// (The equation numbers could not be checked against the paper's text here; cite by section.)
//
// Data echoing (Choi, Passos, Shallue, Dahl 2019, "Faster Neural Network Training with Data
// Echoing", arXiv:1907.05550): each fresh sample is used e times. In the model above the batch
// enters only through the gradient noise, whose variance falls as 1/(independent samples). A step
// of B samples of which B/e are fresh and B (e-1)/e are repeats has the noise of a batch of
//   B_eff = B (1 + (e - 1) w) / e       fresh-sample equivalents per step,
// where w in [0, 1] is how much a repeated sample lowers the noise relative to a fresh one:
// w = 0 for an identical copy (after augmentation: its gradient noise repeats, so e steps on the
// same samples add the noise of one batch coherently), w = 1 for a sample as good as new. Steps to
// target are S(B_eff); fresh samples read are S(B_eff) B / e. The model predicts that echoing
// costs no extra steps when B >> B_noise (the step count is already at S_min) and most at small
// batches, and that echoing before augmentation (copies re-augmented, w > 0) needs fewer steps
// than after it. Fresh samples read, S_min (B/e + B_noise / (1 + (e-1) w)), fall with e for any
// fixed w: with one w per insertion point the model has no best echo factor beyond which more
// echoing reads more fresh samples. Choi et al. compare batch sizes and insertion points in
// figures that are not transcribed here, so these predictions are not yet checked against their
// measurements.

#include <optional>
#include <span>
#include <string>

namespace trainsim::models {

// One workload's convergence parameters, optionally with their covariance (from a fit).
struct ConvergenceParams {
  double steps_min = 0;    // S_min: steps to the target at an infinite batch
  double batch_noise = 0;  // B_noise: samples
  // Covariance of (S_min, B_noise): var(S_min), var(B_noise), cov(S_min, B_noise). Absent when
  // the parameters were given without one.
  struct Covariance {
    double steps_var = 0;
    double noise_var = 0;
    double cross = 0;
  };
  std::optional<Covariance> covariance;
};

// S(B) and E(B) of eqs. 2.11-2.12 above; batch > 0.
double steps_to_target(const ConvergenceParams& p, double batch);
double examples_to_target(const ConvergenceParams& p, double batch);

// The fresh-sample equivalents per step of a batch whose samples are each used `echo_factor`
// times, a repeat being worth `repeat_weight` of a fresh sample (see the header comment).
double effective_batch(double batch, int echo_factor, double repeat_weight);

// The worth of a repeated sample relative to a fresh one by insertion point.
// After augmentation an echoed copy is the identical tensor: 0 (derived above, not fitted).
inline constexpr double kRepeatWeightAfterAugment = 0.0;
// estimate: before augmentation each copy gets a fresh random crop/flip, so part of its gradient
// noise is new: somewhere between an identical copy (0) and a fresh sample (1). Choi et al. 2019
// (arXiv:1907.05550) show fresh examples to target per echo factor and insertion point in bar
// charts; no table or text statement of those counts was found for `trainsim fit --model echo`,
// so half-new is a stated estimate, not a fit (README, Known gaps). A scenario can give its own
// `target.repeat_weight`.
inline constexpr double kRepeatWeightBeforeAugment = 0.5;

// Everything `to_target` reports for one configuration.
struct ToTarget {
  double effective_batch = 0;  // fresh-sample equivalents per step
  double steps = 0;
  double fresh_samples = 0;  // samples read from the input pipeline
  double time_s = 0;         // steps x step time
};
// `step_time_s`: the simulated step at `batch` with this echo factor.
ToTarget to_target(const ConvergenceParams& p, double batch, int echo_factor, double repeat_weight,
                   double step_time_s);

// A shipped workload: the fitted parameters of a published steps-to-target table.
struct ConvergenceWorkload {
  std::string name;
  std::string target;  // the metric and its value, e.g. "top-1 error 25% (validation)"
  std::string source;  // the table it was fitted on (tests/reference_data/..., paper, figure)
  std::optional<ConvergenceParams> params;  // absent: no fit shipped yet (see `missing`)
  std::string missing;                      // why there is no fit yet
};
std::span<const ConvergenceWorkload> convergence_workloads();
const ConvergenceWorkload* find_convergence_workload(const std::string& name);

}  // namespace trainsim::models
