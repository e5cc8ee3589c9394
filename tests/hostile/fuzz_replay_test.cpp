// Replays the fuzz seeds and every regression input (tests/fuzz/regressions/<harness>/, inputs
// the fuzzers once crashed on) through the harness bodies in the ordinary build, so a fixed
// finding stays fixed even where clang's libFuzzer is not installed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz/harnesses/fuzz_targets.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every file of the folders under `dirs` (relative to the repository), in a fixed order.
std::vector<fs::path> inputs(std::initializer_list<const char*> dirs, const char* extension = "") {
  std::vector<fs::path> out;
  for (const char* d : dirs) {
    const fs::path dir = fs::path(TRAINSIM_SOURCE_DIR) / d;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file() && (*extension == '\0' || e.path().extension() == extension))
        out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <typename F>
void replay(const std::vector<fs::path>& files, F body) {
  REQUIRE_FALSE(files.empty());
  for (const fs::path& f : files) {
    INFO(f.string());
    const std::string data = read_all(f);
    CHECK_NOTHROW(body(data));
  }
}

}  // namespace

TEST_CASE("hostile: fuzz replay json_document (examples, profiles, regressions)") {
  auto files = inputs({"examples", "hw_profiles"}, ".json");
  for (const auto& f : inputs({"tests/fuzz/regressions/json_document"}))
    files.push_back(f);
  replay(files, trainsim::fuzz::json_document);
}

TEST_CASE("hostile: fuzz replay quantity") {
  replay(inputs({"tests/fuzz/seeds/quantity", "tests/fuzz/regressions/quantity"}),
         trainsim::fuzz::quantity);
}

TEST_CASE("hostile: fuzz replay csv_points") {
  auto files = inputs({"tests/reference_data", "examples"}, ".csv");
  for (const auto& f : inputs({"tests/fuzz/regressions/csv_points"}))
    files.push_back(f);
  replay(files, trainsim::fuzz::csv_points);
}

TEST_CASE("hostile: fuzz replay set_paths") {
  replay(inputs({"tests/fuzz/seeds/set_paths", "tests/fuzz/regressions/set_paths"}),
         trainsim::fuzz::set_paths);
}

TEST_CASE("hostile: fuzz replay sweep_ranges") {
  replay(inputs({"tests/fuzz/seeds/sweep_ranges", "tests/fuzz/regressions/sweep_ranges"}),
         trainsim::fuzz::sweep_ranges);
}
