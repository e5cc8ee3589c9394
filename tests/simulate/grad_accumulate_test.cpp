// Each micro-batch of a step with several adds its weight gradients into the accumulated ones:
// one element-wise kernel per parameter tensor, reading both and writing the sum.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/kernel_plan.hpp"
#include "models/training_step.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Scenario;
using trainsim::models::simulate_training;
using trainsim::models::StepReport;
using trainsim::test::scenario;

TEST_CASE("gradient accumulation adds each micro-batch's gradients: one kernel per tensor") {
  // A small batch, so that the accumulation is a visible share of the step.
  const std::vector<std::string> base{"parallelism.data=1", "input.enabled=false", "precision=fp32",
                                      "batch_per_replica=8"};
  std::vector<std::string> two = base;
  two.push_back("parallelism.grad_accum=2");
  const Scenario s1 = scenario(base), s2 = scenario(two);
  const StepReport one = simulate_training(s1);
  const StepReport acc = simulate_training(s2);
  const int tensors = s1.model.param_tensors();
  // Two micro-batches launch twice one's forward and backward kernels plus the accumulation of
  // each, and the optimizer's kernels once; one micro-batch launches no accumulation.
  std::vector<trainsim::models::Launch> opt;
  trainsim::models::optimizer_launches(s1, static_cast<double>(s1.model.params()), tensors, opt);
  double opt_launches = 0;
  for (const auto& l : opt)
    opt_launches += l.count;
  CHECK(acc.kernels_per_step ==
        Approx(2 * (one.kernels_per_step - opt_launches) + 2 * tensors + opt_launches));
  // The step grows by the second micro-batch and both accumulations: 12 bytes per fp32
  // parameter each (read the new gradient and the sum, write the sum), at least their device
  // time, at most the time their launches take where the host paces them.
  const double device_s = 2 * trainsim::test::accumulate_s(s1, true);
  const double paced_s = 2 * trainsim::test::accumulate_s(s1);
  const double micro_s = one.step_time_s - one.breakdown.optimizer_s;
  INFO("accumulation " << device_s << ".." << paced_s << " s, one micro-batch " << micro_s << " s");
  REQUIRE(device_s > 0.02 * one.step_time_s);  // else the next checks could not tell
  CHECK(acc.step_time_s > one.step_time_s + micro_s + 0.9 * device_s);
  CHECK(acc.step_time_s < one.step_time_s + micro_s + 1.1 * paced_s);
}
