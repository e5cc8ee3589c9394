#include "sim/config/input_file.hpp"

#include <filesystem>
#include <fstream>

#include "sim/core/input_error.hpp"

namespace trainsim::sim {

namespace {

std::string mib(std::int64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

std::string read_input_file(const std::string& path, std::int64_t max_bytes,
                            const std::string& what) {
  if (path.empty()) throw InputError("(empty path)", "no " + what + " file named");
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    throw InputError(path, "cannot open " + what + " file: it does not exist");
  }
  if (std::filesystem::is_directory(status)) {
    throw InputError(path, "is a folder, not a " + what + " file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open " + what + " file: it is not readable");
  // Read at most max_bytes + 1 so that endless files (/dev/zero, a pipe) are refused too.
  std::string text;
  constexpr std::size_t kChunk = 1 << 16;
  char buffer[kChunk];
  while (in) {
    in.read(buffer, kChunk);
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (static_cast<std::int64_t>(text.size()) > max_bytes) {
      throw InputError(path, what + " file is larger than the limit of " + mib(max_bytes));
    }
  }
  if (in.bad()) throw InputError(path, "reading the " + what + " file failed");
  return text;
}

}  // namespace trainsim::sim
