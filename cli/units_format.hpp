#pragma once
// Human-readable quantities for text reports ("312 TFLOP/s", "80 GiB", "1.25 ms").

#include <string>

namespace trainsim::cli {

std::string format_rate(double per_s, const std::string& unit);  // decimal prefixes
std::string format_bytes(double bytes);                          // binary prefixes
std::string format_seconds(double s);
// Long runs read better in hours than in seconds: "3.2 h", "12.5 min", else format_seconds.
std::string format_duration(double s);
std::string format_number(double v, int significant = 4);

}  // namespace trainsim::cli
