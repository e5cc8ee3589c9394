#pragma once
// Runs `trainsim args...` (run_cli.hpp), requires exit 0 (showing stderr when it is not) and
// parses stdout as JSON: what every test of a command's JSON output starts with.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/run_cli.hpp"

namespace trainsim::test {

inline nlohmann::json run_cli_json(const std::vector<std::string>& args) {
  const CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace trainsim::test
