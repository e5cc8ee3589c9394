// DeepBench's GPUs split into the ones the kernel profiles are fitted on (deepbench_gemm, _conv,
// _lstm) and the ones nothing is fitted on (deepbench_held_out_gpus): each GPU is in one group,
// the held-out table has GEMM, conv and LSTM rows of all four, and the calibration script names
// none of them.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cli/profiles_source.hpp"
#include "cli/validate_tables.hpp"

namespace {

const std::set<std::string> kHeldOut = {"titan-xp", "titan-x-pascal", "m40", "titan-x-maxwell"};

// The accelerator profile a series names (its first word).
std::string gpu_of(const std::string& series) {
  return series.substr(0, series.find(' '));
}

}  // namespace

TEST_CASE("DeepBench's held-out GPUs are in their own table and fitted on by nothing") {
  const auto lib = trainsim::cli::load_profile_library({});
  std::set<std::string> fitted_gpus;
  std::set<std::string> held_out_kinds;
  std::set<std::string> held_out_gpus;
  for (const auto& table : trainsim::cli::reference_tables()) {
    const bool fitted = table.name == "deepbench_gemm" || table.name == "deepbench_conv" ||
                        table.name == "deepbench_lstm";
    if (!fitted && table.name != "deepbench_held_out_gpus") continue;
    for (const auto& p : table.evaluate(lib)) {
      const std::string gpu = gpu_of(p.series);
      INFO(table.name << ": " << p.label);
      if (fitted) {
        CHECK(kHeldOut.count(gpu) == 0);
        fitted_gpus.insert(gpu);
      } else {
        CHECK(kHeldOut.count(gpu) == 1);
        held_out_gpus.insert(gpu);
        // "<gpu> fp32 gemm|conv|lstm ..."
        const auto kind_start = p.series.find(' ', gpu.size() + 1) + 1;
        held_out_kinds.insert(
            p.series.substr(kind_start, p.series.find(' ', kind_start) - kind_start));
      }
    }
  }
  CHECK(fitted_gpus ==
        std::set<std::string>{"v100-sxm2-16gb", "p100-sxm2-16gb", "gtx-1080-ti", "t4"});
  CHECK(held_out_gpus == kHeldOut);
  CHECK(held_out_kinds == std::set<std::string>{"gemm", "conv", "lstm"});
  // The recorded calibration workflow fits no value on a held-out GPU's rows.
  std::ifstream script(std::string(TRAINSIM_SOURCE_DIR) + "/scripts/calibrate_profiles.sh");
  REQUIRE(script);
  std::stringstream text;
  text << script.rdbuf();
  std::string line;
  while (std::getline(text, line)) {
    if (line.find("step ") == std::string::npos && line.find("grid ") == std::string::npos)
      continue;
    for (const auto& gpu : kHeldOut) {
      INFO(line);
      CHECK(line.find(gpu) == std::string::npos);
    }
  }
}
