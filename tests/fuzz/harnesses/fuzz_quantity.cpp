// libFuzzer entry point for trainsim::fuzz::quantity (see fuzz_targets.hpp).
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  trainsim::fuzz::quantity(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
