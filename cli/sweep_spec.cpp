#include "cli/sweep_spec.hpp"

#include <cmath>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "sim/config/limits.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
namespace {

// One range never needs more values than a sweep may have rows (README "Limits").
constexpr auto kMaxRangeValues = static_cast<std::size_t>(sim::limits::kMaxSweepRows);

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  bool in_quotes = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '\\' && i + 1 < text.size()) {
        current += c;
        current += text[++i];
        continue;
      }
      if (c == '"') in_quotes = false;
    } else if (c == '"') {
      in_quotes = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  items.push_back(current);
  return items;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool is_integer_text(const std::string& text) {
  return text.find_first_of(".eE") == std::string::npos;
}

// Integers print as integers; other numbers in the shortest form that reads back exactly.
std::string format_value(double v, bool integral) {
  // Integers print as integers while doubles hold them exactly (below 2^53).
  if (integral && std::abs(v) < 9007199254740992.0)
    return std::to_string(static_cast<long long>(std::llround(v)));
  return nlohmann::json(v).dump();
}

// Expands "A..B", "A..B+S" or "A..BxF"; nullopt when `item` is not a range at all.
std::optional<std::vector<std::string>> expand_range(const std::string& item,
                                                     const std::string& where) {
  const auto dots = item.find("..");
  if (dots == std::string::npos || item.empty() || item.front() == '"' || item.front() == '[' ||
      item.front() == '{') {
    return std::nullopt;
  }
  const std::string from_text = item.substr(0, dots);
  std::string rest = item.substr(dots + 2);
  char op = '+';
  std::string step_text = "1";
  const auto op_pos = rest.find_first_of("x+*", 1);
  if (op_pos != std::string::npos) {
    op = rest[op_pos] == '+' ? '+' : 'x';
    step_text = rest.substr(op_pos + 1);
    rest = rest.substr(0, op_pos);
  }
  const auto from = parse_number(from_text);
  const auto to = parse_number(rest);
  const auto step = parse_number(step_text);
  const std::string hint = " (ranges are A..B, A..B+STEP or A..BxFACTOR, e.g. 1..1024x2)";
  if (!from || !to || !step) throw UsageError(where, "bad range '" + item + "'" + hint);
  if (*to < *from) throw UsageError(where, "range '" + item + "' ends below its start" + hint);
  if (op == '+' && *step <= 0) throw UsageError(where, "range '" + item + "': step must be > 0");
  if (op == 'x' && (*step <= 1 || *from <= 0)) {
    throw UsageError(where,
                     "range '" + item + "': a geometric range needs start > 0 and factor > 1");
  }
  const bool integral = is_integer_text(from_text) && is_integer_text(step_text);
  std::vector<std::string> values;
  // Values are computed from the start (not accumulated) so float steps do not drift.
  for (std::size_t k = 0;; ++k) {
    const double v = op == '+' ? *from + static_cast<double>(k) * *step
                               : *from * std::pow(*step, static_cast<double>(k));
    // A relative tolerance on the end's magnitude (a negative end scaled by 1 + eps would move
    // below its start and leave the range empty).
    if (v > *to + std::abs(*to) * 1e-12) break;
    if (values.size() >= kMaxRangeValues) {
      throw UsageError(where, "range '" + item + "' has more than " +
                                  std::to_string(kMaxRangeValues) + " values");
    }
    values.push_back(format_value(v, integral));
  }
  return values;
}

}  // namespace

VaryAxis parse_vary(const std::string& argument) {
  const std::string where = "--vary " + argument;
  const auto eq = argument.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(where, "expected PATH=V1,V2,... e.g. --vary parallelism.data=1..64x2");
  }
  VaryAxis axis;
  axis.path = argument.substr(0, eq);
  for (const std::string& item : split_top_level(argument.substr(eq + 1))) {
    if (item.empty()) throw UsageError(where, "empty value in the list");
    if (auto range = expand_range(item, where)) {
      axis.values.insert(axis.values.end(), range->begin(), range->end());
    } else {
      axis.values.push_back(item);
    }
  }
  return axis;
}

std::vector<VaryAxis> parse_vary_list(const std::vector<std::string>& arguments,
                                      std::size_t max_rows) {
  std::vector<VaryAxis> axes;
  std::set<std::string> paths;
  std::size_t rows = 1;
  for (const std::string& a : arguments) {
    VaryAxis axis = parse_vary(a);
    if (axis.values.empty()) throw UsageError("--vary " + a, "no values to vary over");
    if (!paths.insert(axis.path).second) {
      throw UsageError("--vary " + a, "path '" + axis.path + "' is varied twice");
    }
    if (rows > max_rows / axis.values.size()) {
      throw UsageError("--vary " + a,
                       "the sweep would have more than " + std::to_string(max_rows) + " rows");
    }
    rows *= axis.values.size();
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::size_t row_count(const std::vector<VaryAxis>& axes) {
  std::size_t n = 1;
  for (const auto& a : axes)
    n *= a.values.size();
  return n;
}

std::vector<std::size_t> row_indices(const std::vector<VaryAxis>& axes, std::size_t row) {
  std::vector<std::size_t> idx(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    idx[i] = row % axes[i].values.size();
    row /= axes[i].values.size();
  }
  return idx;
}

std::vector<std::string> row_overrides(const std::vector<VaryAxis>& axes, std::size_t row) {
  const auto idx = row_indices(axes, row);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < axes.size(); ++i)
    out.push_back(axes[i].path + "=" + axes[i].values[idx[i]]);
  return out;
}

}  // namespace trainsim::cli
