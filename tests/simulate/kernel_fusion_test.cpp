// Pointwise fusion (framework `fusion: pointwise`) folds an elementwise kernel into its producer:
// no launch of its own, but all of its work stays, also inside a loop body launched per step.
#include <catch2/catch.hpp>

#include <vector>

#include "models/kernel_plan.hpp"
#include "models/zoo/net_builder.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Launch;
using trainsim::models::LstmInput;
using trainsim::models::NetBuilder;
using trainsim::models::OpClass;

namespace {

double device_total_s(const std::vector<Launch>& ls) {
  double s = 0;
  for (const auto& l : ls)
    s += l.device_s * l.count;
  return s;
}

}  // namespace

TEST_CASE("a fused pointwise kernel in a per-step loop keeps every step's work") {
  const std::int64_t steps = 50;
  NetBuilder nb;
  const auto x = nb.input({steps, 512}, true);
  nb.begin("lstm", OpClass::recurrent, x.elements());
  nb.end(nb.lstm(x, 512, LstmInput::skip));
  const auto layer = nb.take_layers().at(0);
  const auto eager = trainsim::test::scenario({"framework=pytorch_eager", "precision=fp32"});
  const auto fused = trainsim::test::scenario({"framework=tensorflow_xla", "precision=fp32"});
  std::vector<Launch> unfused_launches, fused_launches;
  trainsim::models::layer_launches(eager, layer, trainsim::models::Pass::forward, 64,
                                   unfused_launches);
  trainsim::models::layer_launches(fused, layer, trainsim::models::Pass::forward, 64,
                                   fused_launches);
  // Eager: the recurrent GEMM and the gate kernel, each once per step.
  REQUIRE(unfused_launches.size() == 2);
  CHECK(unfused_launches[0].count == steps);
  CHECK(unfused_launches[1].count == steps);
  // Fused: the gate kernel rides on the GEMM; each step saves its launch but keeps a third of
  // its traffic (the extra operand read).
  REQUIRE(fused_launches.size() == 1);
  CHECK(fused_launches[0].count == steps);
  const auto& acc = eager.cluster.accelerator;
  const double launch_s = acc.kernel_launch_overhead_s;
  const double gates_body_s = unfused_launches[1].device_s - launch_s;
  const double gemm_s = unfused_launches[0].device_s;
  CHECK(gates_body_s > 0);
  const double expected_s = steps * gemm_s + steps * gates_body_s / 3;
  CHECK(device_total_s(fused_launches) == Approx(expected_s).epsilon(1e-6));
  CHECK(device_total_s(fused_launches) < device_total_s(unfused_launches));
}
