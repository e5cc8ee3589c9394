#pragma once
// Strict, typed reading of one JSON object into plain structs. Every accessor names the key it
// wants; done() then rejects any key nobody asked for (suggesting the nearest known key), so a
// typo is an error, never a silent default. Errors throw InputError naming the origin (file,
// profile or --set), the JSON path and the offending value.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/json_source.hpp"
#include "sim/config/units.hpp"

namespace trainsim::sim {

enum class Bound {
  any,            // any finite number
  positive,       // > 0
  non_negative,   // >= 0
  unit_interval,  // in (0, 1]
};

class JsonReader {
 public:
  JsonReader(const nlohmann::json& node, std::shared_ptr<const JsonSource> source,
             std::string path = "");

  bool has(const std::string& key) const;
  const nlohmann::json& raw() const { return *node_; }
  const std::string& path() const { return path_; }
  std::string path_of(const std::string& key) const;
  // The origin and path of `key` for messages ("FILE: a.b", "--set a.b=1 (FILE): a.b").
  std::string where(const std::string& key) const;

  JsonReader object(const std::string& key);
  std::optional<JsonReader> optional_object(const std::string& key);
  std::vector<JsonReader> objects(const std::string& key);  // an array of objects

  // A quantity with units (string) or a plain SI number.
  double quantity(const std::string& key, Dimension d, Bound b = Bound::positive);
  double quantity_or(const std::string& key, Dimension d, Bound b, double fallback);
  std::optional<double> optional_quantity(const std::string& key, Dimension d,
                                          Bound b = Bound::positive);
  double number(const std::string& key, Bound b = Bound::any);
  double number_or(const std::string& key, Bound b, double fallback);
  // Integers in [min_value, max_value]; an integer written as a float (1e9, 64.0) is accepted
  // when exact. The default maximum keeps every value within an int.
  static constexpr std::int64_t kIntMax = 2147483647;
  std::int64_t integer(const std::string& key, std::int64_t min_value = 1,
                       std::int64_t max_value = kIntMax);
  std::int64_t integer_or(const std::string& key, std::int64_t min_value, std::int64_t fallback,
                          std::int64_t max_value = kIntMax);
  std::vector<std::int64_t> integer_list(const std::string& key, std::int64_t min_value = 1,
                                         std::int64_t max_value = kIntMax);
  std::string string(const std::string& key);
  std::string string_or(const std::string& key, const std::string& fallback);
  bool boolean(const std::string& key);
  bool boolean_or(const std::string& key, bool fallback);
  // A string that must be one of `choices`.
  std::string choice(const std::string& key, std::initializer_list<const char*> choices);
  std::string choice_or(const std::string& key, std::initializer_list<const char*> choices,
                        const std::string& fallback);
  // A string that must be one of `names`, returned as the enum value paired with it. One table
  // names each choice and its value, so a name the loader accepts cannot fall through to another
  // value (as the arms of a ternary chain that ends in a default can).
  template <class E>
  using EnumNames = std::initializer_list<std::pair<const char*, std::type_identity_t<E>>>;
  template <class E>
  E choice_enum(const std::string& key, EnumNames<E> names) {
    return choice_enum_in(key, names);
  }
  template <class E>
  E choice_enum_or(const std::string& key, EnumNames<E> names, E fallback) {
    return choice_enum_in_or(key, names, fallback);
  }
  // The same with a table of {name, value} pairs that several readers share (an array).
  template <class Table>
  auto choice_enum_in(const std::string& key, const Table& names) {
    std::vector<std::string> options;
    for (const auto& n : names)
      options.emplace_back(n.first);
    const std::string s = choice_among(key, options);
    for (const auto& n : names)
      if (s == n.first) return n.second;
    fail(key, "value \"" + s + "\" has no meaning here");  // unreachable: choice_among checked it
  }
  template <class Table, class E>
  E choice_enum_in_or(const std::string& key, const Table& names, E fallback) {
    if (!has(key)) {
      asked_.insert(key);
      return fallback;
    }
    return choice_enum_in(key, names);
  }

  // Marks keys as known without reading them (e.g. "kind", or keys handled elsewhere).
  void ignore(std::initializer_list<const char*> keys);
  // Throws for the first key that no accessor asked for.
  void done() const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  [[noreturn]] void fail_here(const std::string& message) const;

 private:
  std::string choice_among(const std::string& key, const std::vector<std::string>& options);
  const nlohmann::json& required(const std::string& key);
  const nlohmann::json* lookup(const std::string& key);
  double check_bound(const std::string& key, double v, Bound b, const nlohmann::json& shown) const;
  std::int64_t checked_integer(const std::string& key, const nlohmann::json& v,
                               std::int64_t min_value, std::int64_t max_value,
                               const std::string& what) const;

  const nlohmann::json* node_;
  std::shared_ptr<const JsonSource> source_;
  std::string path_;
  std::set<std::string> asked_;
};

// Compact rendering of a JSON value for messages (strings quoted, long values cut).
std::string show_json(const nlohmann::json& v);
// The value as an int64 when it is an integer, or a float holding an exact integer in range.
std::optional<std::int64_t> exact_integer(const nlohmann::json& v);

}  // namespace trainsim::sim
