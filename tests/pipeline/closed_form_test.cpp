// Pipeline schedules against closed forms: uniform stages with free communication.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "models/parallel/mesh_plan.hpp"
#include "models/parallel/partition.hpp"
#include "models/training_step.hpp"
#include "sim/trace/trace_recorder.hpp"

using trainsim::models::PipelineSchedule;
using trainsim::models::Scenario;
using trainsim::models::simulate_training;

namespace {

// L identical parameter-free layers on K devices whose links cost nothing, with no launch
// overhead, so a micro-batch costs the same F and B on every stage and the update costs 0.
Scenario uniform(int layers, int stages, int micro, int batch) {
  Scenario s;
  s.name = "uniform";
  auto& a = s.cluster.accelerator;
  a.name = "ideal";
  a.peak_flops_per_s[static_cast<int>(trainsim::sim::Dtype::fp32)] = 1e12;
  a.memory_bw_bytes_per_s = 1e30;
  a.memory_capacity_bytes = 1e12;
  a.kernel_launch_overhead_s = 0;
  a.compute_units = 1;
  a.kernels.compute[static_cast<int>(trainsim::sim::KernelClass::gemm)]
                   [static_cast<int>(trainsim::sim::Dtype::fp32)] = 1.0;
  s.cluster.name = "free-links";
  s.cluster.accelerators_per_node = stages;
  s.cluster.intra_link = {"free", "", 1e300, 0, trainsim::sim::Duplex::full};
  s.cluster.host_link = s.cluster.intra_link;
  s.cluster.host.name = "host";
  for (int i = 0; i < layers; ++i) {
    trainsim::models::Layer l;
    l.name = "layer" + std::to_string(i);
    l.fwd_flops = 1e6;        // 1 us per sample at 1 TFLOP/s
    l.bwd_input_flops = 1e6;  // backward = 2 forwards
    l.bwd_weight_flops = 1e6;
    l.input_elements = 1000;
    l.output_elements = 1000;
    l.saved_elements = 3000;
    // One GEMM forward (1 MFLOP per sample), two backward (data and weight gradients), with no
    // GEMM view so no tile quantisation applies.
    trainsim::models::KernelSpec k;
    k.cls = trainsim::sim::KernelClass::gemm;
    k.flops = 1e6;
    l.fwd_kernels = {k};
    l.bwd_kernels = {k, k};
    s.model.layers.push_back(l);
  }
  s.model.name = "uniform";
  s.model.input_dtype = trainsim::models::InputDtype::fp32;
  s.model.input_shape = {1000};
  s.optimizer = trainsim::models::Optimizer::sgd;
  s.pipeline_stages = stages;
  s.microbatches = micro;
  s.batch_per_replica = batch;
  s.data_parallel = 1;
  s.steps = 3;
  s.warmup_steps = 1;
  return s;
}

std::vector<trainsim::models::StageMemory> stage_memory(const Scenario& s,
                                                        const std::vector<int>& balance, int n) {
  std::vector<trainsim::models::Chunk> chunks;
  int first = 0;
  for (std::size_t k = 0; k < balance.size(); ++k) {
    trainsim::models::Chunk c;
    c.first_layer = first;
    c.layers = balance[k];
    c.stage = static_cast<int>(k);
    chunks.push_back(c);
    first += balance[k];
  }
  return trainsim::models::mesh_memory(s, s.model, chunks, n);
}

}  // namespace

TEST_CASE("GPipe bubble fraction is (K-1)/(M+K-1) for uniform stages and free links") {
  for (int k : {2, 4, 8}) {
    for (int m : {1, 2, 4, 8, 32}) {
      const Scenario s = uniform(8, k, m, 2 * m);
      const auto r = simulate_training(s);
      INFO("K=" << k << " M=" << m);
      CHECK(r.breakdown.bubble_s / r.step_time_s ==
            Approx((k - 1.0) / (m + k - 1.0)).epsilon(1e-9));
      CHECK(r.pipeline.ideal_bubble_fraction == Approx((k - 1.0) / (m + k - 1.0)).epsilon(1e-12));
      // F = 8/K layers x 2 samples x 1 us, B = 2F: step = (M + K - 1)(F + B).
      const double f = 8.0 / k * 2 * 1e-6;
      CHECK(r.step_time_s == Approx((m + k - 1) * 3 * f).epsilon(1e-9));
    }
  }
}

TEST_CASE("1F1B has the same bubble as GPipe; GA rounds stream through one fill and drain") {
  for (int k : {2, 4}) {
    for (int m : {1, 4, 16}) {
      Scenario s = uniform(8, k, m, m);
      s.schedule = PipelineSchedule::one_f_one_b;
      const auto r = simulate_training(s);
      INFO("K=" << k << " M=" << m);
      CHECK(r.breakdown.bubble_s / r.step_time_s ==
            Approx((k - 1.0) / (m + k - 1.0)).epsilon(1e-9));
      s.grad_accum = 3;
      const auto ga = simulate_training(s);
      CHECK(ga.breakdown.bubble_s / ga.step_time_s ==
            Approx((k - 1.0) / (3 * m + k - 1.0)).epsilon(1e-9));
      CHECK(ga.global_batch == 3 * m);
      Scenario g = uniform(8, k, m, m);
      g.grad_accum = 3;  // GPipe flushes every round: the bubble stays (K-1)/(M+K-1)
      const auto gr = simulate_training(g);
      CHECK(gr.breakdown.bubble_s / gr.step_time_s ==
            Approx((k - 1.0) / (m + k - 1.0)).epsilon(1e-9));
    }
  }
}

TEST_CASE("Throughput rises with M toward K x the single-stage throughput") {
  const int k = 4;
  const double single = simulate_training(uniform(8, 1, 1, 4)).throughput_samples_per_s;
  double previous = 0;
  for (int m : {1, 2, 4, 8, 16, 64, 256}) {
    const auto r = simulate_training(uniform(8, k, m, 4 * m));  // 4 samples per micro-batch
    INFO("M=" << m);
    CHECK(r.throughput_samples_per_s > previous);
    CHECK(r.throughput_samples_per_s / single == Approx(k * m / (m + k - 1.0)).epsilon(1e-9));
    previous = r.throughput_samples_per_s;
  }
  CHECK(previous / single > 0.98 * k);
}

TEST_CASE("Re-materialization adds one forward per micro-batch per stage") {
  for (auto schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    Scenario s = uniform(8, 4, 8, 16);
    s.schedule = schedule;
    const auto off = simulate_training(s);
    s.recompute = trainsim::models::Recompute::full;
    const auto on = simulate_training(s);
    const double f = off.stages[0].forward_s;
    CHECK(on.stages[0].recompute_s == Approx(f).epsilon(1e-12));
    CHECK(on.breakdown.recompute_s == Approx(8 * f).epsilon(1e-9));
    CHECK(on.breakdown.compute_s == Approx(off.breakdown.compute_s).epsilon(1e-12));
    // Uniform stages: the critical path gains one forward per slot, (M + K - 1) F.
    CHECK(on.step_time_s - off.step_time_s == Approx((8 + 4 - 1) * f).epsilon(1e-9));
  }
}

TEST_CASE("Activation memory: O(N L/K) stored, O(N + (L/K)(N/M)) with re-materialization") {
  const int n = 64;
  for (int k : {1, 2, 4}) {
    for (int m : {1, 4, 16}) {
      Scenario s = uniform(8, k, m, n);
      const double per_layer_saved = 3000 * 4.0;  // fp32
      const double boundary = 1000 * 4.0;
      const double layers_per_stage = 8.0 / k;
      const auto off = stage_memory(s, std::vector<int>(k, 8 / k), n);
      s.recompute = trainsim::models::Recompute::full;
      const auto on = stage_memory(s, std::vector<int>(k, 8 / k), n);
      for (int i = 0; i < k; ++i) {
        INFO("K=" << k << " M=" << m << " stage " << i);
        // One stage runs its micro-batches forward-backward in turn: one micro-batch held.
        const double held = k > 1 ? n : n / m;
        CHECK(off[i].activations_bytes == Approx(held * layers_per_stage * per_layer_saved));
        // A pipeline stage checkpoints its input per micro-batch (torchgpipe); one device
        // checkpoints ceil(sqrt(8)) = 3-layer segments (Chen et al. 2016): inputs of layers 0, 3
        // and 6, and rebuilds one 3-layer segment at a time.
        if (k > 1) {
          CHECK(on[i].activations_bytes ==
                Approx(n * boundary + layers_per_stage * (n / m) * per_layer_saved));
        } else {
          CHECK(on[i].activations_bytes ==
                Approx(3 * held * boundary + 3 * (n / m) * per_layer_saved));
        }
        if (m > 1 || k == 1) CHECK(on[i].activations_bytes < off[i].activations_bytes);
      }
    }
  }
  // 1F1B holds at most K - k micro-batches at stage k.
  Scenario s = uniform(8, 4, 16, 64);
  s.schedule = PipelineSchedule::one_f_one_b;
  const auto mem = stage_memory(s, {2, 2, 2, 2}, 64);
  for (int i = 0; i < 4; ++i)
    CHECK(mem[i].activations_bytes == Approx((4 - i) * 4 * 2 * 3000 * 4.0));
}

TEST_CASE("Cost balancing finds the min-max contiguous split (checked by enumeration)") {
  std::uint32_t seed = 12345;
  const auto next = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<double>(seed >> 8) / (1u << 24);
  };
  for (int trial = 0; trial < 200; ++trial) {
    const int layers = 2 + trial % 9;
    std::vector<double> costs;
    for (int i = 0; i < layers; ++i)
      costs.push_back(next() < 0.2 ? 0.0 : next() * 10);
    for (int k = 1; k <= std::min(layers, 4); ++k) {
      const auto balance = trainsim::models::balance_by_cost(costs, k);
      REQUIRE(static_cast<int>(balance.size()) == k);
      int sum = 0;
      for (int b : balance) {
        CHECK(b >= 1);
        sum += b;
      }
      CHECK(sum == layers);
      // Enumerate all splits: K-1 cut positions in 1..L-1.
      double best = 1e300;
      std::vector<int> cuts(static_cast<std::size_t>(k - 1));
      const std::function<void(int, int)> go = [&](int idx, int from) {
        if (idx == k - 1) {
          std::vector<int> b;
          int prev = 0;
          for (int c : cuts) {
            b.push_back(c - prev);
            prev = c;
          }
          b.push_back(layers - prev);
          best = std::min(best, trainsim::models::slowest_stage_cost(costs, b));
          return;
        }
        for (int c = from; c <= layers - (k - 1 - idx); ++c) {
          cuts[static_cast<std::size_t>(idx)] = c;
          go(idx + 1, c + 1);
        }
      };
      go(0, 1);
      CHECK(trainsim::models::slowest_stage_cost(costs, balance) == Approx(best).epsilon(1e-12));
    }
  }
}

TEST_CASE("Trace shows per-stage compute, transfers and fill/drain bubbles") {
  Scenario s = uniform(8, 4, 4, 8);
  s.cluster.intra_link.bw_bytes_per_s = 1e9;  // visible transfers
  s.cluster.intra_link.latency_s = 1e-6;
  trainsim::sim::TraceRecorder trace;
  const auto r = trainsim::models::simulate_training(s, &trace);
  std::ostringstream os;
  trace.write_chrome_json(os);
  const std::string json = os.str();
  CHECK(json.find("stage 0 / gpu") != std::string::npos);
  CHECK(json.find("stage 3 / gpu") != std::string::npos);
  CHECK(json.find("\"pipeline bubble\"") != std::string::npos);
  CHECK(json.find("\"cat\":\"bubble\"") != std::string::npos);
  CHECK(json.find("send activations") != std::string::npos);
  CHECK(json.find("send gradients") != std::string::npos);
  // Every stage: 4 forwards + 4 backwards per step, 3 steps; 3 boundaries x 2 directions x 4 x 3.
  CHECK(trace.spans() >= static_cast<std::size_t>(4 * 8 * 3 + 3 * 2 * 4 * 3));
  // Each stage's parts add up to the step.
  const auto& b = r.breakdown;
  CHECK(b.compute_s + b.recompute_s + b.exposed_comm_s + b.input_stall_s + b.bubble_s +
            b.optimizer_s + b.host_s + b.tp_comm_s + b.zero_comm_s ==
        Approx(r.step_time_s).epsilon(1e-9));
}

TEST_CASE("Interleaved 1F1B divides the bubble by the virtual stages (Narayanan et al. 2021)") {
  // Sec. 2.2.2: with v model chunks per device the bubble is (K-1)/v micro-batch times, so its
  // share of the step is ((K-1)/v) / (M + (K-1)/v) for uniform chunks and free links.
  for (int v : {1, 2, 4}) {
    Scenario s = uniform(16, 4, 8, 8);
    s.schedule = PipelineSchedule::one_f_one_b;
    s.virtual_stages = v;
    const auto r = simulate_training(s);
    const double bubble = 3.0 / v;
    INFO("v=" << v);
    CHECK(r.pipeline.ideal_bubble_fraction == Approx(bubble / (8 + bubble)).epsilon(1e-12));
    CHECK(r.breakdown.bubble_s / r.step_time_s == Approx(bubble / (8 + bubble)).epsilon(1e-6));
  }
}
