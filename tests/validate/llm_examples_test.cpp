// The LLM example scenarios (examples/gpt3_175b_1024xa100.json, examples/llama2_70b_64xh100.json):
// they load and run through the command line with the layout their comments describe, and the GPT-3
// example is the same job as the Megatron table's GPT-3 row.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cli/profiles_source.hpp"
#include "cli/validate_megatron.hpp"
#include "models/scenario.hpp"
#include "models/training_step.hpp"
#include "sim/config/json_source.hpp"
#include "support/run_cli.hpp"

namespace {

const std::string kExamples = std::string(TRAINSIM_SOURCE_DIR) + "/examples/";

nlohmann::json simulate_example(const std::string& file) {
  const auto r = trainsim::test::run_cli({"simulate", "--format", "json", kExamples + file});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("LLM examples run with the layouts they describe") {
  const auto gpt3 = simulate_example("gpt3_175b_1024xa100.json");
  CHECK(gpt3["data_parallel"] == 8);
  CHECK(gpt3["global_batch"] == 1536);
  CHECK(gpt3["step_time_s"].get<double>() > 0);
  const auto llama = simulate_example("llama2_70b_64xh100.json");
  CHECK(llama["data_parallel"] == 4);
  CHECK(llama["global_batch"] == 1024);  // Llama 2's 4M tokens: 1024 sequences of 4096
  CHECK(llama["step_time_s"].get<double>() > 0);
}

TEST_CASE("the GPT-3 example is the Megatron table's GPT-3 175B row") {
  const trainsim::sim::ProfileLibrary profiles = trainsim::cli::load_profile_library({});
  const auto example = trainsim::models::load_scenario(
      trainsim::sim::load_json_file(kExamples + "gpt3_175b_1024xa100.json", "scenario"),
      "gpt3 example", {}, profiles);
  const trainsim::cli::MegatronRun* row = nullptr;
  const auto runs = trainsim::cli::megatron_runs();
  for (const auto& r : runs)
    if (r.source_id == "mlm2021_gpt3") row = &r;
  REQUIRE(row != nullptr);
  const auto table = trainsim::models::load_scenario(
      trainsim::cli::megatron_scenario(*row, profiles), "gpt3 row", {}, profiles);
  CHECK(example.model.params() == table.model.params());
  CHECK(example.devices() == 1024);
  CHECK(example.devices() == table.devices());
  CHECK(trainsim::models::simulate_training(example).step_time_s ==
        trainsim::models::simulate_training(table).step_time_s);
}
