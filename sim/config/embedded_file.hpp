#pragma once
// A file compiled into the binary (see cmake/embed_files.cmake).

#include <span>
#include <string_view>

namespace trainsim::sim {

struct EmbeddedFile {
  std::string_view path;  // relative to the embedded folder, '/'-separated
  std::string_view content;
};

}  // namespace trainsim::sim
