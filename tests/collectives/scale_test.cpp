// No cliff: the step prices its gradient allreduces flow-level at every rank count, so on
// DGX H100 nodes with an NDR fat tree the communication time of a bucket never decreases as the
// GPU count grows from 8 to 65,536 (the alpha-beta fallback that made 264 GPUs cheaper than 256
// is gone; alpha-beta only when a scenario asks for it).

#include <catch2/catch.hpp>

#include "cli/profiles_source.hpp"
#include "cli/scenario_source.hpp"
#include "models/collective_cost.hpp"
#include "models/training_step.hpp"

using namespace trainsim;

namespace {

models::Scenario at(int gpus, std::vector<std::string> extra = {}) {
  const auto profiles = cli::load_profile_library({});
  std::vector<std::string> sets = {"cluster=dgx-h100-x4",
                                   "cluster.nodes=" + std::to_string(std::max(1, gpus / 8)),
                                   "parallelism.data=" + std::to_string(gpus)};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return cli::load_scenario_source("", sets, profiles);
}

}  // namespace

TEST_CASE("gradient allreduce time never decreases from 8 to 65,536 GPUs, flow-level throughout") {
  const double bucket = 25e6;  // PyTorch DDP's default bucket
  double last = 0;
  for (int gpus : {8, 16, 64, 256, 264, 1024, 4096, 16384, 65536}) {
    const models::Scenario s = at(gpus);
    models::CollectiveCoster coster(s, gpus);
    const double t = coster.dense_allreduce_s(bucket);
    INFO(gpus << " GPUs: " << t * 1e3 << " ms (" << coster.model_name() << ")");
    CHECK(coster.model_name().rfind("flow-level", 0) == 0);
    CHECK(t >= last);
    last = t;
  }
}

TEST_CASE("the step report says which model priced its collectives") {
  const models::StepReport big = models::simulate_training(at(4096, {"input.enabled=false"}));
  CHECK(big.collective_model == "flow-level (phase-aggregated)");
  const models::StepReport small = models::simulate_training(at(16, {"input.enabled=false"}));
  CHECK(small.collective_model == "flow-level");
  const models::StepReport ab = models::simulate_training(
      at(4096, {"input.enabled=false", "communication.model=alpha_beta"}));
  CHECK(ab.collective_model == "alpha-beta (communication.model)");
  CHECK(ab.comm_time_s > 0);
}

TEST_CASE("alpha-beta uses the route's latency, not the slowest link's") {
  const models::Scenario s = at(16);
  // Crossing nodes: acc -> NVSwitch -> acc -> NIC (PCIe) -> leaf (NDR) -> NIC -> acc (PXN).
  const models::PathCost p = models::ring_path(s.cluster, 16);
  const double nvlink = 0.3e-6, pcie = 1e-6, ib = 1e-6;
  CHECK(p.alpha_s == Approx(2 * nvlink + 2 * pcie + 2 * ib).epsilon(1e-9));
}
