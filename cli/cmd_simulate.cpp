#include <stdexcept>

#include "cli/commands.hpp"

namespace trainsim::cli {

int run_simulate(const Args& /*args*/, CommandIo& /*io*/) {
  throw std::runtime_error("'trainsim simulate' is not implemented in this build yet");
}

}  // namespace trainsim::cli
