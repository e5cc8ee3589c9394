// trainsim plan [SCENARIO] --catalog FILE --target "20000 samples/s" | --target "24 h"
//               [--epochs E --dataset-samples D] [--max-pipeline K] [--max-tensor T]
//               [--max-microbatch B] [--no-interleave] [--jobs N] [--format text|json|csv]
// For each catalog option and node count, searches the device-mesh layouts of the scenario at
// its global batch (cli/plan_search.hpp), simulates those that fit in memory and are not
// dominated, and prints the Pareto front of cost vs time, the best-MFU layout per option and node
// count, and the cheapest layout meeting the target.

#include <cmath>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/plan_catalog.hpp"
#include "cli/plan_search.hpp"
#include "cli/profiles_source.hpp"
#include "cli/scenario_source.hpp"
#include "cli/step_report_format.hpp"
#include "cli/sweep_rows.hpp"
#include "cli/sweep_runner.hpp"
#include "cli/units_format.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
namespace {

// Samples in one epoch: 10^15 is a million times ImageNet-21k (14 M) and far beyond any corpus
// of tokens trained on today (~10^13).
constexpr std::int64_t kMaxDatasetSamples = 1'000'000'000'000'000;

std::string money(double v, const std::string& currency) {
  std::ostringstream s;
  if (v >= 1e9) {
    s << std::setprecision(4) << v << " " << currency;  // not a 20-digit column
  } else {
    s << std::fixed << std::setprecision(v < 100 ? 2 : 0) << v << " " << currency;
  }
  return s.str();
}

std::string format_count(double v) {
  if (v == std::floor(v) && v < 1e15) return std::to_string(static_cast<long long>(v));
  return format_number(v, 6);
}

nlohmann::json candidate_json(const Candidate& c, const PlanCatalog& catalog) {
  const PlanOption& o = catalog.options[c.option];
  nlohmann::json j = {{"option", o.name},
                      {"cluster", o.cluster_name},
                      {"accelerator", o.accelerator},
                      {"nodes", c.nodes},
                      {"devices", c.devices},
                      {"data_parallel", c.data},
                      {"tensor", c.tensor},
                      {"sequence_parallel", c.sequence_parallel},
                      {"pipeline", c.pipeline},
                      {"virtual_stages", c.virtual_stages},
                      {"zero", c.zero},
                      {"recompute", models::recompute_name(c.recompute)},
                      {"micro_batch", c.micro_batch},
                      {"microbatches", c.microbatches},
                      {"layout", layout_name(c)},
                      {"status", candidate_status_name(c.status)},
                      {"simulated", c.simulated()},
                      {"failure", c.failure},
                      {"mfu", c.mfu},
                      {"peak_memory_bytes", c.report.memory.peak_bytes_per_device},
                      {"memory_capacity_bytes", c.report.memory.capacity_bytes},
                      {"price_per_hour", c.price_per_hour},
                      {"samples_per_s", c.samples_per_s},
                      {"step_time_s", c.report.step_time_s},
                      {"global_batch", c.report.global_batch},
                      {"time_s", c.time_s},
                      {"to_target_steps", c.to_target_steps},
                      {"cost", c.cost},
                      {"meets_target", c.meets_target},
                      {"pareto", c.pareto},
                      {"best_mfu", c.best_mfu}};
  // Present in every row (null for rentals) so CSV columns are the same on every line.
  j["purchase_price"] = o.purchase_price_per_node
                            ? nlohmann::json(*o.purchase_price_per_node * c.nodes)
                            : nlohmann::json();
  return j;
}

std::string percent(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << 100 * v << "%";
  return s.str();
}

void print_row_header(std::ostream& os) {
  os << "  " << std::left << std::setw(22) << "option" << std::right << std::setw(6) << "nodes"
     << std::setw(8) << "devices"
     << "  " << std::left << std::setw(30) << "layout" << std::right << std::setw(7) << "MFU"
     << std::setw(12) << "samples/s" << std::setw(12) << "time"
     << " " << std::setw(15) << "cost" << std::setw(14) << "per hour"
     << "  target\n";
}

void print_row(std::ostream& os, const Candidate& c, const PlanCatalog& catalog) {
  os << "  " << std::left << std::setw(22) << catalog.options[c.option].name << std::right
     << std::setw(6) << c.nodes << std::setw(8) << c.devices << "  " << std::left << std::setw(30)
     << layout_name(c) << std::right << std::setw(7) << percent(c.mfu) << std::setw(12)
     << format_number(c.samples_per_s, 5) << std::setw(12) << format_duration(c.time_s) << " "
     << std::setw(15) << money(c.cost, catalog.currency) << std::setw(14)
     << money(c.price_per_hour, catalog.currency) << "  " << (c.meets_target ? "meets" : "-")
     << "\n";
}

void print_text(std::ostream& os, const std::vector<Candidate>& cands, const PlanCatalog& catalog,
                const PlanTarget& target, const std::vector<std::size_t>& front,
                const std::vector<std::size_t>& best_mfu, std::optional<std::size_t> best,
                const std::string& scenario, const std::string& global_batch,
                const std::string& convergence, const PlanCounts& counts) {
  std::map<CandidateStatus, std::size_t> by_status;
  std::map<std::string, std::size_t> failures;
  for (const Candidate& c : cands) {
    ++by_status[c.status];
    if (c.status == CandidateStatus::failed) ++failures[c.failure];
  }
  const std::string work = target.work_given ? format_count(target.work_samples) + " samples"
                                             : "1e6 samples (no --epochs given)";
  os << "plan for " << scenario << " from " << catalog.file << " at global batch " << global_batch
     << "\n"
     << "  target: "
     << (target.samples_per_s ? ">= " + format_number(*target.samples_per_s, 6) + " samples/s"
         : convergence.empty()
             ? "train " + work + " within " + format_duration(*target.time_s)
             : "reach the scenario's target within " + format_duration(*target.time_s))
     << "; time and cost are "
     << (convergence.empty() ? "for " + work : "to the scenario's target (" + convergence + ")")
     << "\n"
     << "  " << cands.size() << " layouts: " << by_status[CandidateStatus::simulated]
     << " simulated, " << by_status[CandidateStatus::no_fit] << " do not fit in memory, "
     << by_status[CandidateStatus::dominated] << " dominated (ZeRO-3 where a lower stage fits "
     << "alike), " << by_status[CandidateStatus::not_divisible]
     << " do not divide the devices or the global batch";
  for (const auto& [why, n] : failures)
    os << ", " << n << " not simulated (" << why << ")";
  os << "; " << counts.memory_checks << " memory checks\n";
  if (by_status[CandidateStatus::simulated] == 0) {
    os << "\nno layout of any option fits in memory";
    // The layout that came closest tells how far off the model is.
    const Candidate* closest = nullptr;
    for (const Candidate& c : cands) {
      if (c.status == CandidateStatus::no_fit &&
          (closest == nullptr || c.devices > closest->devices))
        closest = &c;
    }
    if (closest != nullptr) {
      os << " (the largest: " << catalog.options[closest->option].name << " x " << closest->nodes
         << " nodes, " << layout_name(*closest) << ": " << closest->failure << ")";
    }
    os << "\n";
    return;
  }
  os << "\nPareto front (no layout is both cheaper and faster):\n";
  print_row_header(os);
  for (const std::size_t i : front)
    print_row(os, cands[i], catalog);
  os << "\nbest MFU per option and node count:\n";
  print_row_header(os);
  for (const std::size_t i : best_mfu)
    print_row(os, cands[i], catalog);
  os << "\n";
  if (best) {
    const Candidate& c = cands[*best];
    const PlanOption& o = catalog.options[c.option];
    os << "cheapest meeting the target: " << o.name << ", " << c.nodes << " node"
       << (c.nodes == 1 ? "" : "s") << " (" << c.devices << " x " << o.accelerator << "), "
       << layout_name(c) << ": MFU " << percent(c.mfu) << ", " << format_number(c.samples_per_s, 5)
       << " samples/s, " << format_duration(c.time_s) << ", " << money(c.cost, catalog.currency);
    if (o.purchase_price_per_node) {
      os << " (amortised; purchase "
         << money(*o.purchase_price_per_node * c.nodes, catalog.currency) << ")";
    }
    os << "\n  simulate it: trainsim simulate";
    for (const std::string& set : c.cluster_overrides)
      os << " --set '" << set << "'";
    for (const std::string& set : c.layout_overrides)
      os << " --set " << set;
    os << "\n";
  } else {
    os << "no layout meets the target";
    if (!front.empty()) {
      const Candidate& c = cands[front.back()];
      os << "; the fastest is " << catalog.options[c.option].name << " x " << c.nodes << " nodes ("
         << layout_name(c) << ") at " << format_number(c.samples_per_s, 5) << " samples/s";
    }
    os << "\n";
  }
}

}  // namespace

int run_plan(const Args& args, CommandIo& io) {
  po::options_description options("plan options");
  std::string scenario_file;
  std::string catalog_path;
  std::string target_text;
  std::vector<std::string> sets;
  std::vector<std::string> dirs;
  std::string format = "text";
  std::string epochs_text;
  std::string dataset_text;
  std::string max_pipeline_text = "8";
  std::string max_tensor_text;
  std::string max_microbatch_text = "8";
  bool no_interleave = false;
  std::string jobs_text;
  std::vector<std::string> global_batch_texts;
  options.add_options()("scenario", po::value(&scenario_file),
                        "scenario JSON file (default: the built-in demo)")(
      "catalog", po::value(&catalog_path)->required(),
      "plan catalog JSON (hardware options, prices)")(
      "target", po::value(&target_text)->required(),
      "throughput ('20000 samples/s') or time to train ('24 h', with --epochs/--dataset-samples)")(
      "epochs", po::value(&epochs_text),
      "epochs of training (the work is epochs x dataset samples)")(
      "dataset-samples", po::value(&dataset_text), "samples in one epoch (an integer)")(
      "max-pipeline", po::value(&max_pipeline_text),
      "largest pipeline depth tried, a power of two (default 8; 1: no pipeline)")(
      "max-tensor", po::value(&max_tensor_text),
      "largest tensor-parallel degree tried, a power of two (default: the node's accelerators)")(
      "max-microbatch", po::value(&max_microbatch_text),
      "largest micro-batch tried in a pipeline, a power of two (default 8)")(
      "no-interleave", po::bool_switch(&no_interleave),
      "do not try the interleaved 1F1B schedule for pipelines")(
      "set", po::value(&sets), "override PATH=VALUE on the scenario (repeatable)")(
      "jobs,j", po::value(&jobs_text), "threads (default: all cores)")("format", po::value(&format),
                                                                       "text | json | csv")(
      "profile-dir", po::value(&dirs), "extra folder of profile JSON files (repeatable)")(
      "global-batches", po::value(&global_batch_texts)->composing(),
      "also search these global batches, e.g. 1024,4096 (default: the scenario's); with a "
      "scenario target, time and cost are to the target, so a larger batch is not free");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_command_line("plan",
                          "[SCENARIO.json] --catalog FILE --target '20000 samples/s'|'24 h' "
                          "[--epochs E --dataset-samples D] [--format text|json|csv]",
                          args, options, pos, vm, io)) {
    return 0;
  }
  if (format != "text" && format != "json" && format != "csv") {
    throw UsageError("--format " + format, "expected text, json or csv");
  }
  const auto power_of_two = [](const char* option, const std::string& text, std::int64_t max) {
    const auto v = static_cast<int>(parse_integer_option(option, text, 1, max));
    if ((v & (v - 1)) != 0) {
      throw UsageError(std::string(option) + " " + text,
                       "expected a power of two (1, 2, 4, ... are tried up to it)");
    }
    return v;
  };
  PlanSearchOptions search;
  search.max_pipeline =
      power_of_two("--max-pipeline", max_pipeline_text, sim::limits::kMaxAccelerators);
  if (vm.count("max-tensor") != 0) {
    search.max_tensor =
        power_of_two("--max-tensor", max_tensor_text, sim::limits::kMaxAccelerators);
  }
  search.max_microbatch =
      power_of_two("--max-microbatch", max_microbatch_text, sim::limits::kMaxBatchPerReplica);
  search.interleave = !no_interleave;
  const int jobs = jobs_text.empty()
                       ? 0
                       : static_cast<int>(parse_integer_option("--jobs", jobs_text, 1, kMaxJobs));
  std::optional<double> e;
  std::optional<double> d;
  // The work (epochs x samples) stays far inside double's range, so times and costs are finite.
  if (vm.count("epochs") != 0) e = parse_number_option("--epochs", epochs_text, 0, 1e6, true);
  if (vm.count("dataset-samples") != 0) {
    d = static_cast<double>(
        parse_integer_option("--dataset-samples", dataset_text, 1, kMaxDatasetSamples));
  }
  const PlanTarget target = parse_plan_target(target_text, e, d);
  const sim::ProfileLibrary profiles = load_profile_library(dirs);
  const PlanCatalog catalog = load_plan_catalog(catalog_path, profiles);
  // The scenario itself must be valid before anything is enumerated.
  const models::Scenario base = load_scenario_source(scenario_file, sets, profiles);

  const std::int64_t global_batch = plan_global_batch(base, scenario_label(scenario_file, sets));
  std::vector<std::int64_t> global_batches;
  for (const std::string& v : global_batch_texts) {
    std::size_t start = 0;
    while (start <= v.size()) {
      const auto comma = v.find(',', start);
      const std::string item =
          v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!item.empty()) {
        global_batches.push_back(
            parse_integer_option("--global-batches", item, 1, sim::limits::kMaxGlobalBatch));
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  const bool vary_batch = !global_batches.empty();
  if (!vary_batch) global_batches.push_back(global_batch);
  std::vector<Candidate> cands;
  PlanCounts counts;
  for (const std::int64_t g : global_batches) {
    std::vector<std::string> sets_g = sets;
    if (vary_batch) sets_g.push_back("global_batch=" + std::to_string(g));
    const models::Scenario base_g = [&] {
      if (!vary_batch) return load_scenario_source(scenario_file, sets_g, profiles);
      try {
        return load_scenario_source(scenario_file, sets_g, profiles);
      } catch (const InputError& e) {
        throw UsageError("--global-batches " + std::to_string(g), e.what());
      }
    }();
    std::vector<Candidate> cands_g = enumerate_candidates(catalog, search, base_g);
    // The printed `simulate --set ...` line of a candidate reproduces its global batch too.
    if (vary_batch) {
      for (Candidate& c : cands_g)
        c.cluster_overrides.push_back("global_batch=" + std::to_string(g));
    }
    if (static_cast<std::int64_t>(cands.size() + cands_g.size()) > sim::limits::kMaxSweepRows) {
      throw InputError(catalog_path, "the catalog gives " +
                                         std::to_string(cands.size() + cands_g.size()) +
                                         " configurations to simulate, above the limit of " +
                                         std::to_string(sim::limits::kMaxSweepRows));
    }
    const auto load = [&](const Candidate& c) {
      std::vector<std::string> all = c.cluster_overrides;
      all.insert(all.end(), sets_g.begin(), sets_g.end());
      all.insert(all.end(), c.layout_overrides.begin(), c.layout_overrides.end());
      LoadedCandidate loaded{load_scenario_source(scenario_file, all, profiles),
                             scenario_label(scenario_file, all)};
      return loaded;
    };
    // A plan may simulate many large clusters: on a terminal, show how far it got.
    const PlanProgress progress = [&io](std::size_t done, std::size_t total) {
      io.err << "\rplan: " << done << "/" << total << " layouts evaluated"
             << (done == total ? "\n" : "") << std::flush;
    };
    const PlanCounts c =
        evaluate_candidates(cands_g, catalog, target, base_g, jobs > 0 ? jobs : default_jobs(1),
                            load, io.err_is_terminal ? progress : PlanProgress());
    counts.memory_checks += c.memory_checks;
    counts.simulated += c.simulated;
    for (Candidate& x : cands_g)
      cands.push_back(std::move(x));
  }
  const std::vector<std::size_t> front = mark_pareto_front(cands);
  const std::vector<std::size_t> best_mfu = mark_best_mfu(cands);
  const std::optional<std::size_t> best = cheapest_meeting_target(cands);

  if (format == "json") {
    nlohmann::json j;
    j["scenario"] = base.name;
    j["catalog"] = catalog.file;
    j["currency"] = catalog.currency;
    j["global_batch"] = global_batch;
    j["memory_checks"] = counts.memory_checks;
    j["simulated"] = counts.simulated;
    j["target"] = {{"text", target.text},
                   {"samples_per_s", target.samples_per_s ? nlohmann::json(*target.samples_per_s)
                                                          : nlohmann::json()},
                   {"time_s", target.time_s ? nlohmann::json(*target.time_s) : nlohmann::json()},
                   {"work_samples", target.work_samples}};
    j["candidates"] = nlohmann::json::array();
    for (const Candidate& c : cands)
      j["candidates"].push_back(candidate_json(c, catalog));
    j["pareto_front"] = front;
    j["best_mfu"] = best_mfu;
    j["cheapest_meeting_target"] = best ? nlohmann::json(*best) : nlohmann::json();
    io.out << j.dump(2) << "\n";
  } else if (format == "csv") {
    bool header = true;
    for (const Candidate& c : cands) {
      nlohmann::json j = candidate_json(c, catalog);
      j["cheapest_meeting_target"] = best && &cands[*best] == &c;
      std::vector<std::pair<std::string, std::string>> cols;
      flatten_json(j, "", cols);
      std::vector<std::string> fields;
      if (header) {
        for (const auto& col : cols)
          fields.push_back(col.first);
        io.out << csv_line(fields) << "\n";
        fields.clear();
        header = false;
      }
      for (const auto& col : cols)
        fields.push_back(col.second);
      io.out << csv_line(fields) << "\n";
    }
  } else {
    std::string batches;
    for (const std::int64_t g : global_batches)
      batches += (batches.empty() ? "" : ", ") + std::to_string(g);
    std::string convergence;
    if (base.target) {
      convergence = base.target->workload.empty()
                        ? "S_min " + format_number(base.target->params.steps_min, 6) +
                              ", B_noise " + format_number(base.target->params.batch_noise, 6)
                        : base.target->workload;
    }
    print_text(io.out, cands, catalog, target, front, best_mfu, best, base.name, batches,
               convergence, counts);
  }
  return 0;
}

}  // namespace trainsim::cli
