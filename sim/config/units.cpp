#include "sim/config/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <span>
#include <utility>

namespace trainsim::sim {

namespace {

struct Prefix {
  std::string_view symbol;
  double factor;
};
constexpr std::array<Prefix, 13> kPrefixes{{
    {"", 1.0},
    {"k", 1e3},
    {"K", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
    {"E", 1e18},
    {"Ki", 1024.0},
    {"Mi", 1048576.0},
    {"Gi", 1073741824.0},
    {"Ti", 1099511627776.0},
    {"Pi", 1125899906842624.0},
}};

struct BaseUnit {
  std::string_view symbol;
  double factor;  // SI base units per one of this unit
  bool prefixable;
};

// Bits: 1 b = 1/8 B exactly.
constexpr std::array<BaseUnit, 2> kByteUnits{{{"B", 1.0, true}, {"b", 0.125, true}}};
constexpr std::array<BaseUnit, 6> kRateUnits{{{"B/s", 1.0, true},
                                              {"b/s", 0.125, true},
                                              {"bit/s", 0.125, true},
                                              {"Bps", 1.0, true},
                                              {"bps", 0.125, true},
                                              {"bits/s", 0.125, true}}};
constexpr std::array<BaseUnit, 8> kTimeUnits{{{"s", 1.0, false},
                                              {"ms", 1e-3, false},
                                              {"us", 1e-6, false},
                                              {"\xC2\xB5s", 1e-6, false},  // µs
                                              {"ns", 1e-9, false},
                                              {"ps", 1e-12, false},
                                              {"min", 60.0, false},
                                              {"h", 3600.0, false}}};
constexpr std::array<BaseUnit, 2> kFlopUnits{{{"FLOP", 1.0, true}, {"OP", 1.0, true}}};
constexpr std::array<BaseUnit, 4> kFlopRateUnits{
    {{"FLOP/s", 1.0, true}, {"FLOPS", 1.0, true}, {"OP/s", 1.0, true}, {"OPS", 1.0, true}}};
constexpr std::array<BaseUnit, 1> kPowerUnits{{{"W", 1.0, true}}};
constexpr std::array<BaseUnit, 1> kFrequencyUnits{{{"Hz", 1.0, true}}};
constexpr std::array<BaseUnit, 1> kRatioUnits{{{"%", 0.01, false}}};

std::optional<double> match_unit(std::string_view unit, std::span<const BaseUnit> units) {
  for (const BaseUnit& u : units) {
    if (unit.size() < u.symbol.size() || unit.substr(unit.size() - u.symbol.size()) != u.symbol) {
      continue;
    }
    const std::string_view prefix = unit.substr(0, unit.size() - u.symbol.size());
    if (prefix.empty()) return u.factor;
    if (!u.prefixable) continue;
    for (const Prefix& p : kPrefixes) {
      if (!p.symbol.empty() && p.symbol == prefix) return p.factor * u.factor;
    }
  }
  return std::nullopt;
}

std::string list_units(std::span<const BaseUnit> units, std::string_view example_prefixes) {
  std::string s;
  for (const BaseUnit& u : units) {
    if (!s.empty()) s += ", ";
    s += u.symbol;
  }
  if (!example_prefixes.empty()) s += " with prefixes " + std::string(example_prefixes);
  return s;
}

// The units of a dimension and the prefixes its error messages name as examples.
struct UnitTable {
  std::span<const BaseUnit> units;
  std::string_view example_prefixes;
};

UnitTable unit_table(Dimension d) {
  constexpr std::string_view kAll = "k M G T P E Ki Mi Gi Ti Pi";
  switch (d) {
    case Dimension::bytes:
      return {kByteUnits, kAll};
    case Dimension::bytes_per_s:
      return {kRateUnits, kAll};
    case Dimension::seconds:
      return {kTimeUnits, ""};
    case Dimension::flops:
      return {kFlopUnits, "k M G T P E"};
    case Dimension::flops_per_s:
      return {kFlopRateUnits, "k M G T P E"};
    case Dimension::watts:
      return {kPowerUnits, "k M"};
    case Dimension::hertz:
      return {kFrequencyUnits, "k M G"};
    case Dimension::dimensionless:  // and a bare number
      return {kRatioUnits, ""};
  }
  return {};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

const char* dimension_name(Dimension d) {
  switch (d) {
    case Dimension::bytes:
      return "a size";
    case Dimension::bytes_per_s:
      return "a bandwidth";
    case Dimension::seconds:
      return "a duration";
    case Dimension::flops:
      return "an operation count";
    case Dimension::flops_per_s:
      return "a compute rate";
    case Dimension::watts:
      return "a power";
    case Dimension::hertz:
      return "a frequency";
    case Dimension::dimensionless:
      return "a number";
  }
  return "a quantity";
}

std::string accepted_units(Dimension d) {
  if (d == Dimension::dimensionless) return "a plain number or %";
  const UnitTable t = unit_table(d);
  return list_units(t.units, t.example_prefixes);
}

ParsedQuantity parse_quantity_detailed(std::string_view text, Dimension d) {
  text = trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // from_chars reports a number beyond double's range as result_out_of_range, past the number.
  const bool too_large = ec == std::errc::result_out_of_range;
  if ((ec != std::errc() && !too_large) || (!too_large && !std::isfinite(value))) return {};
  const std::string_view unit = trim(text.substr(static_cast<std::size_t>(end - text.data())));
  const std::optional<double> factor = d == Dimension::dimensionless && unit.empty()
                                           ? std::optional<double>(1.0)
                                           : match_unit(unit, unit_table(d).units);
  if (!factor) return {};
  const double si = value * *factor;
  if (too_large || !std::isfinite(si)) return {std::nullopt, true};
  return {si, false};
}

std::optional<double> parse_quantity(std::string_view text, Dimension d) {
  return parse_quantity_detailed(text, d).value;
}

std::string format_significant(double v, int significant) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

}  // namespace trainsim::sim
