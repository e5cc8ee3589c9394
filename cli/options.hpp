#pragma once
// Shared Boost.Program_options plumbing: every subcommand parses through here so usage errors
// read the same everywhere and map to exit code 2.

#include <boost/program_options.hpp>
#include <string>

#include "cli/commands.hpp"

namespace trainsim::cli {

namespace po = boost::program_options;

// Parses `args` (the words after the subcommand). Unknown options and malformed values throw
// UsageError naming the option. Returns false (after printing help to io.out) on --help.
bool parse_command_line(const std::string& command, const std::string& synopsis, const Args& args,
                        po::options_description& options,
                        const po::positional_options_description& positional, po::variables_map& vm,
                        CommandIo& io);

}  // namespace trainsim::cli
