// A kernel that a library launches from its C++ inside one framework op (cuDNN's per-step RNN
// kernels) costs the host the framework profile's library_launch, not the framework's dispatch of
// an op; inside a framework-level loop (a Python loop of LSTMCell steps) each step's kernels are
// ops the framework dispatches. Measured: the H200's eager torch.nn.LSTM cells take 13-45 us per
// step whatever their size (tests/reference_data/h200_kernels_lstm.csv). Each cuDNN call also
// costs the host one setup before its first launch (the framework profile's library_call).
#include <catch2/catch.hpp>

#include <string_view>
#include <vector>

#include "models/kernel_plan.hpp"
#include "models/zoo/net_builder.hpp"
#include "support/step_scenarios.hpp"

using trainsim::models::Launch;
using trainsim::models::LstmInput;
using trainsim::models::NetBuilder;
using trainsim::models::OpClass;
using trainsim::models::Pass;

namespace {

// The launches of `layer` in `pass` for 16 samples under pytorch_eager in fp32.
std::vector<Launch> lstm_launches(const trainsim::models::Layer& layer, Pass pass) {
  const auto s = trainsim::test::scenario({"framework=pytorch_eager", "precision=fp32"});
  std::vector<Launch> out;
  trainsim::models::layer_launches(s, layer, pass, 16, out);
  return out;
}

const Launch& launch_named(const std::vector<Launch>& ls, std::string_view what) {
  for (const Launch& l : ls) {
    if (what == l.what) return l;
  }
  FAIL("no launch " << what);
  return ls.front();
}

}  // namespace

TEST_CASE("cuDNN's per-step LSTM kernels cost the host a library launch, not an op's dispatch") {
  const auto s = trainsim::test::scenario({"framework=pytorch_eager", "precision=fp32"});
  const double library_s = s.framework.host_library_launch_s;
  REQUIRE(library_s > 0);
  REQUIRE(library_s < s.framework.host_forward_per_kernel_s);

  NetBuilder nb;
  const auto x = nb.input({25, 512}, true);
  nb.begin("lstm", OpClass::recurrent, x.elements());
  nb.end(nb.lstm(x, 512));
  const auto layer = nb.take_layers().at(0);

  const auto fwd = lstm_launches(layer, Pass::forward);
  const Launch& cell = launch_named(fwd, "lstm cell");
  CHECK(cell.count == 25);
  CHECK(cell.host_s == Approx(library_s).epsilon(1e-12));
  CHECK(launch_named(fwd, "lstm gates").host_s == Approx(library_s).epsilon(1e-12));
  // The whole-sequence input projection carries the op's own dispatch and the setup of cuDNN's
  // forward call.
  const double call_s = s.framework.host_library_call_s;
  REQUIRE(call_s > 10 * library_s);
  CHECK(launch_named(fwd, "lstm input projection").host_s ==
        Approx(trainsim::models::host_launch_s(s, Pass::forward) + call_s).epsilon(1e-12));
  const auto bwd = lstm_launches(layer, Pass::backward);
  CHECK(launch_named(bwd, "lstm cell bwd").host_s == Approx(library_s).epsilon(1e-12));
  CHECK(launch_named(bwd, "lstm weight grad").host_s ==
        Approx(trainsim::models::host_launch_s(s, Pass::backward) + call_s).epsilon(1e-12));
}

TEST_CASE("each of cuDNN's three RNN calls costs the host one setup, whatever its steps") {
  const auto s = trainsim::test::scenario({"framework=pytorch_eager", "precision=fp32"});
  const double call_s = s.framework.host_library_call_s;
  const double library_s = s.framework.host_library_launch_s;
  // Calibrated on the H200's eager LSTM rows: 0.185 ms on the reference core, 40x a launch.
  CHECK(call_s == Approx(0.185e-3 / s.cluster.host.single_thread_speed).epsilon(1e-9));
  const auto host_total_s = [&](std::int64_t steps, LstmInput input, Pass pass) {
    NetBuilder nb;
    const auto x = nb.input({steps, 256}, true);
    nb.begin("lstm", OpClass::recurrent, x.elements());
    nb.end(nb.lstm(x, 256, input));
    double total_s = 0;
    for (const Launch& l : lstm_launches(nb.take_layers().at(0), pass))
      total_s += l.count * l.host_s;
    return total_s;
  };
  for (const LstmInput input : {LstmInput::linear, LstmInput::skip}) {
    // Each step adds its launches, and only them: the setups are per call.
    const double fwd_step_s =
        host_total_s(26, input, Pass::forward) - host_total_s(25, input, Pass::forward);
    CHECK(fwd_step_s == Approx(2 * library_s).epsilon(1e-9));
    const double bwd_step_s =
        host_total_s(26, input, Pass::backward) - host_total_s(25, input, Pass::backward);
    CHECK(bwd_step_s == Approx(2 * library_s).epsilon(1e-9));
  }
  // The backward's two calls: the data gradient's first per-step kernel carries one setup on its
  // first launch alone, the weight gradient the other.
  NetBuilder nb;
  const auto x = nb.input({25, 256}, true);
  nb.begin("lstm", OpClass::recurrent, x.elements());
  nb.end(nb.lstm(x, 256, LstmInput::skip));
  const auto layer = nb.take_layers().at(0);
  const auto bwd = lstm_launches(layer, Pass::backward);
  int gates = 0, setups = 0;
  for (const Launch& l : bwd) {
    if (l.host_s > call_s) ++setups;
    if (std::string_view(l.what) != "lstm gates bwd") continue;
    ++gates;
    CHECK(l.count == (l.host_s > call_s ? 1 : 24));
  }
  CHECK(gates == 2);
  CHECK(setups == 2);
  // Skip input has no projection: the forward's first per-step GEMM carries the setup.
  const auto fwd = lstm_launches(layer, Pass::forward);
  REQUIRE(fwd.size() == 3);
  CHECK(fwd[0].count == 1);
  CHECK(fwd[0].host_s == Approx(library_s + call_s).epsilon(1e-12));
  CHECK(fwd[1].count == 24);
  CHECK(fwd[1].host_s == Approx(library_s).epsilon(1e-12));
}

TEST_CASE("an LSTM cell stepped by a framework-level loop is dispatched op by op") {
  const auto s = trainsim::test::scenario({"framework=pytorch_eager", "precision=fp32"});
  NetBuilder nb;
  const auto x = nb.input({1, 512}, true);
  nb.begin("decoder", OpClass::recurrent, x.elements());
  nb.begin_repeat(40);  // Tacotron 2's decoder: one Python iteration per frame
  const auto h = nb.lstm(x, 512);
  nb.end_repeat();
  nb.end(h);
  const auto fwd = lstm_launches(nb.take_layers().at(0), Pass::forward);
  const Launch& cell = launch_named(fwd, "lstm cell");
  CHECK(cell.count == 40);
  CHECK(cell.host_s == Approx(trainsim::models::host_launch_s(s, Pass::forward)).epsilon(1e-12));
  // No cuDNN call is set up: every step is the framework's own op.
  for (const Launch& l : fwd)
    CHECK(l.host_s < s.framework.host_library_call_s);
}

TEST_CASE("a captured graph launches library kernels with no host time") {
  const auto s = trainsim::test::scenario({"framework=pytorch_cuda_graphs", "precision=fp32"});
  NetBuilder nb;
  const auto x = nb.input({25, 256}, true);
  nb.begin("lstm", OpClass::recurrent, x.elements());
  nb.end(nb.lstm(x, 256));
  const auto layer = nb.take_layers().at(0);
  for (const auto& k : layer.fwd_kernels) {
    if (k.library_launch) CHECK(trainsim::models::kernel_host_s(s, k, Pass::forward) == 0);
    CHECK(trainsim::models::library_call_host_s(s, k) == 0);
  }
}
