#pragma once
// Shared Boost.Program_options plumbing: every subcommand parses through here so usage errors
// read the same everywhere and map to exit code 2.

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace trainsim::cli {

namespace po = boost::program_options;

// Parses `args` (the words after the subcommand). Unknown options and malformed values throw
// UsageError naming the option. Returns false (after printing help to io.out) on --help.
// Every command also takes --verbose (library logging such as Ceres' on stderr).
bool parse_command_line(const std::string& command, const std::string& synopsis, const Args& args,
                        po::options_description& options,
                        const po::positional_options_description& positional, po::variables_map& vm,
                        CommandIo& io);

// Numeric option values, parsed from the text as typed so that a message echoes it exactly
// ("--epochs 0: ..."). Integers may be written 1e3 when exact. Both throw UsageError naming the
// option and the value for text that is not a number, not finite, or outside [min, max].
std::int64_t parse_integer_option(const std::string& option, const std::string& text,
                                  std::int64_t min_value, std::int64_t max_value);
double parse_number_option(const std::string& option, const std::string& text, double min_value,
                           double max_value, bool min_exclusive = false);

// Threads a command may start (--jobs): far more than any machine's cores.
inline constexpr std::int64_t kMaxJobs = 1024;

// The items of a repeatable option whose values may also be comma-separated lists
// (`--free a,b --free c` gives a, b, c); empty items are dropped.
std::vector<std::string> split_commas(const std::vector<std::string>& values);

}  // namespace trainsim::cli
