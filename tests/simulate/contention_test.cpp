// Contention inside a training step (issue 14 item 4): collectives' kernels take SMs and DRAM
// bandwidth from the compute they overlap; the step's breakdown still adds up; the switch
// `communication.contention` turns it off.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "models/kernel_plan.hpp"
#include "models/training_step.hpp"
#include "sim/core/engine.hpp"
#include "sim/hw/device_stream.hpp"
#include "sim/hw/kernel.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Scenario;
using trainsim::models::simulate_training;
using trainsim::models::StepReport;
using trainsim::sim::Time;

using trainsim::test::breakdown_sum;
using trainsim::test::example;
using trainsim::test::scenario;

namespace {

// An MLP on the two K80 dies without P2P whose first layer's backward (a large GEMM) runs while
// the bucket of the layers after it is reduced: the 268 MB allreduce staged through host memory
// lasts longer than that backward, so all of it overlaps.
std::vector<std::string> mlp_sets(bool contention) {
  return {"cluster=two-gpu-no-p2p",
          "model={\"name\": \"mnist_mlp\", \"hidden1\": 8192, \"hidden2\": 8192, "
          "\"resolution\": 90, \"num_classes\": 10}",
          "batch_per_replica=512",
          "input.enabled=false",
          "precision=fp32",
          "parallelism.data=2",
          "communication.bucket_size=100 MB",
          "communication.overlap=true",
          std::string("communication.contention=") + (contention ? "true" : "false")};
}

}  // namespace

TEST_CASE("a shared interval stretches the overlapping part of an item by its slowdown") {
  using trainsim::sim::DeviceStream;
  for (const bool memory_bound : {false, true}) {
    trainsim::sim::Engine engine;
    DeviceStream stream(engine, 0);
    // From 5 us to 100 us another kernel halves the SMs (compute slowdown 2) or takes half of
    // DRAM (memory share 0.5, slowdown 2): 10 us of work starting at 0 runs 5 us at full speed
    // and its other 5 us at half speed.
    stream.share(Time::us(5), Time::us(100), 2.0, 0.5);
    double end_s = 0;
    stream.enqueue(
        Time::us(10), 1, {}, {}, [&] { end_s = engine.now().seconds(); }, nullptr, memory_bound);
    engine.run();
    CHECK(end_s == Approx(15e-6).epsilon(1e-9));
    CHECK(stream.interference() == Approx(5e-6).epsilon(1e-9));
    CHECK(stream.totals()[1] == Approx(15e-6).epsilon(1e-9));
  }
  // An interval that ends inside the item: slowed until it ends, full speed after.
  trainsim::sim::Engine engine;
  DeviceStream stream(engine, 0);
  stream.share(Time::zero(), Time::us(4), 4.0 / 3.0, 0.0);
  stream.enqueue(Time::us(10), 1, {}, {}, {});
  engine.run();
  // 4 us at 3/4 speed does 3 us of work; the other 7 us at full speed: 11 us.
  CHECK(engine.now().seconds() == Approx(11e-6).epsilon(1e-9));
  // A memory-bound item is not slowed by a share that takes no DRAM bandwidth.
  trainsim::sim::Engine engine2;
  DeviceStream stream2(engine2, 0);
  stream2.share(Time::zero(), Time::us(100), 2.0, 0.0);
  stream2.enqueue(Time::us(10), 1, {}, {}, {}, nullptr, true);
  engine2.run();
  CHECK(engine2.now() == Time::us(10));
  CHECK(stream2.interference() == 0);
}

TEST_CASE("an overlapping collective slows compute-bound backward by SMs / (SMs - channels)") {
  const Scenario on = scenario(mlp_sets(true));
  const StepReport with = simulate_training(on);
  const StepReport without = simulate_training(scenario(mlp_sets(false)));
  // The overlapped backward: the first layer's kernels (fc1), launched after the bucket of the
  // later layers went to the communication stream.
  const auto& layers = on.model.layers;
  const auto fc1 =
      std::find_if(layers.begin(), layers.end(), [](const auto& l) { return l.name == "fc1"; });
  REQUIRE(fc1 != layers.end());
  std::vector<trainsim::models::Launch> bwd;
  trainsim::models::layer_launches(on, *fc1, trainsim::models::Pass::backward, on.batch_per_replica,
                                   bwd);
  double compute_bound_s = 0;
  double all_s = 0;
  for (const auto& l : bwd) {
    const double s = l.device_s * l.count;
    all_s += s;
    if (trainsim::sim::is_compute_class(l.cls)) compute_bound_s += s;
  }
  INFO("fc1 backward " << all_s << " s, compute-bound " << compute_bound_s << " s; comm "
                       << with.comm_time_s << " s; interference " << with.comm_interference_s);
  // The memory-bound part (ReLU and bias gradients) is under 2% of it, and the staged allreduce
  // takes under 3% of the K80's DRAM bandwidth, so the whole backward stretches by the SM ratio.
  REQUIRE(compute_bound_s / all_s > 0.98);
  REQUIRE(with.comm_time_s > 1.2 * all_s);
  // No collective library on this cluster: one block, on one of the GK210's 13 SMX.
  const int sms = on.cluster.accelerator.compute_units;
  REQUIRE(sms == 13);
  const double slowdown = static_cast<double>(sms) / (sms - 1);
  CHECK((all_s + with.comm_interference_s) / all_s == Approx(slowdown).epsilon(0.01));
  // The stretch is compute, and it is all the difference contention makes to compute.
  CHECK(without.comm_interference_s == 0);
  CHECK(with.breakdown.compute_s - without.breakdown.compute_s ==
        Approx(with.comm_interference_s).epsilon(1e-6));
  // The allreduce outlasts backward, so the step ends with it either way: the stretch only moves
  // time from exposed communication to compute.
  CHECK(with.comm_time_s == Approx(without.comm_time_s).epsilon(1e-9));
  CHECK(with.step_time_s == Approx(without.step_time_s).epsilon(1e-9));
  CHECK(with.breakdown.exposed_comm_s ==
        Approx(without.breakdown.exposed_comm_s - with.comm_interference_s).epsilon(1e-6));
  CHECK(breakdown_sum(with) == Approx(with.step_time_s).epsilon(1e-6));
  CHECK(breakdown_sum(without) == Approx(without.step_time_s).epsilon(1e-6));
}

TEST_CASE("contention keeps the step deterministic and its breakdown whole") {
  for (const char* file : {"two_gpu_no_p2p.json", "resnet50_dgx_a100.json"}) {
    const Scenario s = scenario({}, example(file));
    const StepReport a = simulate_training(s);
    const StepReport b = simulate_training(s);
    INFO(file << ": step " << a.step_time_s << " s, interference " << a.comm_interference_s
              << " s");
    CHECK(a.step_time_s == b.step_time_s);  // bit-identical
    CHECK(a.comm_interference_s == b.comm_interference_s);
    CHECK(a.breakdown.compute_s == b.breakdown.compute_s);
    CHECK(a.breakdown.exposed_comm_s == b.breakdown.exposed_comm_s);
    CHECK(a.comm_time_s == b.comm_time_s);
    CHECK(a.comm_interference_s > 0);
    CHECK(a.comm_interference_s < a.breakdown.compute_s);
    CHECK(breakdown_sum(a) == Approx(a.step_time_s).epsilon(1e-6));
  }
}

TEST_CASE("without P2P, host-to-device copies and a staged allreduce slow each other down") {
  // The two K80 dies without P2P, with an input pipeline whose fp32 batches (77 MB, 4.9 ms over
  // PCIe alone) become ready while the gradient allreduce (32.9 ms alone, every message staged
  // through host memory over the same host links) runs: the input workers' decode is set to a
  // share of the step (two replicas share the host's 4 workers) that puts the copy inside the
  // allreduce: the share, swept over the step in 2% steps, where the copy slows most (the
  // phase moves with the step's kernel times, so it is searched, not fixed).
  const std::string file = example("two_gpu_no_p2p.json");
  const double step = simulate_training(scenario({}, file)).step_time_s;
  Scenario on =
      scenario({"input.enabled=true", "input.read_per_sample=0", "input.augment_per_sample=0",
                "input.batch_per_sample=0", "input.storage_bytes_per_sample=0", "input.workers=4",
                "input.prefetch_batches=1", "input.input_dtype=fp32"},
               file);
  StepReport a;
  StepReport b;
  double worst_slowdown = 0;
  double worst_share = 0;
  for (int percent = 2; percent < 100; percent += 2) {
    on.input.decode_s_per_sample = percent / 100.0 * step * 4 / 128;
    Scenario off = on;
    off.comm.contention = false;
    StepReport with = simulate_training(on);
    StepReport without = simulate_training(off);
    const double slowdown = with.h2d_copy_s / without.h2d_copy_s;
    if (slowdown > worst_slowdown) {
      worst_slowdown = slowdown;
      worst_share = percent / 100.0;
      a = std::move(with);
      b = std::move(without);
    }
  }
  INFO("contention: step " << a.step_time_s << " h2d " << a.h2d_copy_s << " comm " << a.comm_time_s
                           << "; off: step " << b.step_time_s << " h2d " << b.h2d_copy_s << " comm "
                           << b.comm_time_s);
  CHECK(a.collective_model == "flow-level");
  CHECK(b.collective_model == "flow-level");
  CHECK(a.shared_network);
  CHECK_FALSE(b.shared_network);
  // Alone: the copy is latency + bytes / PCIe bandwidth (to the picosecond), the allreduce its
  // standalone run.
  CHECK(b.h2d_copy_s == Approx(b.h2d_batch_s).epsilon(1e-9));
  CHECK(a.h2d_copy_s > 1.1 * b.h2d_copy_s);
  CHECK(a.comm_time_s > 1.01 * b.comm_time_s);
  CHECK(a.step_time_s > b.step_time_s);
  CHECK(breakdown_sum(a) == Approx(a.step_time_s).epsilon(1e-6));
  CHECK(breakdown_sum(b) == Approx(b.step_time_s).epsilon(1e-6));
  // The same run again: bit-identical.
  on.input.decode_s_per_sample = worst_share * step * 4 / 128;
  const StepReport again = simulate_training(on);
  CHECK(again.step_time_s == a.step_time_s);
  CHECK(again.h2d_copy_s == a.h2d_copy_s);
  CHECK(again.comm_time_s == a.comm_time_s);
}
