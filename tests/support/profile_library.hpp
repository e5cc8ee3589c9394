#pragma once
// The shipped profile library (loaded once per test process), a cluster profile from it, and the
// relative difference the collective tests compare with.
#include <cmath>
#include <string>

#include "cli/profiles_source.hpp"

namespace trainsim::test {

inline const sim::ProfileLibrary& library() {
  static const sim::ProfileLibrary lib = cli::load_profile_library({});
  return lib;
}

inline sim::ClusterSpec profile(const std::string& cluster_name) {
  return library().cluster(cluster_name, "test");
}

// |x - y| / |y|.
inline double rel(double x, double y) {
  return std::abs(x - y) / std::abs(y);
}

}  // namespace trainsim::test
