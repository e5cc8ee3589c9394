#include "cli/profiles_source.hpp"

#include <filesystem>

namespace trainsim::hw_profiles {
std::span<const sim::EmbeddedFile> embedded_files();
}

namespace trainsim::cli {

sim::ProfileLibrary load_profile_library(const std::vector<std::string>& extra_dirs) {
  std::vector<std::filesystem::path> dirs(extra_dirs.begin(), extra_dirs.end());
  return sim::ProfileLibrary(hw_profiles::embedded_files(), dirs);
}

}  // namespace trainsim::cli
