#include <stdexcept>

#include "cli/commands.hpp"

namespace trainsim::cli {

int run_profiles(const Args& /*args*/, CommandIo& /*io*/) {
  throw std::runtime_error("'trainsim profiles' is not implemented in this build yet");
}

}  // namespace trainsim::cli
