#include "models/convergence.hpp"

#include <array>

namespace trainsim::models {

double steps_to_target(const ConvergenceParams& p, double batch) {
  return p.steps_min * (1.0 + p.batch_noise / batch);
}

double examples_to_target(const ConvergenceParams& p, double batch) {
  return p.steps_min * p.batch_noise * (1.0 + batch / p.batch_noise);
}

double effective_batch(double batch, int echo_factor, double repeat_weight) {
  const double e = static_cast<double>(echo_factor);
  return batch * (1.0 + (e - 1.0) * repeat_weight) / e;
}

ToTarget to_target(const ConvergenceParams& p, double batch, int echo_factor, double repeat_weight,
                   double step_time_s) {
  ToTarget t;
  t.effective_batch = effective_batch(batch, echo_factor, repeat_weight);
  t.steps = steps_to_target(p, t.effective_batch);
  t.fresh_samples = t.steps * batch / static_cast<double>(echo_factor);
  t.time_s = t.steps * step_time_s;
  return t;
}

namespace {

// Shipped workloads. A fit's parameters come from `trainsim fit --model steps-to-target --split
// halves` on a table in tests/reference_data (calibration half; the validation half is held out,
// tests/target pins both errors), with the covariance of (S_min, B_noise).
//
// Two named workloads have no published table to fit: Shallue et al. 2018, "Measuring the Effects
// of Data Parallelism on Neural Network Training" (arXiv:1811.03600) give Transformer-on-LM1B
// steps to result per batch size only as a plot (Fig. 1; google-research/google-research
// batch_science/reproduce_paper_plots.ipynb draws it from the raw per-trial learning curves,
// https://storage.googleapis.com/batch_science_data/batch_science_data.tar.bz2, 802 MB, with
// batch_science/measurement_utils.py compute_steps_to_result), and Choi et al. 2019 (arXiv:
// 1907.05550) show ResNet-32-on-CIFAR-10 results in bar charts; no table of either was found.
// Values read off a figure are not shipped: `params` stays empty and `missing` says what to do
// (README, Known gaps).
const std::string kMissing =
    "no fitted parameters are shipped yet: the published steps-to-target table is not in "
    "tests/reference_data (fit it with `trainsim fit --model steps-to-target`), or give "
    "target.steps_min and target.batch_noise";

ConvergenceParams fitted(double steps_min, double batch_noise, double steps_var, double noise_var,
                         double cross) {
  return {steps_min, batch_noise, ConvergenceParams::Covariance{steps_var, noise_var, cross}};
}

const std::array<ConvergenceWorkload, 4>& workloads() {
  static const std::array<ConvergenceWorkload, 4> w{{
      // calibrated on mlperf_rcp_resnet50_steps_to_target (calibration half, 5 of 10 batch sizes
      // 1632-67840): calibration MAPE 3.26%, validation 3.80%. MLPerf Training reference
      // convergence points, mlcommons/logging@0a0a659 rcp_checker/training_4.0.0/rcps_resnet.json.
      {"resnet50_imagenet", "top-1 validation accuracy 75.9% (MLPerf; ResNet-50 v1.5, LARS)",
       "tests/reference_data/mlperf_rcp_resnet50_steps_to_target.csv (MLPerf Training RCPs)",
       fitted(919.4665579209258, 49429.093936093406, 4020.8558246094663, 20383310.696278006,
              -274028.445456991),
       ""},
      // calibrated on mlperf_rcp_bert_steps_to_target (calibration half, 7 of 13 batch sizes
      // 256-16384): calibration MAPE 5.17%, validation 6.57%. MLPerf Training reference
      // convergence points, mlcommons/logging@17b4ee5 rcp_checker/training_5.0.0/rcps_bert.json.
      {"bert_large_wikipedia", "masked-LM accuracy 0.720 (MLPerf; BERT-large, LAMB)",
       "tests/reference_data/mlperf_rcp_bert_steps_to_target.csv (MLPerf Training RCPs)",
       fitted(177.71571098720182, 13682.6007137472, 338.5881265948384, 3770668.7652420574,
              -34616.95620105715),
       ""},
      {"transformer_lm1b", "validation cross entropy 3.9",
       "Shallue et al. 2018, arXiv:1811.03600, Fig. 1 (Transformer on LM1B, Nesterov momentum)",
       std::nullopt, kMissing},
      {"resnet32_cifar10", "validation accuracy 91%",
       "Choi et al. 2019, arXiv:1907.05550 (ResNet-32 on CIFAR-10, baseline without echoing)",
       std::nullopt, kMissing},
  }};
  return w;
}

}  // namespace

std::span<const ConvergenceWorkload> convergence_workloads() {
  return workloads();
}

const ConvergenceWorkload* find_convergence_workload(const std::string& name) {
  for (const ConvergenceWorkload& w : workloads()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

}  // namespace trainsim::models
