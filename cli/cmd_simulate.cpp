// trainsim simulate [SCENARIO] [--set PATH=VALUE]... [--format text|json|csv]

#include <iomanip>
#include <ostream>
#include <span>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/profiles_source.hpp"
#include "cli/units_format.hpp"
#include "models/training_step.hpp"
#include "sim/config/json_source.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::examples {
std::span<const sim::EmbeddedFile> embedded_files();
}

namespace trainsim::cli {

namespace {

constexpr const char* kDefaultScenario = "resnet50_dgx_a100.json";

nlohmann::json report_json(const models::StepReport& r) {
  const auto& b = r.breakdown;
  const auto& m = r.memory;
  return {
      {"scenario", r.scenario},
      {"model", r.model},
      {"cluster", r.cluster},
      {"accelerator", r.accelerator},
      {"precision", r.precision},
      {"devices", r.devices},
      {"data_parallel", r.data_parallel},
      {"global_batch", r.global_batch},
      {"step_time_s", r.step_time_s},
      {"throughput_samples_per_s", r.throughput_samples_per_s},
      {"breakdown_s",
       {{"compute", b.compute_s},
        {"recompute", b.recompute_s},
        {"exposed_comm", b.exposed_comm_s},
        {"input_stall", b.input_stall_s},
        {"bubble", b.bubble_s},
        {"optimizer", b.optimizer_s}}},
      {"comm_time_s", r.comm_time_s},
      {"gradient_bytes", r.gradient_bytes},
      {"buckets", r.buckets},
      {"memory",
       {{"peak_bytes_per_device", m.peak_bytes_per_device},
        {"capacity_bytes", m.capacity_bytes},
        {"fits", m.fits},
        {"max_batch_that_fits", m.max_batch_that_fits},
        {"weights_bytes", m.weights_bytes},
        {"gradients_bytes", m.gradients_bytes},
        {"optimizer_state_bytes", m.optimizer_state_bytes},
        {"activations_bytes", m.activations_bytes},
        {"workspace_bytes", m.workspace_bytes}}},
      {"fresh_sample_fraction", r.fresh_sample_fraction},
      {"upstream_batch_s", r.upstream_batch_s},
      {"sim", {{"events", r.events}, {"wall_s", r.wall_s}}},
  };
}

// Flattens nested objects into dotted column names, in a fixed order.
void flatten(const nlohmann::json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& [k, v] : j.items()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object()) {
      flatten(v, key, out);
    } else {
      out.emplace_back(key, v.is_string() ? v.get<std::string>() : v.dump());
    }
  }
}

void print_text(std::ostream& os, const models::StepReport& r) {
  const auto& b = r.breakdown;
  const auto pct = [&](double v) { return format_number(100 * v / r.step_time_s, 3) + "%"; };
  os << "scenario " << r.scenario << ": " << r.model << " on " << r.cluster << " (" << r.devices << " x "
     << r.accelerator << ", " << r.precision << ")\n\n"
     << "  step time            " << format_seconds(r.step_time_s) << "\n"
     << "  throughput           " << format_number(r.throughput_samples_per_s, 5) << " samples/s  (global batch "
     << r.global_batch << ")\n\n"
     << "  breakdown per step (steady state):\n"
     << "    compute            " << std::setw(12) << format_seconds(b.compute_s) << "  " << pct(b.compute_s) << "\n"
     << "    recompute          " << std::setw(12) << format_seconds(b.recompute_s) << "  " << pct(b.recompute_s) << "\n"
     << "    exposed comm       " << std::setw(12) << format_seconds(b.exposed_comm_s) << "  " << pct(b.exposed_comm_s)
     << "  (of " << format_seconds(r.comm_time_s) << " communication in " << r.buckets << " buckets, "
     << format_bytes(r.gradient_bytes) << " of gradients)\n"
     << "    input stall        " << std::setw(12) << format_seconds(b.input_stall_s) << "  " << pct(b.input_stall_s)
     << "\n"
     << "    pipeline bubble    " << std::setw(12) << format_seconds(b.bubble_s) << "  " << pct(b.bubble_s) << "\n"
     << "    optimizer          " << std::setw(12) << format_seconds(b.optimizer_s) << "  " << pct(b.optimizer_s)
     << "\n\n";
  const auto& m = r.memory;
  os << "  memory per device    " << format_bytes(m.peak_bytes_per_device) << " of " << format_bytes(m.capacity_bytes)
     << (m.fits ? " (fits)" : " (DOES NOT FIT)") << "; largest batch that fits " << m.max_batch_that_fits << "\n"
     << "    weights " << format_bytes(m.weights_bytes) << ", gradients " << format_bytes(m.gradients_bytes)
     << ", optimizer state " << format_bytes(m.optimizer_state_bytes) << ", activations "
     << format_bytes(m.activations_bytes) << "\n";
  if (r.upstream_batch_s > 0) {
    os << "  input pipeline       " << format_seconds(r.upstream_batch_s) << " per fresh batch upstream; fresh samples "
       << format_number(100 * r.fresh_sample_fraction, 3) << "%\n";
  }
  os << "  simulation           " << r.events << " events in " << format_seconds(r.wall_s) << "\n";
}

}  // namespace

int run_simulate(const Args& args, CommandIo& io) {
  po::options_description options("simulate options");
  std::string scenario_file;
  std::vector<std::string> sets;
  std::vector<std::string> dirs;
  std::string format = "text";
  options.add_options()("scenario", po::value(&scenario_file), "scenario JSON file (default: the built-in demo)")(
      "set", po::value(&sets), "override PATH=VALUE (repeatable), e.g. --set parallelism.data=4")(
      "format", po::value(&format), "text | json | csv")(
      "profile-dir", po::value(&dirs), "extra folder of profile JSON files (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_command_line("simulate", "[SCENARIO.json] [--set PATH=VALUE]... [--format text|json|csv]", args, options,
                          pos, vm, io)) {
    return 0;
  }
  if (format != "text" && format != "json" && format != "csv") {
    throw UsageError("--format " + format, "expected text, json or csv");
  }
  const sim::ProfileLibrary profiles = load_profile_library(dirs);
  nlohmann::json doc;
  std::string label = scenario_file;
  if (scenario_file.empty()) {
    label = std::string("<built-in>/examples/") + kDefaultScenario;
    for (const auto& f : examples::embedded_files()) {
      if (f.path == kDefaultScenario) doc = sim::parse_json_text(std::string(f.content), label);
    }
  } else {
    doc = sim::load_json_file(scenario_file);
  }
  const models::Scenario scenario = models::load_scenario(std::move(doc), label, sets, profiles);
  const models::StepReport report = models::simulate_training(scenario);
  if (format == "json") {
    io.out << report_json(report).dump(2) << "\n";
  } else if (format == "csv") {
    std::vector<std::pair<std::string, std::string>> cols;
    flatten(report_json(report), "", cols);
    for (std::size_t i = 0; i < cols.size(); ++i) io.out << (i ? "," : "") << cols[i].first;
    io.out << "\n";
    for (std::size_t i = 0; i < cols.size(); ++i) io.out << (i ? "," : "") << cols[i].second;
    io.out << "\n";
  } else {
    print_text(io.out, report);
  }
  return 0;
}

}  // namespace trainsim::cli
