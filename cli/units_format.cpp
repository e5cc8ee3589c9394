#include "cli/units_format.hpp"

#include <cmath>

#include "sim/config/units.hpp"

namespace trainsim::cli {

std::string format_number(double v, int significant) {
  return sim::format_significant(v, significant);
}

std::string format_rate(double per_s, const std::string& unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  double v = per_s;
  while (std::fabs(v) >= 1000 && i < 6) {
    v /= 1000;
    ++i;
  }
  return format_number(v) + " " + prefixes[i] + unit;
}

std::string format_bytes(double bytes) {
  const char* prefixes[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && i < 5) {
    v /= 1024;
    ++i;
  }
  return format_number(v) + " " + prefixes[i];
}

std::string format_seconds(double s) {
  const double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a < 1e-6) return format_number(s * 1e9) + " ns";
  if (a < 1e-3) return format_number(s * 1e6) + " us";
  if (a < 1) return format_number(s * 1e3) + " ms";
  return format_number(s) + " s";
}

std::string format_duration(double s) {
  if (s >= 3600) return format_number(s / 3600, 4) + " h";
  if (s >= 60) return format_number(s / 60, 4) + " min";
  return format_seconds(s);
}

}  // namespace trainsim::cli
