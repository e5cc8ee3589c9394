// The network a training step's traffic shares (models/parallel/step_network.hpp): a transfer
// alone takes its standalone cost; transfers meeting on a device port share it max-min fairly
// (closed forms); in a step, pipeline sends, gradient collectives, ZeRO gathers and input copies
// slow each other down exactly where they overlap, and the switch turns it off.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/parallel/step_network.hpp"
#include "models/training_step.hpp"
#include "sim/core/engine.hpp"
#include "sim/net/transfer_stream.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Port;
using trainsim::models::Scenario;
using trainsim::models::simulate_training;
using trainsim::models::StepNetwork;
using trainsim::models::StepReport;
using trainsim::sim::Engine;
using trainsim::sim::Time;
using trainsim::sim::Transfer;
using trainsim::sim::TransferStream;
namespace col = trainsim::sim::collectives;

using trainsim::test::scenario;

namespace {

// Two one-GPU machines on 1 Gbps Ethernet (the gTop-k testbed's nodes): every transfer between
// devices crosses a NIC port of 125 MB/s.
Scenario ethernet_pair() {
  return scenario({"cluster=gtopk-32x-p102-1gbe", "cluster.nodes=2", "model=resnet50",
                   "batch_per_replica=16", "input.enabled=false", "parallelism.data=2",
                   "precision=fp32"});
}

double finish_s(Engine& e, TransferStream& stream, const Transfer& t) {
  double at = -1;
  stream.submit(t, "", "", [&] { at = e.now().seconds(); });
  e.run();
  return at;
}

}  // namespace

TEST_CASE("a transfer alone takes its standalone time; ports follow the cluster") {
  const Scenario s = ethernet_pair();
  Engine e;
  StepNetwork net(e, s, 2);
  const double nic = net.capacity_bytes_per_s(Port::nic);
  CHECK(nic == Approx(125e6).epsilon(1e-12));  // 1 Gbps, one NIC per one-GPU node
  CHECK(net.group_port(2, 1) == Port::nic);    // one accelerator per node: across nodes
  CHECK(net.send_port(1) == Port::nic);
  TransferStream a(e, net.network());
  // An allreduce of 50 MB among 2 ranks moves 50 MB each way (bus factor 2(n-1)/n = 1) and
  // takes 1 s alone: 0.6 s of it is latency and kernels, 0.4 s the bytes at the port's rate.
  const Transfer c = net.collective(0, Port::nic, col::Op::allreduce, 2, 50e6, 1.0);
  CHECK(c.latency_s == Approx(0.6).epsilon(1e-12));
  CHECK(finish_s(e, a, c) == Approx(1.0).epsilon(1e-9));
  // One faster than its bus bytes could cross the port (a multi-node ring whose NVLink legs
  // carry most of them) keeps the port busy for its whole standalone time, and takes just that.
  const Transfer fast = net.collective(0, Port::nic, col::Op::allreduce, 2, 50e6, 0.1);
  CHECK(fast.latency_s == 0);
  CHECK(fast.bytes == Approx(nic * 0.1).epsilon(1e-12));
  TransferStream f(e, net.network());
  const double t0 = e.now().seconds();
  CHECK(finish_s(e, f, fast) - t0 == Approx(0.1).epsilon(1e-9));
  Engine e2;
  StepNetwork net2(e2, s, 2);
  TransferStream b(e2, net2.network());
  const Transfer t = net2.send(0, 1, Port::nic, 25e6, 1e-3, 100e6);
  CHECK(t.standalone_s == Approx(1e-3 + 0.25).epsilon(1e-12));
  CHECK(finish_s(e2, b, t) == Approx(t.standalone_s).epsilon(1e-9));
}

TEST_CASE("a ring moves 2(n-1)/n of a bucket each way, a parameter-server worker the bucket") {
  const Scenario s = ethernet_pair();
  Engine e;
  StepNetwork net(e, s, 2);
  // 8 ranks: a ring all-reduce's bus bytes are 2 x 7/8 of the 50 MB bucket each way; a
  // parameter-server worker pushes 50 MB and pulls 50 MB whatever the worker count.
  const Transfer ring = net.collective(0, Port::nic, col::Op::allreduce, 8, 50e6, 2.0);
  CHECK(ring.bytes == Approx(87.5e6).epsilon(1e-12));
  CHECK(ring.latency_s == Approx(2.0 - 87.5e6 / 125e6).epsilon(1e-12));
  const Transfer ps = net.exchange(0, Port::nic, 50e6, 2.0);
  CHECK(ps.bytes == Approx(50e6).epsilon(1e-12));
  CHECK(ps.latency_s == Approx(2.0 - 0.4).epsilon(1e-12));
}

TEST_CASE("a collective and a send on one port share it max-min fairly (closed form)") {
  const Scenario s = ethernet_pair();
  for (const bool inbound : {false, true}) {
    Engine e;
    StepNetwork net(e, s, 2);
    const double c_bps = net.capacity_bytes_per_s(Port::nic);
    TransferStream coll(e, net.network());
    TransferStream send(e, net.network());
    // The collective has no latency part (its standalone time is its bytes at the port rate);
    // the send leaves device 0 (outbound) or enters it (inbound): either way it meets the
    // collective, which loads its device's port in both directions.
    const double bus = 50e6;
    const Transfer c = net.collective(0, Port::nic, col::Op::allreduce, 2, bus, bus / c_bps);
    const double send_bytes = 20e6;
    const Transfer t = inbound ? net.send(1, 0, Port::nic, send_bytes, 0.0, c_bps)
                               : net.send(0, 1, Port::nic, send_bytes, 0.0, c_bps);
    double c_end = -1;
    double t_end = -1;
    coll.submit(c, "", "", [&] { c_end = e.now().seconds(); });
    send.submit(t, "", "", [&] { t_end = e.now().seconds(); });
    e.run();
    // Half the port each until the send ends, then the collective alone.
    CHECK(t_end == Approx(2 * send_bytes / c_bps).epsilon(1e-9));
    CHECK(c_end == Approx((bus + send_bytes) / c_bps).epsilon(1e-9));
  }
}

TEST_CASE("without a network every transfer takes its standalone time, in order") {
  Engine e;
  TransferStream stream(e, nullptr);
  Transfer a;
  a.standalone_s = 0.25;
  Transfer b;
  b.standalone_s = 0.5;
  std::vector<double> ends;
  stream.submit(a, "", "", [&] { ends.push_back(e.now().seconds()); });
  stream.submit(b, "", "", [&] { ends.push_back(e.now().seconds()); });
  e.run();
  REQUIRE(ends.size() == 2);
  CHECK(ends[0] == Approx(0.25));
  CHECK(ends[1] == Approx(0.75));
  CHECK(stream.busy_time().seconds() == Approx(0.75));
  CHECK(stream.items() == 2);
}

TEST_CASE("in a pipeline, gradient collectives and stage sends slow each other down") {
  // Two pipeline stages on two one-GPU machines, two replicas: the last stage's gradient
  // allreduce starts with its gradient send to stage 0, both over its 1 Gbps NIC.
  Scenario on = scenario({"cluster=gtopk-32x-p102-1gbe", "cluster.nodes=4", "model=resnet50",
                          "batch_per_replica=32", "input.enabled=false", "parallelism.data=2",
                          "precision=fp32", "parallelism.pipeline=2", "parallelism.microbatches=4",
                          "parallelism.schedule=1f1b"});
  Scenario off = on;
  off.comm.contention = false;
  const StepReport a = simulate_training(on);
  const StepReport b = simulate_training(off);
  INFO("shared: step " << a.step_time_s << " comm " << a.comm_time_s << "; standalone: step "
                       << b.step_time_s << " comm " << b.comm_time_s);
  CHECK(a.shared_network);
  CHECK_FALSE(b.shared_network);
  CHECK(a.comm_time_s > 1.001 * b.comm_time_s);
  CHECK(a.step_time_s > b.step_time_s);
  const StepReport again = simulate_training(on);
  CHECK(again.step_time_s == a.step_time_s);  // bit-identical
  CHECK(again.comm_time_s == a.comm_time_s);
}

TEST_CASE("ZeRO-3's prefetched all-gathers and its reduce-scatters share the NIC") {
  Scenario on = scenario({"cluster=gtopk-32x-p102-1gbe", "cluster.nodes=2", "model=resnet50",
                          "batch_per_replica=16", "input.enabled=false", "parallelism.data=2",
                          "parallelism.zero=3", "precision=fp32"});
  Scenario off = on;
  off.comm.contention = false;
  const StepReport a = simulate_training(on);
  const StepReport b = simulate_training(off);
  INFO("shared: step " << a.step_time_s << " comm " << a.comm_time_s << "; standalone: step "
                       << b.step_time_s << " comm " << b.comm_time_s);
  CHECK(a.comm_time_s > 1.001 * b.comm_time_s);
  CHECK(a.step_time_s > b.step_time_s);
}

TEST_CASE("tensor-parallel collectives share NVLink with data-parallel buckets") {
  // GPT-2 medium at tp 2 x dp 4 under ZeRO-3 on one DGX A100: the tensor-parallel all-reduces
  // and the prefetched parameter all-gathers of the data-parallel group both cross each GPU's
  // NVLink port. At tp 8 alone nothing else is on the port, and the network gives the
  // standalone times.
  const auto run = [](int tp, int dp, bool contention) {
    return simulate_training(scenario(
        {"cluster=dgx-a100", "model=gpt2_medium", "batch_per_replica=32", "input.enabled=false",
         "precision=bf16", "parallelism.tensor=" + std::to_string(tp),
         "parallelism.data=" + std::to_string(dp), "parallelism.zero=3",
         std::string("communication.contention=") + (contention ? "true" : "false")}));
  };
  const StepReport a = run(2, 4, true);
  const StepReport b = run(2, 4, false);
  INFO("tp comm shared " << a.breakdown.tp_comm_s << " standalone " << b.breakdown.tp_comm_s);
  CHECK(a.breakdown.tp_comm_s > 1.001 * b.breakdown.tp_comm_s);
  CHECK(a.kernels_per_step == b.kernels_per_step);  // the NCCL kernels are still launched
  const StepReport alone_on = run(8, 1, true);
  const StepReport alone_off = run(8, 1, false);
  CHECK(alone_on.breakdown.tp_comm_s == Approx(alone_off.breakdown.tp_comm_s).epsilon(1e-6));
}
