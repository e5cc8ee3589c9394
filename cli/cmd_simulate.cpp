// trainsim simulate [SCENARIO] [--set PATH=VALUE]... [--format text|json|csv] [--trace FILE]
// The report ends with how many of the profile values behind the result are estimates.

#include <fstream>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/parameter_provenance.hpp"
#include "cli/profiles_source.hpp"
#include "cli/run_checks.hpp"
#include "cli/scenario_source.hpp"
#include "cli/step_report_format.hpp"
#include "cli/target_report.hpp"
#include "models/training_step.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

int run_simulate(const Args& args, CommandIo& io) {
  po::options_description options("simulate options");
  std::string scenario_file;
  std::vector<std::string> sets;
  std::vector<std::string> dirs;
  std::string format = "text";
  std::string trace_file;
  bool uncertainty = false;
  std::string price_text;
  options.add_options()("scenario", po::value(&scenario_file),
                        "scenario JSON file (default: the built-in demo)")(
      "set", po::value(&sets), "override PATH=VALUE (repeatable), e.g. --set parallelism.data=4")(
      "format", po::value(&format), "text | json | csv")(
      "trace", po::value(&trace_file),
      "write a Chrome trace-event JSON of one replica's steps to FILE (open in Perfetto)")(
      "profile-dir", po::value(&dirs), "extra folder of profile JSON files (repeatable)")(
      "uncertainty", po::bool_switch(&uncertainty),
      "95% intervals of step time, throughput and time to target from the parameters' "
      "covariances (JSON: intervals)")(
      "price-per-gpu-hour", po::value(&price_text),
      "USD per accelerator hour: with a scenario target, to_target.cost_usd");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_command_line(
          "simulate",
          "[SCENARIO.json] [--set PATH=VALUE]... [--format text|json|csv] [--trace FILE.json]",
          args, options, pos, vm, io)) {
    return 0;
  }
  if (format != "text" && format != "json" && format != "csv") {
    throw UsageError("--format " + format, "expected text, json or csv");
  }
  const sim::ProfileLibrary profiles = load_profile_library(dirs);
  const models::Scenario scenario = load_scenario_source(scenario_file, sets, profiles);
  // Open the trace file before simulating so a bad path fails fast.
  std::ofstream trace_out;
  if (!trace_file.empty()) {
    trace_out.open(trace_file, std::ios::binary);
    if (!trace_out) throw UsageError("--trace " + trace_file, "cannot open the file for writing");
  }
  sim::TraceRecorder trace;
  const models::StepReport report = simulate_checked(scenario, scenario_label(scenario_file, sets),
                                                     &io, trace_file.empty() ? nullptr : &trace);
  if (!trace_file.empty()) {
    trace.write_chrome_json(trace_out);
    trace_out.close();
    if (!trace_out) throw UsageError("--trace " + trace_file, "writing the trace failed");
  }
  // The profile values behind the result and their sources (cli/parameter_provenance.hpp).
  sim::JsonSource source;
  nlohmann::json doc = resolved_scenario_doc(scenario_file, sets, profiles, source);
  const ResultProvenance provenance =
      result_provenance(std::move(doc), std::move(source), profiles, scenario);
  std::optional<double> price;
  if (!price_text.empty()) price = parse_price_per_gpu_hour(price_text);
  const std::optional<TargetResult> to_target = evaluate_target(scenario, report, price);
  nlohmann::json j = step_report_json(report);
  if (to_target) j["to_target"] = to_target_json(to_target, price.has_value());
  if (uncertainty)
    j["intervals"] =
        run_intervals_json(scenario_file, sets, profiles, scenario, report, &provenance);
  if (format == "json") {
    j["provenance"] = provenance_json(provenance);
    io.out << j.dump(2) << "\n";
  } else if (format == "csv") {
    std::vector<std::pair<std::string, std::string>> cols;
    flatten_json(j, "", cols);
    cols.emplace_back("provenance.parameters", std::to_string(provenance.parameters.size()));
    cols.emplace_back("provenance.estimates",
                      std::to_string(provenance.count(sim::ProvenanceKind::estimate)));
    for (std::size_t i = 0; i < cols.size(); ++i)
      io.out << (i ? "," : "") << cols[i].first;
    io.out << "\n";
    for (std::size_t i = 0; i < cols.size(); ++i)
      io.out << (i ? "," : "") << cols[i].second;
    io.out << "\n";
  } else {
    print_step_report_text(io.out, report);
    if (to_target) print_to_target_text(io.out, scenario, *to_target);
    if (uncertainty) print_intervals_text(io.out, j["intervals"]);
    io.out << "\n  " << provenance_line(provenance) << "\n";
  }
  return 0;
}

}  // namespace trainsim::cli
