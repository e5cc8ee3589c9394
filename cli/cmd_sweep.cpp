// trainsim sweep [SCENARIO] --vary PATH=V1,V2,... [--vary ...] [--set PATH=VALUE]... [--jobs N]
//                [--out FILE] [--format csv|json] [--wall-time] [--uncertainty]
// Simulates the cross product of the varied values, one independent engine per row on a pool of
// threads (and across MPI ranks under mpirun), and writes the rows in cross-product order.

#include <fstream>
#include <optional>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/profiles_source.hpp"
#include "cli/run_checks.hpp"
#include "cli/scenario_source.hpp"
#include "cli/sweep_interrupt.hpp"
#include "cli/sweep_mpi.hpp"
#include "cli/sweep_rows.hpp"
#include "cli/sweep_runner.hpp"
#include "cli/target_report.hpp"
#include "models/training_step.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
namespace {

struct SweepSetup {
  std::string scenario_file;
  std::vector<std::string> sets;
  std::vector<VaryAxis> axes;
  const sim::ProfileLibrary* profiles = nullptr;
  int jobs = 1;
  bool wall_time = false;
  bool with_target = false;  // the first row's scenario names a target: to_target columns
  std::optional<double> usd_per_gpu_hour;  // --price-per-gpu-hour: to_target.cost_usd
  bool uncertainty = false;                // --uncertainty: each row's intervals, as simulate's
  RowFormat format = RowFormat::csv;

  std::vector<std::string> overrides(std::size_t row) const {
    std::vector<std::string> o = sets;
    for (std::string& v : row_overrides(axes, row))
      o.push_back(std::move(v));
    return o;
  }
  std::string describe_row(std::size_t row) const {
    std::string d;
    for (const std::string& o : row_overrides(axes, row))
      d += (d.empty() ? "" : ", ") + o;
    return "sweep row " + std::to_string(row + 1) + " of " + std::to_string(row_count(axes)) +
           " (" + d + ")";
  }
};

// Loads every row's scenario before any simulation, so a bad value (or a bad combination) fails
// at once, naming the row; the first failing row in order is reported whatever --jobs is.
void validate_rows(const SweepSetup& setup) {
  const std::atomic<bool> never{false};
  OrderedRunner runner(
      row_count(setup.axes), setup.jobs,
      [&setup](std::size_t row) {
        try {
          const models::Scenario s =
              load_scenario_source(setup.scenario_file, setup.overrides(row), *setup.profiles);
          check_run_resources(s, scenario_label(setup.scenario_file, setup.overrides(row)),
                              nullptr);
        } catch (const UsageError& e) {
          throw UsageError(setup.describe_row(row), e.what());
        } catch (const InputError& e) {
          throw InputError(setup.describe_row(row), e.what());
        }
        return std::string();
      },
      never);
  while (runner.next()) {
  }
}

std::string simulate_row(const SweepSetup& setup, std::size_t row) {
  const models::Scenario s =
      load_scenario_source(setup.scenario_file, setup.overrides(row), *setup.profiles);
  try {
    const std::vector<std::string> overrides = setup.overrides(row);
    const models::StepReport report =
        simulate_checked(s, scenario_label(setup.scenario_file, overrides));
    nlohmann::json t;
    if (setup.with_target) {
      t = to_target_json(evaluate_target(s, report, setup.usd_per_gpu_hour),
                         setup.usd_per_gpu_hour.has_value());
    }
    nlohmann::json intervals;
    if (setup.uncertainty) {
      // The same path as simulate --uncertainty, per row and sequential within it, so a row's
      // intervals do not depend on --jobs or on the MPI rank that ran it.
      intervals = run_intervals_json(setup.scenario_file, overrides, *setup.profiles, s, report);
    }
    return format_sweep_row(setup.axes, row, report, setup.wall_time, setup.format,
                            setup.with_target ? &t : nullptr,
                            setup.uncertainty ? &intervals : nullptr);
  } catch (const InputError& e) {
    throw InputError(setup.describe_row(row), e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(setup.describe_row(row) + ": " + e.what());
  }
}

class Progress {
 public:
  Progress(std::ostream& err, bool enabled, std::size_t total)
      : err_(err), enabled_(enabled), total_(total) {}
  void update(std::size_t done) {
    if (!enabled_) return;
    const std::size_t permille = total_ == 0 ? 1000 : done * 1000 / total_;
    if (permille == last_ && done != total_) return;
    last_ = permille;
    constexpr std::size_t kWidth = 40;
    const std::size_t filled = permille * kWidth / 1000;
    err_ << "\rsweep [" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] "
         << done << "/" << total_ << " rows" << std::flush;
  }
  void finish() {
    if (enabled_) err_ << "\n";
  }

 private:
  std::ostream& err_;
  bool enabled_;
  std::size_t total_;
  std::size_t last_ = static_cast<std::size_t>(-1);
};

std::string json_header(const SweepSetup& setup) {
  nlohmann::json vary = nlohmann::json::array();
  for (const auto& a : setup.axes) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& v : a.values)
      values.push_back(override_value_json(v));
    vary.push_back({{"path", a.path}, {"values", values}});
  }
  return "{\"scenario_file\": " +
         nlohmann::json(setup.scenario_file.empty()
                            ? std::string("<built-in>/examples/") + kDefaultScenario
                            : setup.scenario_file)
             .dump() +
         ", \"set\": " + nlohmann::json(setup.sets).dump() + ", \"vary\": " + vary.dump() +
         ", \"row_count\": " + std::to_string(row_count(setup.axes)) + ",\n\"rows\": [";
}

// Rank 0 (or the only process): writes rows in order, its own from its threads and the other
// ranks' as they arrive (row i belongs to rank i mod size). Returns the rows written.
std::size_t write_rows(const SweepSetup& setup, const MpiSession& mpi, OrderedRunner& local,
                       std::ostream& out, Progress& progress) {
  const std::size_t total = row_count(setup.axes);
  const auto ranks = static_cast<std::size_t>(mpi.size());
  std::size_t written = 0;
  for (std::size_t row = 0; row < total; ++row) {
    const auto owner = static_cast<int>(row % ranks);
    std::string line;
    if (owner == 0) {
      auto r = local.next();
      if (!r) break;  // interrupted
      line = std::move(*r);
    } else {
      bool error = false;
      line = mpi.receive(owner, error);
      if (error) throw std::runtime_error("MPI rank " + std::to_string(owner) + ": " + line);
    }
    if (setup.format == RowFormat::json) out << (written == 0 ? "\n" : ",\n");
    out << line;
    if (setup.format == RowFormat::csv) out << '\n';
    out.flush();  // rows already written stay intact whatever happens next
    ++written;
    progress.update(written);
  }
  return written;
}

// Other ranks: send each finished row to rank 0 in order.
void send_rows(const MpiSession& mpi, OrderedRunner& local) {
  for (;;) {
    std::optional<std::string> r;
    try {
      r = local.next();
    } catch (const std::exception& e) {
      mpi.send(0, e.what(), true);
      return;
    }
    if (!r) return;
    mpi.send(0, *r, false);
  }
}

int run(const SweepSetup& setup, const std::string& out_path, CommandIo& io,
        const MpiSession& mpi) {
  validate_rows(setup);
  const std::size_t total = row_count(setup.axes);
  const auto ranks = static_cast<std::size_t>(mpi.size());
  const auto rank = static_cast<std::size_t>(mpi.rank());
  const std::size_t mine = total > rank ? (total - rank + ranks - 1) / ranks : 0;
  InterruptGuard interrupt;
  OrderedRunner local(
      mine, setup.jobs,
      [&setup, ranks, rank](std::size_t k) { return simulate_row(setup, rank + k * ranks); },
      interrupt.flag());
  if (rank != 0) {
    send_rows(mpi, local);
    return 0;
  }
  std::ofstream file;
  if (!out_path.empty()) {
    file.open(out_path, std::ios::binary | std::ios::trunc);
    if (!file) {
      const InputError error("--out " + out_path, "cannot open the file for writing");
      if (mpi.size() > 1) {  // the other ranks are already simulating: end the job
        io.err << "trainsim: error: " << error.what() << std::endl;
        mpi.abort(2);
      }
      throw error;
    }
  }
  std::ostream& out = out_path.empty() ? io.out : file;
  if (setup.format == RowFormat::csv) {
    out << csv_line(sweep_csv_columns(setup.axes, setup.wall_time, setup.with_target,
                                      setup.usd_per_gpu_hour.has_value(), setup.uncertainty))
        << '\n';
  } else {
    out << json_header(setup);
  }
  out.flush();
  Progress progress(io.err, io.err_is_terminal, total);
  std::size_t written = 0;
  try {
    written = write_rows(setup, mpi, local, out, progress);
  } catch (const std::exception& e) {
    progress.finish();
    if (mpi.size() > 1) {
      io.err << "trainsim: runtime failure: " << e.what() << "\n";
      io.err.flush();
      mpi.abort(1);  // the other ranks may be blocked sending rows nobody will receive
    }
    throw;
  }
  progress.finish();
  const bool complete = written == total;
  if (setup.format == RowFormat::json) {
    out << (written == 0 ? "]" : "\n]") << ", \"rows_written\": " << written
        << ", \"complete\": " << (complete ? "true" : "false") << "}\n";
  }
  out.flush();
  if (!out) throw std::runtime_error("writing the sweep output failed");
  if (!complete) {
    io.err << "trainsim: sweep interrupted: " << written << " of " << total
           << " rows written, each complete\n";
    if (mpi.size() > 1) mpi.abort(130);
    return 130;
  }
  return 0;
}

}  // namespace

int run_sweep(const Args& args, CommandIo& io) {
  po::options_description options("sweep options");
  SweepSetup setup;
  std::vector<std::string> varies;
  std::vector<std::string> dirs;
  std::string format = "csv";
  std::string out_path;
  std::string jobs_text;
  std::string price_text;
  options.add_options()("scenario", po::value(&setup.scenario_file),
                        "scenario JSON file (default: the built-in demo)")(
      "vary", po::value(&varies)->required(),
      "PATH=V1,V2,... (repeatable; ranges A..B, A..B+STEP, A..BxFACTOR)")(
      "set", po::value(&setup.sets), "fixed override PATH=VALUE (repeatable)")(
      "jobs,j", po::value(&jobs_text), "threads per process (default: all cores)")(
      "out,o", po::value(&out_path), "write rows to FILE instead of stdout")(
      "format", po::value(&format), "csv | json")(
      "wall-time", po::bool_switch(&setup.wall_time),
      "include sim.wall_s (wall-clock seconds; differs from run to run)")(
      "profile-dir", po::value(&dirs), "extra folder of profile JSON files (repeatable)")(
      "price-per-gpu-hour", po::value(&price_text),
      "USD per accelerator hour: with a scenario target, to_target.cost_usd")(
      "uncertainty", po::bool_switch(&setup.uncertainty),
      "each row's 95% intervals of step time, throughput and time to target, as simulate "
      "--uncertainty gives them (intervals.*)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse_command_line("sweep",
                          "[SCENARIO.json] --vary PATH=V1,V2,... [--vary ...] [--jobs N] "
                          "[--out FILE] [--format csv|json] [--uncertainty]",
                          args, options, pos, vm, io)) {
    return 0;
  }
  if (format != "csv" && format != "json")
    throw UsageError("--format " + format, "expected csv or json");
  setup.format = format == "json" ? RowFormat::json : RowFormat::csv;
  if (!price_text.empty()) setup.usd_per_gpu_hour = parse_price_per_gpu_hour(price_text);
  const int jobs = jobs_text.empty()
                       ? 0
                       : static_cast<int>(parse_integer_option("--jobs", jobs_text, 1, kMaxJobs));
  setup.jobs = jobs > 0 ? jobs : default_jobs(launcher_local_size());
  setup.axes = parse_vary_list(varies, static_cast<std::size_t>(sim::limits::kMaxSweepRows));

  MpiSession mpi;
  std::optional<sim::ProfileLibrary> profiles;
  try {
    profiles.emplace(load_profile_library(dirs));
    setup.profiles = &*profiles;
    validate_rows(setup);
    setup.with_target =
        load_scenario_source(setup.scenario_file, setup.overrides(0), *setup.profiles)
            .target.has_value();
  } catch (const InputError& e) {
    if (!mpi.active()) throw;
    // Every rank validates the same rows and fails alike; rank 0 alone reports it, before any
    // rank exits (mpirun kills the job as soon as one rank returns non-zero).
    if (mpi.rank() == 0) io.err << "trainsim: error: " << e.what() << std::endl;
    mpi.barrier();
    return 2;
  }
  return run(setup, out_path, io, mpi);
}

}  // namespace trainsim::cli
