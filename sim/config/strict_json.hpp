#pragma once
// JSON parsing for user input, stricter than nlohmann::json::parse: nesting is limited to
// limits::kMaxJsonDepth levels (deeper documents would overflow the stack in the recursive copy
// and dump of nlohmann::json), a key repeated inside one object is an error (RFC 8259 leaves
// the meaning open and nlohmann silently keeps the last), and a number that does not fit a
// double (1e999) is reported with its JSON path. Comments (// and /* */) are allowed.

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace trainsim::sim {

struct JsonParseFailure {
  enum class Kind { syntax, too_deep, duplicate_key, number_out_of_range };
  Kind kind = Kind::syntax;
  std::size_t line = 1;  // 1-based position of the offending token
  std::size_t column = 1;
  std::string message;  // names the JSON path and the value where there is one
};

// Parses `text` into `out`; returns false and fills `failure` when it is not acceptable.
bool parse_json_strict(std::string_view text, nlohmann::json& out, JsonParseFailure& failure);

// Writes a JSON value for a message or a report without throwing on strings that are not valid
// UTF-8 (invalid bytes become U+FFFD).
std::string dump_json(const nlohmann::json& v, int indent = -1);

}  // namespace trainsim::sim
