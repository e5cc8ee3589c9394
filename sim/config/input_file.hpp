#pragma once
// Reads a whole input file that a user named (scenario, profile, catalog, CSV) with the checks
// every reader needs: the path exists, is a file and not a folder, and is not larger than
// `max_bytes` (so /dev/zero or a huge file cannot exhaust memory). Errors are InputError naming
// the path.

#include <cstdint>
#include <string>

namespace trainsim::sim {

// `what` names the file's role in messages, e.g. "scenario" or "CSV".
std::string read_input_file(const std::string& path, std::int64_t max_bytes,
                            const std::string& what);

}  // namespace trainsim::sim
