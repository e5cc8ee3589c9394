// Placeholder until the issue that builds `trainsim collective` lands: fails loudly, never pretends.
#include <stdexcept>

#include "cli/commands.hpp"

namespace trainsim::cli {

int run_collective(const Args& /*args*/, CommandIo& /*io*/) {
  throw std::runtime_error("'trainsim collective' is not implemented in this build yet");
}

}  // namespace trainsim::cli
