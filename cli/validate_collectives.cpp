// The collective (busbw) reference tables of `trainsim validate`: none are registered yet.
#include "cli/validate_tables.hpp"

namespace trainsim::cli {

void add_collective_tables(std::vector<ReferenceTable>&) {}

}  // namespace trainsim::cli
