// Every way a profile can be wrong gives exit code 2 and a one-line message naming the file,
// the JSON path and the value.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/run_cli.hpp"

namespace fs = std::filesystem;
using trainsim::test::run_cli;

namespace {

const char* const kGoodAccelerator = R"({
  "kind": "accelerator", "name": "testgpu", // comments are allowed
  "peak_flops": {"fp32": "10 TFLOP/s", "fp16": "100 TFLOP/s"},
  "memory_bandwidth": "1 TB/s", "memory_capacity": "16 GiB",
  "kernel_launch_overhead": "5 us", "compute_units": 40, "kernels": "nvidia-volta"
})";

// A fresh folder holding one accelerator profile with `text` as its content.
std::string profile_dir(const std::string& text, const std::string& name = "testgpu") {
  const fs::path dir = trainsim::test::fresh_dir("profiles");
  fs::create_directories(dir / "accelerators");
  std::ofstream(dir / "accelerators" / (name + ".json")) << text;
  return dir.string();
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

void check_error(const std::string& text, const std::vector<std::string>& expected_parts) {
  const std::string dir = profile_dir(text);
  const auto r = run_cli({"profiles", "show", "testgpu", "--profile-dir", dir});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("testgpu.json") != std::string::npos);  // the file is named
  for (const auto& part : expected_parts)
    CHECK(r.err.find(part) != std::string::npos);
  // One line.
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

// `profiles show testgpu` of an accelerator profile that loads: its output.
std::string shown(const std::string& text) {
  const auto r = run_cli({"profiles", "show", "testgpu", "--profile-dir", profile_dir(text)});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  return r.out;
}

}  // namespace

TEST_CASE("a valid profile loads and is shown") {
  const std::string out = shown(kGoodAccelerator);
  CHECK(out.find("100 TFLOP/s") != std::string::npos);
  CHECK(out.find("16 GiB") != std::string::npos);
}

TEST_CASE("unknown key: named, with the nearest known key suggested") {
  check_error(replace(kGoodAccelerator, "\"memory_bandwidth\"", "\"memory_bandwdith\""),
              {"memory_bandwdith", "unknown key", "memory_bandwidth"});
  // An optional key's typo is caught by the unknown-key check, with a suggestion.
  check_error(replace(kGoodAccelerator, "\"kind\"", "\"descripton\": \"x\", \"kind\""),
              {"descripton", "unknown key", "did you mean 'description'"});
}

TEST_CASE("wrong type") {
  check_error(replace(kGoodAccelerator, "\"compute_units\": 40", "\"compute_units\": \"forty\""),
              {"compute_units", "\"forty\""});
  check_error(replace(kGoodAccelerator, "\"nvidia-volta\"", "[1]"), {"kernels"});
}

TEST_CASE("missing required key") {
  check_error(replace(kGoodAccelerator, "\"memory_capacity\": \"16 GiB\",", ""),
              {"memory_capacity", "missing required key"});
}

TEST_CASE("zero, negative, NaN and infinite values where a positive one is needed") {
  check_error(replace(kGoodAccelerator, "\"1 TB/s\"", "0"),
              {"memory_bandwidth", "must be positive", "0"});
  check_error(replace(kGoodAccelerator, "\"1 TB/s\"", "\"-1 TB/s\""),
              {"memory_bandwidth", "must be positive"});
  check_error(replace(kGoodAccelerator, "\"1 TB/s\"", "\"nan TB/s\""),
              {"memory_bandwidth", "nan TB/s"});
  check_error(replace(kGoodAccelerator, "\"1 TB/s\"", "\"inf TB/s\""),
              {"memory_bandwidth", "inf TB/s"});
  check_error(replace(kGoodAccelerator, "\"compute_units\": 40", "\"compute_units\": 0"),
              {"compute_units", "must be at least 1"});
  check_error(replace(kGoodAccelerator, "\"compute_units\": 40",
                      "\"compute_units\": 40, \"board_power\": \"-70 W\""),
              {"board_power", "must be positive"});
  check_error(replace(kGoodAccelerator, "\"compute_units\": 40",
                      "\"compute_units\": 40, \"board_power\": \"70 TFLOP/s\""),
              {"board_power", "70 TFLOP/s", "accepted units"});
}

TEST_CASE("a power limit on an architecture with a sustained-clock curve needs the rated clock") {
  // nvidia-turing models the clock a power limit sustains, so the board's rated boost is needed.
  check_error(replace(replace(kGoodAccelerator, "\"nvidia-volta\"", "\"nvidia-turing\""),
                      "\"compute_units\": 40", "\"compute_units\": 40, \"board_power\": \"70 W\""),
              {"board_power", "needs boost_clock", "nvidia-turing"});
  check_error(replace(kGoodAccelerator, "\"compute_units\": 40",
                      "\"compute_units\": 40, \"boost_clock\": \"1.5 GW\""),
              {"boost_clock", "1.5 GW", "accepted units"});
  // With it, the T4-like board sustains less than its rated clock, the less the more math it
  // issues per clock (10 and 100 TFLOP/s on 40 SMs at 1590 MHz: 1.23 and 1.54 times the
  // Quadro RTX 8000's rates per clock).
  const std::string out = shown(replace(
      replace(kGoodAccelerator, "\"nvidia-volta\"", "\"nvidia-turing\""), "\"compute_units\": 40",
      "\"compute_units\": 40, \"board_power\": \"70 W\", "
      "\"boost_clock\": \"1590 MHz\""));
  CHECK(out.find("board power            70 W; share of the rated boost clock sustained under "
                 "dense math: fp32 71.7% fp16 64.2%") != std::string::npos);
}

TEST_CASE("a sustained-clock curve's exponent must be physical") {
  // The built-in Turing profile with its exponent replaced, under another name.
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/hw_profiles/kernels/nvidia-turing.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = replace(replace(text, "\"power_clock_exponent\": 2", "\"power_clock_exponent\": 9"),
                 "\"name\": \"nvidia-turing\"", "\"name\": \"testk\"");
  const fs::path dir = profile_dir(replace(kGoodAccelerator, "\"nvidia-volta\"", "\"testk\""));
  fs::create_directories(fs::path(dir) / "kernels");
  std::ofstream(fs::path(dir) / "kernels" / "testk.json") << text;
  const auto r = run_cli({"profiles", "show", "testgpu", "--profile-dir", dir});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("testk.json") != std::string::npos);
  CHECK(r.err.find("power_clock_exponent") != std::string::npos);
  CHECK(r.err.find("must be between 0.5 and 5") != std::string::npos);
}

TEST_CASE("a board power is shown with the clock it sustains") {
  const std::string out = shown(replace(kGoodAccelerator, "\"compute_units\": 40",
                                        "\"compute_units\": 40, \"board_power\": \"250 W\""));
  // nvidia-volta gives no sustained_clock: the rated clock is held.
  CHECK(out.find("board power            250 W; share of the rated boost clock sustained "
                 "under dense math: fp32 100% fp16 100%") != std::string::npos);
}

TEST_CASE("an accelerator needs a kernel efficiency for every dtype it has a peak for") {
  // nvidia-pascal gives no tf32 efficiencies (Pascal has no TF32), so a tf32 peak is an error.
  // (Its boards name their clock: it counts some recurrent steps in cycles.)
  check_error(
      replace(replace(replace(kGoodAccelerator, "\"nvidia-volta\"", "\"nvidia-pascal\""),
                      "\"fp16\": \"100 TFLOP/s\"", "\"tf32\": \"100 TFLOP/s\""),
              "\"compute_units\": 40", "\"compute_units\": 40, \"boost_clock\": \"1.5 GHz\""),
      {"kernels", "nvidia-pascal", "tf32"});
  check_error(replace(kGoodAccelerator, "\"nvidia-volta\"", "\"nvidia-voltaa\""),
              {"kernels", "did you mean 'nvidia-volta'"});
}

TEST_CASE("unknown unit") {
  check_error(replace(kGoodAccelerator, "\"1 TB/s\"", "\"1 TB/sec\""),
              {"memory_bandwidth", "\"1 TB/sec\"", "accepted units"});
}

TEST_CASE("malformed JSON gives line and column") {
  const auto dir = profile_dir(replace(kGoodAccelerator, "\"memory_capacity\": \"16 GiB\",",
                                       "\"memory_capacity\" \"16 GiB\","));
  const auto r = run_cli({"profiles", "show", "testgpu", "--profile-dir", dir});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("testgpu.json:4:58") != std::string::npos);
  CHECK(r.err.find("malformed JSON") != std::string::npos);
}

TEST_CASE("missing profile folder and unknown profile name") {
  auto r = run_cli({"profiles", "list", "--profile-dir", "/nonexistent/trainsim"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/nonexistent/trainsim") != std::string::npos);
  r = run_cli({"profiles", "show", "testgpo", "--profile-dir", profile_dir(kGoodAccelerator)});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean 'testgpu'") != std::string::npos);
}

TEST_CASE("usage errors exit 2") {
  CHECK(run_cli({"profiles"}).exit_code == 2);
  CHECK(run_cli({"profiles", "frobnicate"}).exit_code == 2);
  CHECK(run_cli({"profiles", "list", "--no-such-option"}).exit_code == 2);
  CHECK(run_cli({"no-such-command"}).exit_code == 2);
  CHECK(run_cli({}).exit_code == 2);
  const auto v = run_cli({"--version"});
  CHECK(v.exit_code == 0);
  CHECK(v.out.rfind("trainsim ", 0) == 0);
  CHECK(run_cli({"profiles", "--help"}).exit_code == 0);
}
