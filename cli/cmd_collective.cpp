// trainsim collective --cluster NAME [--set PATH=VALUE]... [--op OP] [--algorithm ALG]
//                     [--protocol LL|LL128|Simple] --bytes SIZE [--density R] [--sweep MIN:MAX]
//                     [--format text|json]

#include <cmath>
#include <cstdio>
#include <memory>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/profiles_source.hpp"
#include "cli/units_format.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/config/json_reader.hpp"
#include "sim/config/json_source.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/units.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

namespace {

namespace coll = sim::collectives;

// "64 MiB", "1GB", or a plain number of bytes.
double parse_size(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  bool plain = false;
  try {
    v = std::stod(text, &used);
    plain = used == text.size();
  } catch (const std::exception&) {
    plain = false;
  }
  if (!plain) {
    const auto q = sim::parse_quantity(text, sim::Dimension::bytes);
    if (!q)
      throw UsageError(option + " " + text, "expected a size such as 1048576, 64 MiB or 1 GB");
    v = *q;
  }
  if (!(v > 0) || !std::isfinite(v))
    throw UsageError(option + " " + text, "expected a positive size");
  return v;
}

sim::ClusterSpec load_cluster(const std::string& name, const std::vector<std::string>& sets,
                              const sim::ProfileLibrary& profiles) {
  auto source = std::make_shared<sim::JsonSource>();
  source->file = "--cluster " + name;
  nlohmann::json doc{{"cluster", name}};
  const sim::StringExpander expand = [&profiles](const std::string& path, nlohmann::json& node,
                                                 sim::JsonSource& src) {
    return profiles.expand_cluster(path, node, src);
  };
  for (const std::string& s : sets) {
    if (s.rfind("cluster.", 0) != 0)
      throw UsageError("--set " + s, "collective overrides start with 'cluster.'");
    sim::apply_override(doc, s, *source, expand);
  }
  if (doc["cluster"].is_string()) return profiles.cluster(name, "--cluster");
  sim::JsonReader root(doc, source);
  sim::JsonReader c = root.object("cluster");
  return profiles.cluster_from(c);
}

nlohmann::json result_json(const coll::CollectiveSpec& spec, const coll::CollectiveResult& r) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : r.link_bytes)
    links.push_back({{"name", l.name}, {"bytes", l.bytes}});
  nlohmann::json j{{"op", coll::op_name(spec.op)},
                   {"algorithm", coll::algorithm_name(spec.algorithm)},
                   {"bytes", spec.bytes},
                   {"ranks", r.ranks},
                   {"time_s", r.time_s},
                   {"algbw_GBps", r.algbw_bytes_per_s / 1e9},
                   {"busbw_GBps", r.busbw_bytes_per_s / 1e9},
                   {"events", r.events},
                   {"wall_s", r.wall_s},
                   {"model", r.aggregated ? "aggregated" : "exact"},
                   {"algorithm_run", coll::algorithm_name(r.algorithm)},
                   {"protocol", r.protocol},
                   {"messages", r.flows},
                   {"phases", r.phases},
                   {"chunks", r.chunks},
                   {"channels", r.channels},
                   {"links_used", r.links_used},
                   {"link_bytes", links}};
  if (spec.algorithm == coll::Algorithm::topk || spec.algorithm == coll::Algorithm::gtopk) {
    j["density"] = spec.density;
    j["k"] = r.k;
  }
  return j;
}

void print_text(std::ostream& os, const std::string& cluster, const coll::CollectiveSpec& spec,
                const coll::CollectiveResult& r) {
  os << coll::op_name(spec.op) << " by " << coll::algorithm_name(spec.algorithm) << " on "
     << cluster << ": " << r.ranks << " ranks, " << format_bytes(spec.bytes) << " per rank ("
     << sim::dtype_name(spec.dtype) << ")\n";
  if (spec.algorithm == coll::Algorithm::automatic || !r.protocol.empty()) {
    os << "  ran          " << coll::algorithm_name(r.algorithm)
       << (r.protocol.empty() ? "" : " / " + r.protocol) << "\n";
  }
  if (r.k > 0)
    os << "  k            " << r.k << " elements per rank (density " << spec.density << ")\n";
  os << "  time         " << format_seconds(r.time_s) << "\n"
     << "  algbw        " << format_number(r.algbw_bytes_per_s / 1e9) << " GB/s\n"
     << "  busbw        " << format_number(r.busbw_bytes_per_s / 1e9) << " GB/s\n"
     << "  model        " << (r.aggregated ? "phase-aggregated" : "message-level (exact)") << ", "
     << r.flows << " messages in " << r.phases << " phases, " << r.chunks << " chunk(s), "
     << r.channels << " channel(s)\n"
     << "  events       " << r.events << " (" << format_seconds(r.wall_s) << " wall)\n"
     << "  busiest links (" << r.links_used << " used):\n";
  for (std::size_t i = 0; i < r.link_bytes.size() && i < 5; ++i) {
    os << "    " << r.link_bytes[i].name << "  " << format_bytes(r.link_bytes[i].bytes) << "\n";
  }
}

}  // namespace

int run_collective(const Args& args, CommandIo& io) {
  po::options_description options("collective options");
  std::string cluster_name, op = "allreduce", algorithm = "ring", bytes_text, sweep,
                            format = "text", dtype = "fp32", protocol;
  std::vector<std::string> sets, dirs;
  double density = 0.001;
  int ranks = 0, chunks = 0, servers = 1;
  options.add_options()("cluster", po::value(&cluster_name), "cluster profile name")(
      "set", po::value(&sets),
      "override cluster.PATH=VALUE (repeatable), e.g. --set cluster.nodes=64")(
      "op", po::value(&op), "allreduce | allgather | reduce_scatter | broadcast | alltoall")(
      "algorithm", po::value(&algorithm),
      "auto | ring | tree | double_binary_tree | halving_doubling | hierarchical | nvls | collnet "
      "| "
      "parameter_server | topk | gtopk (default ring)")(
      "protocol", po::value(&protocol),
      "LL | LL128 | Simple (default: the fastest, as NCCL's tuner picks)")(
      "bytes", po::value(&bytes_text), "payload per rank, e.g. 64 MiB")(
      "sweep", po::value(&sweep), "MIN:MAX sizes, doubling (nccl-tests-like table)")(
      "density", po::value(&density), "topk/gtopk: fraction of gradients sent (default 0.001)")(
      "ranks", po::value(&ranks), "use the first N accelerators (default: all)")(
      "dtype", po::value(&dtype), "fp32 | fp16 | bf16 (element size and reduction kernels)")(
      "chunks", po::value(&chunks), "pipeline chunks (default: automatic)")(
      "servers", po::value(&servers), "parameter_server: number of server hosts (default 1)")(
      "exact", "force the message-level run (no phase aggregation)")("format", po::value(&format),
                                                                     "text | json")(
      "profile-dir", po::value(&dirs), "extra folder of profile JSON files (repeatable)");
  po::positional_options_description pos;
  po::variables_map vm;
  if (!parse_command_line("collective",
                          "--cluster NAME [--op OP] [--algorithm ALG] (--bytes SIZE | --sweep "
                          "MIN:MAX) [--density R] "
                          "[--format text|json]",
                          args, options, pos, vm, io)) {
    return 0;
  }
  // Hostile-input checks (README "Limits"): explicit counts are positive and bounded, --density
  // applies to the sparsified algorithms only, and sizes are whole elements of --dtype.
  if (vm.count("ranks") != 0 && ranks < 1)
    throw UsageError("--ranks " + std::to_string(ranks), "expected at least 1 rank");
  if (vm.count("chunks") != 0 && (chunks < 1 || chunks > sim::limits::kMaxChunks)) {
    throw UsageError("--chunks " + std::to_string(chunks),
                     "expected 1 to " + std::to_string(sim::limits::kMaxChunks) + " chunks");
  }
  if (vm.count("density") != 0 && algorithm != "topk" && algorithm != "gtopk") {
    throw UsageError("--density " + format_number(density, 6),
                     "applies only to --algorithm topk or gtopk, not " + algorithm);
  }
  const auto whole_elements = [&dtype, &chunks](const std::string& option, const std::string& text,
                                                double bytes) {
    const double element = dtype == "fp32" ? 4 : 2;
    if (bytes > sim::limits::kMaxCollectiveBytes) {
      throw UsageError(option + " " + text, "above the limit of 1 TiB per rank");
    }
    if (std::fmod(bytes, element) != 0) {
      throw UsageError(option + " " + text, "is not a whole number of " + dtype + " elements (" +
                                                format_number(element) + " bytes each)");
    }
    if (chunks > bytes / element) {
      throw UsageError("--chunks " + std::to_string(chunks),
                       "more chunks than the " + format_number(bytes / element, 15) + " " + dtype +
                           " elements of " + option + " " + text);
    }
    return bytes;
  };
  if (cluster_name.empty()) throw UsageError("trainsim collective", "--cluster NAME is required");
  if (format != "text" && format != "json")
    throw UsageError("--format " + format, "expected text or json");
  if (bytes_text.empty() == sweep.empty())
    throw UsageError("trainsim collective", "give exactly one of --bytes and --sweep");
  coll::CollectiveSpec spec;
  spec.op = coll::parse_op(op, "--op " + op);
  spec.algorithm = coll::parse_algorithm(algorithm, "--algorithm " + algorithm);
  if (!protocol.empty()) spec.protocol = coll::parse_protocol(protocol, "--protocol " + protocol);
  if (!(density > 0 && density <= 1)) {
    std::ostringstream d;
    d << density;
    throw UsageError("--density " + d.str(), "expected a fraction in (0, 1]");
  }
  spec.density = density;
  if (dtype == "fp32") {
    spec.dtype = sim::Dtype::fp32;
  } else if (dtype == "fp16") {
    spec.dtype = sim::Dtype::fp16;
  } else if (dtype == "bf16") {
    spec.dtype = sim::Dtype::bf16;
  } else {
    throw UsageError("--dtype " + dtype, "expected fp32, fp16 or bf16");
  }
  if (ranks < 0) throw UsageError("--ranks " + std::to_string(ranks), "expected a positive count");
  if (chunks < 0)
    throw UsageError("--chunks " + std::to_string(chunks), "expected a positive count");
  if (servers < 1)
    throw UsageError("--servers " + std::to_string(servers), "expected a positive count");
  spec.ranks = ranks;
  spec.chunks = chunks;
  spec.servers = servers;
  spec.exact = vm.count("exact") > 0;

  const sim::ProfileLibrary profiles = load_profile_library(dirs);
  const sim::ClusterSpec cluster = load_cluster(cluster_name, sets, profiles);
  // A result must be a time the engine resolved: 0 s would print 0 (or infinite) bandwidths.
  const auto resolved = [&cluster](const coll::CollectiveResult& r, double bytes) {
    // (One rank has nothing to exchange: 0 s is its true time.)
    if ((r.ranks > 1 && !(r.time_s > 0)) || !std::isfinite(r.busbw_bytes_per_s) ||
        !std::isfinite(r.time_s)) {
      throw InputError("--cluster " + cluster.name,
                       "the collective of " + format_bytes(bytes) + " takes " +
                           format_seconds(r.time_s) +
                           ": too fast for the engine's 1 ps resolution (check the links' "
                           "latency and bandwidth and the accelerator's kernel launch overhead)");
    }
    return r;
  };
  {  // README "Limits": a message-level run grows as ranks^2
    const std::int64_t r = ranks > 0 ? ranks : cluster.total_accelerators();
    if (vm.count("exact") != 0 && r > sim::limits::kMaxMessageLevelRanks) {
      throw UsageError("--cluster " + cluster.name,
                       "a message-level collective over " + std::to_string(r) +
                           " ranks is above the limit of " +
                           std::to_string(sim::limits::kMaxMessageLevelRanks) + " (drop --exact)" +
                           "; use --ranks N to run fewer");
    }
  }
  if (chunks > 0) {  // README "Limits": the run's size grows with chunks x ranks
    const std::int64_t r = ranks > 0 ? ranks : cluster.total_accelerators();
    if (chunks * r > sim::limits::kMaxChunksTimesRanks) {
      throw UsageError("--chunks " + std::to_string(chunks),
                       std::to_string(chunks) + " chunks x " + std::to_string(r) +
                           " ranks is above the limit of " +
                           std::to_string(sim::limits::kMaxChunksTimesRanks));
    }
  }

  if (!bytes_text.empty()) {
    spec.bytes = whole_elements("--bytes", bytes_text, parse_size("--bytes", bytes_text));
    const coll::CollectiveResult r = resolved(coll::run_collective(cluster, spec), spec.bytes);
    if (format == "json") {
      io.out << result_json(spec, r).dump(2) << "\n";
    } else {
      print_text(io.out, cluster.name, spec, r);
    }
    return 0;
  }
  const std::size_t colon = sweep.find(':');
  if (colon == std::string::npos)
    throw UsageError("--sweep " + sweep, "expected MIN:MAX, e.g. 8:1GiB");
  const double lo = whole_elements("--sweep", sweep, parse_size("--sweep", sweep.substr(0, colon)));
  const double hi =
      whole_elements("--sweep", sweep, parse_size("--sweep", sweep.substr(colon + 1)));
  if (hi < lo) throw UsageError("--sweep " + sweep, "MAX is below MIN");
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream text;
  char line[160];
  std::snprintf(line, sizeof line, "# %s by %s on %s (%s)\n", coll::op_name(spec.op),
                coll::algorithm_name(spec.algorithm), cluster.name.c_str(),
                sim::dtype_name(spec.dtype));
  text << line;
  std::snprintf(line, sizeof line, "#%14s %13s %6s %12s %12s %12s  %s\n", "size(B)", "count",
                "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algorithm/protocol");
  text << line;
  int nranks = 0;
  for (double b = lo; b <= hi * (1 + 1e-12); b *= 2) {
    spec.bytes = b;
    const coll::CollectiveResult r = resolved(coll::run_collective(cluster, spec), b);
    nranks = r.ranks;
    rows.push_back(result_json(spec, r));
    const std::string how = std::string(coll::algorithm_name(r.algorithm)) +
                            (r.protocol.empty() ? "" : "/" + r.protocol);
    std::snprintf(line, sizeof line, "%15.0f %13.0f %6s %12.2f %12.2f %12.2f  %s\n", b,
                  std::floor(b / sim::dtype_bytes(spec.dtype)), sim::dtype_name(spec.dtype),
                  r.time_s * 1e6, r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9,
                  how.c_str());
    text << line;
  }
  if (format == "json") {
    io.out << nlohmann::json{{"cluster", cluster.name}, {"ranks", nranks}, {"rows", rows}}.dump(2)
           << "\n";
  } else {
    io.out << "# " << nranks << " ranks\n" << text.str();
  }
  return 0;
}

}  // namespace trainsim::cli
