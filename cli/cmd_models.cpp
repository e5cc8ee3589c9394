// `trainsim models list` and `trainsim models show NAME [--set KEY=VALUE]... [--format text|json]`.
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/units_format.hpp"
#include "models/scenario.hpp"
#include "models/zoo/zoo.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

namespace {

namespace zoo = trainsim::models;

constexpr double kMega = 1e6;
constexpr double kGiga = 1e9;

std::string format_defaults(const std::map<std::string, double>& values) {
  std::ostringstream os;
  bool first = true;
  for (const auto& [k, v] : values) {
    os << (first ? "" : " ") << k << "=" << v;
    first = false;
  }
  return os.str();
}

// Parses one `--set KEY=VALUE`; the value must be a number (the zoo checks the rest).
std::pair<std::string, double> parse_setting(const std::string& setting) {
  const auto eq = setting.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--set " + setting, "expected KEY=VALUE, e.g. --set resolution=160");
  }
  const std::string key = setting.substr(0, eq);
  const std::string text = setting.substr(eq + 1);
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(value)) {
    throw InputError("--set " + key, "value '" + text + "' is not a number");
  }
  return {key, value};
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::ostringstream os;
  for (std::size_t i = 0; i < shape.size(); ++i)
    os << (i == 0 ? "" : "x") << shape[i];
  return os.str();
}

std::string fixed(double v, int precision) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << v;
  return os.str();
}

int list_models(CommandIo& io) {
  const auto catalog = zoo::zoo_catalog();
  std::size_t width = 0;
  for (const auto& m : catalog)
    width = std::max(width, m.name.size());
  for (const auto& m : catalog) {
    io.out << std::left << std::setw(static_cast<int>(width + 2)) << m.name << m.description << "\n"
           << std::string(width + 2, ' ') << "defaults: " << format_defaults(m.defaults) << "\n";
  }
  return 0;
}

nlohmann::json to_json(const zoo::ZooModel& m) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : m.layers) {
    layers.push_back({{"name", l.name},
                      {"op", zoo::op_class_name(l.op)},
                      {"output_shape", l.output_shape},
                      {"input_elements", l.input_elements},
                      {"output_elements", l.output_elements},
                      {"params", l.params},
                      {"fwd_flops", l.fwd_flops},
                      {"fwd_macs", l.fwd_macs},
                      {"bwd_input_flops", l.bwd_input_flops},
                      {"bwd_weight_flops", l.bwd_weight_flops},
                      {"saved_elements", l.saved_elements},
                      {"saved_mask_bytes", l.saved_mask_bytes}});
  }
  return {{"name", m.name},
          {"description", m.description},
          {"hyperparameters", m.hyperparameters},
          {"input",
           {{"shape", m.input_shape},
            {"dtype", zoo::input_dtype_name(m.input_dtype)},
            {"bytes_per_sample", m.input_bytes_per_sample()}}},
          {"layers", layers},
          {"totals",
           {{"layers", m.layers.size()},
            {"params", m.params()},
            {"fwd_gflops", m.fwd_flops() / kGiga},
            {"fwd_gmacs", m.fwd_macs() / kGiga},
            {"bwd_gflops", m.bwd_flops() / kGiga},
            {"train_gflops", m.train_flops() / kGiga},
            {"activation_mb_fp32", m.saved_bytes(4) / kMega},
            {"activation_mb_fp16", m.saved_bytes(2) / kMega}}}};
}

void print_text(const zoo::ZooModel& m, std::ostream& out) {
  out << m.name << ": " << m.description << "\n"
      << "hyper-parameters: " << format_defaults(m.hyperparameters) << "\n"
      << "input per sample: " << shape_text(m.input_shape) << " "
      << zoo::input_dtype_name(m.input_dtype) << " (" << m.input_bytes_per_sample()
      << " bytes)\n\n";
  std::size_t name_width = 5;
  for (const auto& l : m.layers)
    name_width = std::max(name_width, l.name.size());
  const auto w = [](std::size_t n) { return std::setw(static_cast<int>(n)); };
  out << std::left << w(name_width + 2) << "layer" << w(16) << "op" << std::right << w(16)
      << "output" << w(14) << "params" << w(12) << "fwd GFLOP" << w(12) << "bwd GFLOP" << w(12)
      << "saved MB"
      << "\n";
  for (const auto& l : m.layers) {
    out << std::left << w(name_width + 2) << l.name << w(16) << zoo::op_class_name(l.op)
        << std::right << w(16) << shape_text(l.output_shape) << w(14) << l.params << w(12)
        << fixed(l.fwd_flops / kGiga, 4) << w(12) << fixed(l.bwd_flops() / kGiga, 4) << w(12)
        << fixed(l.saved_bytes(4) / kMega, 3) << "\n";
  }
  out << "\n(per sample; saved MB at fp32 activations; a multiply-add counts as 2 FLOPs)\n"
      << "layers:                    " << m.layers.size() << "\n"
      << "parameters:                " << m.params() << " ("
      << fixed(static_cast<double>(m.params()) / kMega, 2) << " M)\n"
      << "forward GFLOPs/sample:     " << fixed(m.fwd_flops() / kGiga, 4)
      << " (multiply-adds: " << fixed(m.fwd_macs() / kGiga, 4) << " GMACs)\n"
      << "training GFLOPs/sample:    " << fixed(m.train_flops() / kGiga, 4)
      << " (forward + backward)\n"
      << "activation MB/sample fp32: " << fixed(m.saved_bytes(4) / kMega, 2) << "\n"
      << "activation MB/sample fp16: " << fixed(m.saved_bytes(2) / kMega, 2) << "\n";
}

}  // namespace

int run_models(const Args& args, CommandIo& io) {
  po::options_description options("options");
  std::vector<std::string> settings;
  std::string format = "text";
  options.add_options()("action", po::value<std::string>(), "list | show")(
      "name", po::value<std::string>(), "model name (see 'trainsim models list')")(
      "set", po::value<std::vector<std::string>>(&settings)->composing(),
      "KEY=VALUE: override a hyper-parameter")(
      "format", po::value<std::string>(&format)->default_value("text"), "text | json");
  po::positional_options_description positional;
  positional.add("action", 1).add("name", 1);
  po::variables_map vm;
  const std::string synopsis = "list | show NAME [--set KEY=VALUE]... [--format text|json]";
  if (!parse_command_line("models", synopsis, args, options, positional, vm, io)) return 0;
  if (vm.count("action") == 0)
    throw UsageError("trainsim models", "expected 'list' or 'show NAME'");
  const std::string action = vm["action"].as<std::string>();
  if (format != "text" && format != "json") {
    throw UsageError("--format", "'" + format + "' is not one of text, json");
  }
  if (action == "list") {
    if (vm.count("name") != 0) throw UsageError("trainsim models list", "takes no model name");
    return list_models(io);
  }
  if (action != "show")
    throw UsageError("trainsim models", "unknown action '" + action + "' (expected list or show)");
  if (vm.count("name") == 0) throw UsageError("trainsim models show", "expected a model name");
  std::map<std::string, double> overrides;
  for (const auto& s : settings) {
    const auto [key, value] = parse_setting(s);
    overrides[key] = value;
  }
  const auto resolution = overrides.find("resolution");
  const auto model = zoo::build_scenario_model(
      vm["name"].as<std::string>(), overrides, "--set",
      resolution == overrides.end() ? "--set"
                                    : "--set resolution=" + format_number(resolution->second, 17));
  if (format == "json") {
    io.out << to_json(model).dump(2) << "\n";
  } else {
    print_text(model, io.out);
  }
  return 0;
}

}  // namespace trainsim::cli
