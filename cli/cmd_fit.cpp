// Placeholder until the issue that builds `trainsim fit` lands: fails loudly, never pretends.
#include <stdexcept>

#include "cli/commands.hpp"

namespace trainsim::cli {

int run_fit(const Args& /*args*/, CommandIo& /*io*/) {
  throw std::runtime_error("'trainsim fit' is not implemented in this build yet");
}

}  // namespace trainsim::cli
