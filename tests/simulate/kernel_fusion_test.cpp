// Pointwise fusion (framework `fusion: pointwise`) folds an elementwise kernel into its
// memory-bound producer: no launch of its own, but all of its work stays, also inside a loop body
// launched per step. Library GEMMs and convolutions take no pointwise ops.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "models/kernel_plan.hpp"
#include "models/zoo/net_builder.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::KernelSpec;
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

// The forward launches of `layer` for `batch` samples under `framework`, in fp32.
std::vector<Launch> forward_launches(const std::string& framework,
                                     const trainsim::models::Layer& layer, double batch) {
  const auto s = trainsim::test::scenario({"framework=" + framework, "precision=fp32"});
  std::vector<Launch> out;
  trainsim::models::layer_launches(s, layer, trainsim::models::Pass::forward, batch, out);
  return out;
}

// A hand-made layer: `kernels` as its forward pass.
trainsim::models::Layer layer_of(std::vector<KernelSpec> kernels) {
  trainsim::models::Layer l;
  l.name = "hand-made";
  l.fwd_kernels = std::move(kernels);
  return l;
}

KernelSpec memory_kernel(const char* what, trainsim::sim::KernelClass cls, double elements,
                         int repeat) {
  KernelSpec k;
  k.what = what;
  k.cls = cls;
  k.act_elements = elements;
  k.repeat = repeat;
  return k;
}

}  // namespace

TEST_CASE("a fused pointwise kernel in a per-step loop keeps every step's work") {
  using trainsim::sim::KernelClass;
  const int steps = 50;
  // A per-step normalisation (the producer) and a per-step pointwise op after it.
  const auto layer =
      layer_of({memory_kernel("norm", KernelClass::normalization, 2 * 512 * 64, steps),
                memory_kernel("scale", KernelClass::elementwise, 2 * 512 * 64, steps)});
  const auto unfused_launches = forward_launches("pytorch_eager", layer, 1);
  const auto fused_launches = forward_launches("tensorflow_xla", layer, 1);
  // Eager: both kernels, each once per step.
  REQUIRE(unfused_launches.size() == 2);
  CHECK(unfused_launches[0].count == steps);
  CHECK(unfused_launches[1].count == steps);
  // Fused: the pointwise op rides on the normalisation; each step saves its launch but keeps a
  // third of its traffic (the extra operand read).
  REQUIRE(fused_launches.size() == 1);
  CHECK(fused_launches[0].count == steps);
  const double launch_s = trainsim::test::scenario({"framework=pytorch_eager"})
                              .cluster.accelerator.kernel_launch_overhead_s;
  const double pointwise_body_s = unfused_launches[1].device_s - launch_s;
  const double norm_s = unfused_launches[0].device_s;
  CHECK(pointwise_body_s > 0);
  const double expected_s = steps * norm_s + steps * pointwise_body_s / 3;
  CHECK(device_total_s(fused_launches) == Approx(expected_s).epsilon(1e-6));
  CHECK(device_total_s(fused_launches) < device_total_s(unfused_launches));
}

TEST_CASE(
    "pointwise fusion leaves library GEMMs whole: the first pointwise op after one launches") {
  // An LSTM's per-step recurrent GEMM and gate kernel: XLA runs the GEMM as a cuBLAS call, so
  // the gate kernel stays a launch of its own under fusion too.
  const std::int64_t steps = 50;
  NetBuilder nb;
  const auto x = nb.input({steps, 512}, true);
  nb.begin("lstm", OpClass::recurrent, x.elements());
  nb.end(nb.lstm(x, 512, LstmInput::skip));
  const auto lstm = nb.take_layers().at(0);
  const auto unfused_launches = forward_launches("pytorch_eager", lstm, 64);
  const auto fused_launches = forward_launches("tensorflow_xla", lstm, 64);
  // Eagerly, the GEMM's first launch also carries the setup of cuDNN's call (a launch of its
  // own); XLA builds its calls with the step.
  REQUIRE(unfused_launches.size() == 3);
  REQUIRE(fused_launches.size() == 2);
  CHECK(fused_launches[1].device_s == Approx(unfused_launches.back().device_s));
  // A second pointwise op after the gate kernel joins it instead.
  using trainsim::sim::KernelClass;
  auto longer = lstm;
  longer.fwd_kernels.push_back(memory_kernel("scale", KernelClass::elementwise, 512, 1));
  CHECK(forward_launches("tensorflow_xla", longer, 64).size() == 2);
}
