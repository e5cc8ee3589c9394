#include "cli/options.hpp"

#include <ostream>

#include "sim/core/input_error.hpp"

namespace trainsim::cli {

bool parse_command_line(const std::string& command, const std::string& synopsis, const Args& args,
                        po::options_description& options,
                        const po::positional_options_description& positional, po::variables_map& vm,
                        CommandIo& io) {
  options.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    if (vm.count("help") != 0) {
      io.out << "usage: trainsim " << command << " " << synopsis << "\n\n" << options << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError("trainsim " + command,
                     std::string(e.what()) + " (see 'trainsim " + command + " --help')");
  }
  return true;
}

}  // namespace trainsim::cli
