// Placeholder until the issue that builds `trainsim models` lands: fails loudly, never pretends.
#include <stdexcept>

#include "cli/commands.hpp"

namespace trainsim::cli {

int run_models(const Args& /*args*/, CommandIo& /*io*/) {
  throw std::runtime_error("'trainsim models' is not implemented in this build yet");
}

}  // namespace trainsim::cli
