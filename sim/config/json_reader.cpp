#include "sim/config/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/config/nearest_name.hpp"
#include "sim/config/strict_json.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::sim {

std::string show_json(const nlohmann::json& v) {
  std::string s = dump_json(v);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

JsonReader::JsonReader(const nlohmann::json& node, std::shared_ptr<const JsonSource> source,
                       std::string path)
    : node_(&node), source_(std::move(source)), path_(std::move(path)) {
  if (!node_->is_object()) fail_here("expected an object, got " + show_json(*node_));
}

std::string JsonReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

std::string JsonReader::where(const std::string& key) const {
  return source_->describe(path_of(key));
}

void JsonReader::fail(const std::string& key, const std::string& message) const {
  throw InputError(source_->describe(path_of(key)), message);
}

void JsonReader::fail_here(const std::string& message) const {
  throw InputError(source_->describe(path_.empty() ? "(top level)" : path_), message);
}

bool JsonReader::has(const std::string& key) const {
  return node_->contains(key);
}

const nlohmann::json* JsonReader::lookup(const std::string& key) {
  asked_.insert(key);
  const auto it = node_->find(key);
  return it == node_->end() ? nullptr : &*it;
}

const nlohmann::json& JsonReader::required(const std::string& key) {
  const nlohmann::json* v = lookup(key);
  if (v == nullptr) {
    // A missing key is often a typo of it: say so rather than only "missing".
    std::vector<std::string> present;
    for (const auto& item : node_->items()) {
      if (asked_.count(item.key()) == 0) present.push_back(item.key());
    }
    const std::string typo = nearest_name(key, present);
    fail(key, "missing required key '" + key + "'" +
                  (typo.empty() ? "" : "; unknown key '" + typo + "' looks like a typo of it"));
  }
  return *v;
}

void JsonReader::ignore(std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    asked_.insert(k);
}

void JsonReader::done() const {
  for (const auto& [key, value] : node_->items()) {
    if (asked_.count(key) != 0) continue;
    const std::string near =
        nearest_name(key, std::vector<std::string>(asked_.begin(), asked_.end()));
    std::string known;
    for (const auto& k : asked_)
      known += (known.empty() ? "" : ", ") + k;
    fail(key, "unknown key '" + key + "'" +
                  (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                  "; known keys: " + known);
  }
}

JsonReader JsonReader::object(const std::string& key) {
  const nlohmann::json& v = required(key);
  if (!v.is_object()) fail(key, "expected an object, got " + show_json(v));
  return JsonReader(v, source_, path_of(key));
}

std::optional<JsonReader> JsonReader::optional_object(const std::string& key) {
  const nlohmann::json* v = lookup(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) fail(key, "expected an object, got " + show_json(*v));
  return JsonReader(*v, source_, path_of(key));
}

std::vector<JsonReader> JsonReader::objects(const std::string& key) {
  const nlohmann::json& v = required(key);
  if (!v.is_array()) fail(key, "expected an array of objects, got " + show_json(v));
  std::vector<JsonReader> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = path_of(key) + "[" + std::to_string(i) + "]";
    if (!v[i].is_object())
      throw InputError(source_->describe(p), "expected an object, got " + show_json(v[i]));
    out.emplace_back(v[i], source_, p);
  }
  return out;
}

double JsonReader::check_bound(const std::string& key, double v, Bound b,
                               const nlohmann::json& shown) const {
  if (!std::isfinite(v)) fail(key, "value " + show_json(shown) + " is not a finite number");
  switch (b) {
    case Bound::any:
      break;
    case Bound::positive:
      if (!(v > 0)) fail(key, "value " + show_json(shown) + " must be positive");
      break;
    case Bound::non_negative:
      if (!(v >= 0)) fail(key, "value " + show_json(shown) + " must not be negative");
      break;
    case Bound::unit_interval:
      if (!(v > 0 && v <= 1)) fail(key, "value " + show_json(shown) + " must be in (0, 1]");
      break;
  }
  return v;
}

std::optional<double> JsonReader::optional_quantity(const std::string& key, Dimension d, Bound b) {
  const nlohmann::json* v = lookup(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number()) return check_bound(key, v->get<double>(), b, *v);
  if (!v->is_string()) {
    fail(key, "expected " + std::string(dimension_name(d)) + " such as a string with units, got " +
                  show_json(*v));
  }
  const ParsedQuantity q = parse_quantity_detailed(v->get<std::string>(), d);
  if (q.out_of_range) {
    fail(key, "value " + show_json(*v) + " is out of range (not a finite number in SI base units)");
  }
  if (!q.value) {
    fail(key, "value " + show_json(*v) + " is not " + dimension_name(d) +
                  " (accepted units: " + accepted_units(d) + ")");
  }
  return check_bound(key, *q.value, b, *v);
}

double JsonReader::quantity(const std::string& key, Dimension d, Bound b) {
  required(key);
  return *optional_quantity(key, d, b);
}

double JsonReader::quantity_or(const std::string& key, Dimension d, Bound b, double fallback) {
  return optional_quantity(key, d, b).value_or(fallback);
}

double JsonReader::number(const std::string& key, Bound b) {
  const nlohmann::json& v = required(key);
  if (!v.is_number()) fail(key, "expected a number, got " + show_json(v));
  return check_bound(key, v.get<double>(), b, v);
}

double JsonReader::number_or(const std::string& key, Bound b, double fallback) {
  return has(key) ? number(key, b) : (asked_.insert(key), fallback);
}

std::optional<std::int64_t> exact_integer(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    // 1e9 and 1000000000.0 are integers written as floats; accepted when exact. 2^63 is the
    // first double beyond int64.
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && d >= -9223372036854775808.0 &&
        d < 9223372036854775808.0) {
      return static_cast<std::int64_t>(d);
    }
  }
  return std::nullopt;
}

std::int64_t JsonReader::checked_integer(const std::string& key, const nlohmann::json& v,
                                         std::int64_t min_value, std::int64_t max_value,
                                         const std::string& what) const {
  const std::optional<std::int64_t> i = exact_integer(v);
  if (!i) {
    if (v.is_number() && std::isfinite(v.get<double>()) &&
        v.get<double>() == std::floor(v.get<double>())) {
      fail(key,
           what + show_json(v) + " is out of range (at most " + std::to_string(max_value) + ")");
    }
    fail(key, "expected an integer, got " + show_json(v));
  }
  if (*i < min_value)
    fail(key, what + std::to_string(*i) + " must be at least " + std::to_string(min_value));
  if (*i > max_value) {
    fail(key, what + std::to_string(*i) + " is above the limit of " + std::to_string(max_value));
  }
  return *i;
}

std::int64_t JsonReader::integer(const std::string& key, std::int64_t min_value,
                                 std::int64_t max_value) {
  const nlohmann::json& v = required(key);
  return checked_integer(key, v, min_value, max_value, "value ");
}

std::int64_t JsonReader::integer_or(const std::string& key, std::int64_t min_value,
                                    std::int64_t fallback, std::int64_t max_value) {
  return has(key) ? integer(key, min_value, max_value) : (asked_.insert(key), fallback);
}

std::vector<std::int64_t> JsonReader::integer_list(const std::string& key, std::int64_t min_value,
                                                   std::int64_t max_value) {
  const nlohmann::json& v = required(key);
  if (!v.is_array()) fail(key, "expected an array of integers, got " + show_json(v));
  std::vector<std::int64_t> out;
  for (const auto& e : v)
    out.push_back(checked_integer(key, e, min_value, max_value, "element "));
  return out;
}

std::string JsonReader::string(const std::string& key) {
  const nlohmann::json& v = required(key);
  if (!v.is_string()) fail(key, "expected a string, got " + show_json(v));
  return v.get<std::string>();
}

std::string JsonReader::string_or(const std::string& key, const std::string& fallback) {
  return has(key) ? string(key) : (asked_.insert(key), fallback);
}

bool JsonReader::boolean(const std::string& key) {
  const nlohmann::json& v = required(key);
  if (!v.is_boolean()) fail(key, "expected true or false, got " + show_json(v));
  return v.get<bool>();
}

bool JsonReader::boolean_or(const std::string& key, bool fallback) {
  return has(key) ? boolean(key) : (asked_.insert(key), fallback);
}

std::string JsonReader::choice(const std::string& key, std::initializer_list<const char*> choices) {
  return choice_among(key, std::vector<std::string>(choices.begin(), choices.end()));
}

std::string JsonReader::choice_among(const std::string& key,
                                     const std::vector<std::string>& options) {
  const std::string s = string(key);
  if (std::find(options.begin(), options.end(), s) != options.end()) return s;
  const std::string near = nearest_name(s, options);
  std::string list;
  for (const auto& o : options)
    list += (list.empty() ? "" : "|") + o;
  fail(key, "value \"" + s + "\" is not one of " + list +
                (near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

std::string JsonReader::choice_or(const std::string& key,
                                  std::initializer_list<const char*> choices,
                                  const std::string& fallback) {
  return has(key) ? choice(key, choices) : (asked_.insert(key), fallback);
}

}  // namespace trainsim::sim
