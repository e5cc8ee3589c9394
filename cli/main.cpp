// trainsim: the command-line entry point. Dispatches to one subcommand and maps failures to
// exit codes: 0 success, 1 runtime failure, 2 invalid input or usage.

#include <unistd.h>

#include <exception>
#include <iostream>
#include <map>
#include <new>
#include <string>

#include "cli/commands.hpp"
#include "fit/solver_logging.hpp"
#include "sim/config/utf8.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/time.hpp"

namespace {

using trainsim::cli::Args;
using trainsim::cli::CommandIo;
using CommandFn = int (*)(const Args&, CommandIo&);

struct Command {
  CommandFn run;
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table{
      {"simulate", {trainsim::cli::run_simulate, "simulate training steps of a scenario"}},
      {"collective", {trainsim::cli::run_collective, "simulate one collective on a cluster"}},
      {"fit", {trainsim::cli::run_fit, "fit v = b/(b/v0 + t) to measured throughput points"}},
      {"calibrate",
       {trainsim::cli::run_calibrate, "fit profile parameters to measured throughput"}},
      {"sweep", {trainsim::cli::run_sweep, "simulate the cross product of varied scenario values"}},
      {"plan", {trainsim::cli::run_plan, "capacity planning: cheapest hardware meeting a target"}},
      {"profiles", {trainsim::cli::run_profiles, "list or show hardware profiles"}},
      {"models", {trainsim::cli::run_models, "list or show zoo models"}},
      {"validate", {trainsim::cli::run_validate, "accuracy against every shipped reference table"}},
      {"import",
       {trainsim::cli::run_import, "a PyTorch profiler trace into a workload file to simulate"}},
  };
  return table;
}

void print_usage(std::ostream& os) {
  os << "usage: trainsim COMMAND [ARGS...]   (trainsim COMMAND --help for details)\n\ncommands:\n";
  for (const auto& [name, cmd] : commands()) {
    os << "  " << name << std::string(12 - name.size(), ' ') << cmd.summary << "\n";
  }
  os << "\noptions:\n  --help      show this help\n  --version   print the version\n"
     << "\nexit codes: 0 success, 1 runtime failure, 2 invalid input or usage\n";
}

// Error messages are one line: control characters from user input (a key holding a newline)
// are shown escaped.
std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  if (argc < 2) {
    std::cerr << "trainsim: error: no command given (see 'trainsim --help')\n";
    return 2;
  }
  const std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (first == "--version") {
    std::cout << "trainsim " << TRAINSIM_VERSION << "\n";
    return 0;
  }
  const auto it = commands().find(first);
  if (it == commands().end()) {
    std::cerr << "trainsim: error: unknown command '" << first << "' (see 'trainsim --help')\n";
    return 2;
  }
  Args args(argv + 2, argv + argc);
  // Arguments end up in JSON output (names, --set values), which must be valid UTF-8.
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!trainsim::sim::is_valid_utf8(args[i])) {
      std::cerr << "trainsim: error: argument " << i + 2 << " is not valid UTF-8 text\n";
      return 2;
    }
  }
  CommandIo io{std::cout, std::cerr, ::isatty(STDERR_FILENO) != 0};
  trainsim::fit::set_solver_logging(false);  // --verbose turns it on
  try {
    const int code = it->second.run(args, io);
    std::cout.flush();
    return code;
  } catch (const trainsim::InputError& e) {
    std::cout.flush();
    std::cerr << "trainsim: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const trainsim::sim::TimeOverflow&) {
    // The commands turn this into a message naming their inputs; this is the last resort.
    std::cout.flush();
    std::cerr << "trainsim: error: trainsim " << first
              << ": a simulated time is beyond the engine's range of about 106 days: the inputs "
                 "(sizes, bandwidths, compute rates, efficiencies) are out of any meaningful "
                 "range\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "trainsim: runtime failure: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "trainsim: runtime failure: " << one_line(e.what()) << "\n";
    return 1;
  }
}
