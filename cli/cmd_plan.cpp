// Placeholder until the issue that builds `trainsim plan` lands: fails loudly, never pretends.
#include <stdexcept>

#include "cli/commands.hpp"

namespace trainsim::cli {

int run_plan(const Args& /*args*/, CommandIo& /*io*/) {
  throw std::runtime_error("'trainsim plan' is not implemented in this build yet");
}

}  // namespace trainsim::cli
