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

// The workloads the issue names. Their measured steps-to-target tables are Shallue et al. 2018,
// "Measuring the Effects of Data Parallelism on Neural Network Training" (arXiv:1811.03600,
// JMLR 20(112)), Fig. 1, raw data https://storage.googleapis.com/batch_science_data/
// batch_science_data.tar.bz2 (google-research/google-research batch_science/README.md), and Choi
// et al. 2019 for ResNet-32/CIFAR-10. Neither the archive nor the figures' points could be read
// where this was built, and no parameter is shipped without its table: `params` stays empty and
// `missing` says what to do (trainsim fit --model steps-to-target on the table, then fill in
// S_min, B_noise and their covariance here).
const std::string kMissing =
    "no fitted parameters are shipped yet: the published steps-to-target table is not in "
    "tests/reference_data (fit it with `trainsim fit --model steps-to-target`), or give "
    "target.steps_min and target.batch_noise";

const std::array<ConvergenceWorkload, 3>& workloads() {
  static const std::array<ConvergenceWorkload, 3> w{{
      {"resnet50_imagenet", "top-1 validation error 25%",
       "Shallue et al. 2018, arXiv:1811.03600, Fig. 1 (ResNet-50 on ImageNet, Nesterov momentum)",
       std::nullopt, kMissing},
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
