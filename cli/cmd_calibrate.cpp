// Placeholder until the issue that builds `trainsim calibrate` lands: fails loudly, never pretends.
#include <stdexcept>

#include "cli/commands.hpp"

namespace trainsim::cli {

int run_calibrate(const Args& /*args*/, CommandIo& /*io*/) {
  throw std::runtime_error("'trainsim calibrate' is not implemented in this build yet");
}

}  // namespace trainsim::cli
