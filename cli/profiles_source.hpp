#pragma once
// The profile library every subcommand uses: the built-in profiles plus --profile-dir folders.

#include <string>
#include <vector>

#include "sim/config/profile_library.hpp"

namespace trainsim::cli {

sim::ProfileLibrary load_profile_library(const std::vector<std::string>& extra_dirs);

}  // namespace trainsim::cli
