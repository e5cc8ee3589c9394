#include "cli/options.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <ostream>

#include "cli/units_format.hpp"
#include "fit/solver_logging.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

bool parse_command_line(const std::string& command, const std::string& synopsis, const Args& args,
                        po::options_description& options,
                        const po::positional_options_description& positional, po::variables_map& vm,
                        CommandIo& io) {
  options.add_options()("help,h", "show this help")(
      "verbose", "show the solver libraries' own log lines (Ceres, glog) on stderr");
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    if (vm.count("help") != 0) {
      io.out << "usage: trainsim " << command << " " << synopsis << "\n\n" << options << "\n";
      return false;
    }
    po::notify(vm);
    if (vm.count("verbose") != 0) fit::set_solver_logging(true);
  } catch (const po::error& e) {
    throw UsageError("trainsim " + command,
                     std::string(e.what()) + " (see 'trainsim " + command + " --help')");
  }
  return true;
}

namespace {

std::optional<double> parse_plain_number(const std::string& text) {
  double v = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars does not take a leading '+'
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::int64_t parse_integer_option(const std::string& option, const std::string& text,
                                  std::int64_t min_value, std::int64_t max_value) {
  const std::string where = option + " " + text;
  const std::string range =
      "expected an integer from " + std::to_string(min_value) + " to " + std::to_string(max_value);
  const auto v = parse_plain_number(text);
  if (!v || *v != std::floor(*v)) throw UsageError(where, range);
  if (*v < static_cast<double>(min_value) || *v > static_cast<double>(max_value))
    throw UsageError(where, range);
  return static_cast<std::int64_t>(*v);
}

double parse_number_option(const std::string& option, const std::string& text, double min_value,
                           double max_value, bool min_exclusive) {
  const std::string where = option + " " + text;
  const std::string range = std::string("expected a number ") +
                            (min_exclusive ? "above " : "from ") + format_number(min_value, 6) +
                            (min_exclusive ? " up to " : " to ") + format_number(max_value, 6);
  const auto v = parse_plain_number(text);
  if (!v) throw UsageError(where, range);
  if ((min_exclusive ? !(*v > min_value) : !(*v >= min_value)) || *v > max_value)
    throw UsageError(where, range);
  return *v;
}

std::vector<std::string> split_commas(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    std::size_t start = 0;
    while (true) {
      const auto comma = v.find(',', start);
      std::string item =
          v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!item.empty()) out.push_back(std::move(item));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace trainsim::cli
