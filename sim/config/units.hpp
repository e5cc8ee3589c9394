#pragma once
// Parses quantities with units into SI base units ("900 GB/s" -> 9e11 bytes/s). Exact about
// bits (b, bit) vs bytes (B) and decimal (k M G T P E: powers of 1000) vs binary (Ki Mi Gi Ti Pi
// Ei: powers of 1024) prefixes.

#include <optional>
#include <string>
#include <string_view>

namespace trainsim::sim {

enum class Dimension {
  bytes,          // B, bits converted: "80 GiB", "16 GB", "8 Mb"
  bytes_per_s,    // "900 GB/s", "1 Gb/s", "100 Gbps", "25 GBps"
  seconds,        // "50 us", "1.5 ms", "2 ns", "3 s", "1 min", "2 h"
  flops,          // "3.9 GFLOP"
  flops_per_s,    // "312 TFLOP/s", "624 TOP/s" (OP for integer ops)
  watts,          // "300 W", "1.2 kW"
  hertz,          // "1695 MHz", "1.4 GHz"
  dimensionless,  // "0.8", "80%"
};
inline constexpr Dimension kAllDimensions[] = {
    Dimension::bytes,       Dimension::bytes_per_s, Dimension::seconds, Dimension::flops,
    Dimension::flops_per_s, Dimension::watts,       Dimension::hertz,   Dimension::dimensionless};

const char* dimension_name(Dimension d);
// Units accepted for `d`, for error messages (e.g. "B, KiB, GB/s, ...").
std::string accepted_units(Dimension d);

// Parses "<number> <unit>" (space optional). Returns the value in SI base units, or nullopt when
// the text is not a number followed by a unit of dimension `d`. A bare number is accepted only for
// `dimensionless`: elsewhere give a JSON number to use SI base units.
// The value is always finite: a number beyond double's range, before or after the unit's
// factor ("1e999 GB", "1e300 EB/s"), is nullopt.
std::optional<double> parse_quantity(std::string_view text, Dimension d);

// The same, telling a quantity whose magnitude is out of range apart from text that is not a
// quantity of `d` at all (for messages).
struct ParsedQuantity {
  std::optional<double> value;
  bool out_of_range = false;  // a number and a unit of `d`, but not finite in SI base units
};
ParsedQuantity parse_quantity_detailed(std::string_view text, Dimension d);

// `v` with `significant` significant digits in printf's %g form ("0.0125", "40", "3.2e+09",
// "inf"): the one plain-number formatter of reports, messages and CSV cells (17 digits round-trip
// a double).
std::string format_significant(double v, int significant);

}  // namespace trainsim::sim
