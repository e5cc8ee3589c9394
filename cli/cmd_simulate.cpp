// trainsim simulate [SCENARIO] [--set PATH=VALUE]... [--format text|json|csv]

#include <ostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/profiles_source.hpp"
#include "cli/scenario_source.hpp"
#include "cli/step_report_format.hpp"
#include "models/training_step.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

int run_simulate(const Args& args, CommandIo& io) {
  po::options_description options("simulate options");
  std::string scenario_file;
  std::vector<std::string> sets;
  std::vector<std::string> dirs;
  std::string format = "text";
  options.add_options()("scenario", po::value(&scenario_file),
                        "scenario JSON file (default: the built-in demo)")(
      "set", po::value(&sets), "override PATH=VALUE (repeatable), e.g. --set parallelism.data=4")(
      "format", po::value(&format), "text | json | csv")(
      "profile-dir", po::value(&dirs), "extra folder of profile JSON files (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_command_line("simulate",
                          "[SCENARIO.json] [--set PATH=VALUE]... [--format text|json|csv]", args,
                          options, pos, vm, io)) {
    return 0;
  }
  if (format != "text" && format != "json" && format != "csv") {
    throw UsageError("--format " + format, "expected text, json or csv");
  }
  const sim::ProfileLibrary profiles = load_profile_library(dirs);
  const models::Scenario scenario = load_scenario_source(scenario_file, sets, profiles);
  const models::StepReport report = models::simulate_training(scenario);
  if (format == "json") {
    io.out << step_report_json(report).dump(2) << "\n";
  } else if (format == "csv") {
    std::vector<std::pair<std::string, std::string>> cols;
    flatten_json(step_report_json(report), "", cols);
    for (std::size_t i = 0; i < cols.size(); ++i)
      io.out << (i ? "," : "") << cols[i].first;
    io.out << "\n";
    for (std::size_t i = 0; i < cols.size(); ++i)
      io.out << (i ? "," : "") << cols[i].second;
    io.out << "\n";
  } else {
    print_step_report_text(io.out, report);
  }
  return 0;
}

}  // namespace trainsim::cli
