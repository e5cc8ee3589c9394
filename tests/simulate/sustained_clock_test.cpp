// The clock a power-capped board sustains (sim/hw/kernel_model.hpp, sustained_clock_fraction):
// boards of one chip at different power limits run compute-bound kernels at different rates,
// memory-bound ones alike.
#include <catch2/catch.hpp>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cli/profiles_source.hpp"
#include "sim/hw/kernel_model.hpp"
#include "support/run_cli.hpp"

namespace {

using trainsim::sim::Dtype;
using trainsim::sim::KernelClass;

trainsim::sim::Kernel gemm(double m, double n, double k) {
  trainsim::sim::Kernel g;
  g.cls = KernelClass::gemm;
  g.dtype = Dtype::fp16;
  g.flops = 2 * m * n * k;
  g.gemm = {m, n, k, 1};
  return g;
}

trainsim::sim::Kernel elementwise(double bytes) {
  trainsim::sim::Kernel e;
  e.cls = KernelClass::elementwise;
  e.dtype = Dtype::fp16;
  e.bytes = bytes;
  return e;
}

}  // namespace

TEST_CASE("a board sustains the clock its power per compute unit feeds, up to its rated boost") {
  const auto lib = trainsim::cli::load_profile_library({});
  auto a = lib.accelerator("v100-sxm2-16gb", "test");
  a.compute_units = 100;
  a.kernels.sustained_clock_hz = 1.6e9;  // 4 W per unit sustains 1.6 GHz
  a.kernels.unit_power_w = 4;
  a.kernels.power_clock_exponent = 2;
  a.boost_clock_hz = 1.6e9;
  a.board_power_w = 100;  // 1 W per unit: (1 / 4)^(1/2) of 1.6 GHz
  CHECK(trainsim::sim::sustained_clock_fraction(a, Dtype::fp32) == Approx(0.5));
  a.boost_clock_hz = 1.0e9;  // rated lower: 0.8 GHz is 80% of it
  CHECK(trainsim::sim::sustained_clock_fraction(a, Dtype::fp32) == Approx(0.8));
  a.board_power_w = 1000;  // headroom never raises the clock above the rated boost
  CHECK(trainsim::sim::sustained_clock_fraction(a, Dtype::fp32) == 1);
  a.board_power_w.reset();  // no limit given: the rated clock
  CHECK(trainsim::sim::sustained_clock_fraction(a, Dtype::fp32) == 1);
  a.board_power_w = 100;
  a.kernels.sustained_clock_hz = 0;  // the architecture gives no curve: the rated clock
  CHECK(trainsim::sim::sustained_clock_fraction(a, Dtype::fp32) == 1);
}

TEST_CASE("the power per clock follows the math issued per clock") {
  const auto lib = trainsim::cli::load_profile_library({});
  auto a = lib.accelerator("v100-sxm2-16gb", "test");
  a.compute_units = 100;
  a.kernels.sustained_clock_hz = 1e9;
  a.kernels.unit_power_w = 4;
  a.kernels.power_clock_exponent = 1;
  a.boost_clock_hz = 1e9;
  a.board_power_w = 400;  // holds the reference clock at the reference rate
  a.peak_flops_per_s[static_cast<int>(Dtype::fp16)] = 100 * 1e9 * 1024;  // 1024 per clock per unit
  a.kernels.reference_flops_per_clock[static_cast<int>(Dtype::fp16)] = 512;
  // Twice the reference's rate per clock: half the power per clock each unit can spend.
  CHECK(trainsim::sim::sustained_clock_fraction(a, Dtype::fp16) == Approx(0.5));
  a.kernels.reference_flops_per_clock[static_cast<int>(Dtype::fp16)] = 1024;
  CHECK(trainsim::sim::sustained_clock_fraction(a, Dtype::fp16) == Approx(1));
  // Built in: the RTX A6000 runs TF32 at twice the RTX 3090's rate per clock, fp32 at the same.
  const auto a6000 = lib.accelerator("rtx-a6000", "test");
  const auto rtx3090 = lib.accelerator("rtx-3090", "test");
  CHECK(trainsim::sim::sustained_clock_fraction(a6000, Dtype::tf32) <
        trainsim::sim::sustained_clock_fraction(a6000, Dtype::fp32));
  CHECK(trainsim::sim::sustained_clock_fraction(rtx3090, Dtype::tf32) == 1);
  CHECK(trainsim::sim::sustained_clock_fraction(rtx3090, Dtype::fp16) == 1);
}

TEST_CASE("a slower clock slows compute-bound kernels, not memory-bound ones") {
  const auto lib = trainsim::cli::load_profile_library({});
  auto full = lib.accelerator("v100-sxm2-16gb", "test");
  full.board_power_w.reset();
  auto capped = full;
  capped.kernels.sustained_clock_hz = 1e9;
  capped.kernels.unit_power_w = 4;
  capped.kernels.power_clock_exponent = 1;
  capped.boost_clock_hz = 1e9;
  capped.board_power_w = 0.5 * 4 * capped.compute_units;  // half the power: half the clock
  REQUIRE(trainsim::sim::sustained_clock_fraction(capped, Dtype::fp16) == Approx(0.5));
  const auto big = gemm(8192, 8192, 8192);
  CHECK(trainsim::sim::kernel_body_s(capped, big) ==
        Approx(2 * trainsim::sim::kernel_body_s(full, big)).epsilon(1e-12));
  const auto stream = elementwise(1e9);
  CHECK(trainsim::sim::kernel_body_s(capped, stream) == trainsim::sim::kernel_body_s(full, stream));
}

TEST_CASE("boards of one chip at lower power limits sustain lower clocks") {
  const auto lib = trainsim::cli::load_profile_library({});
  const auto clock = [&](const char* name) {
    return trainsim::sim::sustained_clock_fraction(lib.accelerator(name, "test"), Dtype::fp32);
  };
  // GA102: RTX 3090 (350 W, 82 SMs), RTX A6000 and A40 (300 W, 84), A10 (150 W, 72).
  CHECK(clock("rtx-3090") == 1);
  CHECK(clock("rtx-a6000") < 1);
  // The A40 has the A6000's power per SM but a lower rated clock (1740 MHz against 1800): the
  // same sustained clock is a larger share of it.
  CHECK(clock("a40") > clock("rtx-a6000"));
  CHECK(clock("a10") < clock("rtx-a6000"));
  // AD102: RTX 4090 (450 W, 128 SMs), L40S (350 W, 142), RTX 6000 Ada (300 W, 142).
  CHECK(clock("rtx-6000-ada") < clock("l40s"));
  CHECK(clock("l40s") < clock("rtx-4090"));
  // Turing: Quadro RTX 8000 (260 W, 72 SMs), T4 (70 W, 40).
  CHECK(clock("t4") < clock("quadro-rtx-8000"));
  // Architectures whose profiles give no draw hold the rated clock.
  CHECK(clock("v100-sxm2-16gb") == 1);
}

TEST_CASE("simulate reports the clock a power-capped board sustains") {
  using trainsim::test::run_cli;
  const auto capped =
      run_cli({"simulate", "--set", "cluster.node.accelerator=a10", "--format", "json"});
  INFO(capped.err);
  REQUIRE(capped.exit_code == 0);
  const auto a10 = nlohmann::json::parse(capped.out);
  const auto lib = trainsim::cli::load_profile_library({});
  // The demo runs fp16: the A10's share in fp16 math.
  CHECK(
      a10.at("sustained_clock").get<double>() ==
      Approx(trainsim::sim::sustained_clock_fraction(lib.accelerator("a10", "test"), Dtype::fp16)));
  CHECK(a10.at("sustained_clock").get<double>() < 0.6);
  const auto text = run_cli({"simulate", "--set", "cluster.node.accelerator=a10"});
  CHECK(text.out.find("  sustained clock      49.4% of the rated boost clock in fp16 math") !=
        std::string::npos);
  // An A100 SXM4 holds its clock: no line, and 1 in JSON.
  const auto full = run_cli({"simulate"});
  CHECK(full.out.find("sustained clock") == std::string::npos);
  const auto full_json = run_cli({"simulate", "--format", "json"});
  CHECK(nlohmann::json::parse(full_json.out).at("sustained_clock").get<double>() == 1);
}
