#pragma once
// One function per subcommand. Each parses its own arguments (Boost.Program_options), writes its
// result to `out` and diagnostics to `err`, returns the exit code, and throws InputError /
// UsageError for bad input (exit 2). main() maps exceptions to exit codes.

#include <iosfwd>
#include <string>
#include <vector>

namespace trainsim::cli {

struct CommandIo {
  std::ostream& out;
  std::ostream& err;
  bool err_is_terminal = false;  // progress output only when true
};

using Args = std::vector<std::string>;

int run_simulate(const Args& args, CommandIo& io);
int run_collective(const Args& args, CommandIo& io);
int run_fit(const Args& args, CommandIo& io);
int run_calibrate(const Args& args, CommandIo& io);
int run_sweep(const Args& args, CommandIo& io);
int run_plan(const Args& args, CommandIo& io);
int run_profiles(const Args& args, CommandIo& io);
int run_models(const Args& args, CommandIo& io);
int run_validate(const Args& args, CommandIo& io);
int run_import(const Args& args, CommandIo& io);

}  // namespace trainsim::cli
