// reference_csv (cli/validate_tables.hpp): the CSVs of tests/reference_data, compiled in.
#include <stdexcept>
#include <string>

#include "cli/validate_tables.hpp"
#include "sim/config/embedded_file.hpp"

namespace trainsim::reference_data {
std::span<const sim::EmbeddedFile> embedded_files();
}

namespace trainsim::cli {

std::string_view reference_csv(const std::string& file) {
  for (const sim::EmbeddedFile& f : reference_data::embedded_files()) {
    if (f.path == file) return f.content;
  }
  throw std::out_of_range("no reference table '" + file + "' in tests/reference_data");
}

}  // namespace trainsim::cli
