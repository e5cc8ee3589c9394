// Placeholder until the issue that builds `trainsim sweep` lands: fails loudly, never pretends.
#include <stdexcept>

#include "cli/commands.hpp"

namespace trainsim::cli {

int run_sweep(const Args& /*args*/, CommandIo& /*io*/) {
  throw std::runtime_error("'trainsim sweep' is not implemented in this build yet");
}

}  // namespace trainsim::cli
