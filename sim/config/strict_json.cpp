#include "sim/config/strict_json.hpp"

#include <map>
#include <optional>
#include <vector>

#include "sim/config/limits.hpp"

namespace trainsim::sim {

namespace {

using json = nlohmann::json;

// Walks JSON text (comments allowed) token by token, skipping strings and comments, and calls
// `on_token(kind, offset)` for '{', '[', '}', ']', ':' and for each string ('"'). Numbers and
// literals are not reported. Used only to find the position of what the SAX parser rejected,
// so it may assume the text up to that point is valid.
template <typename F>
void scan_tokens(std::string_view text, F on_token) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {
      if (!on_token('"', i)) return;
      ++i;
      while (i < text.size() && text[i] != '"') {
        i += text[i] == '\\' ? 2 : 1;
      }
      ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const auto end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 2;
    } else {
      if ((c == '{' || c == '[' || c == '}' || c == ']' || c == ':') && !on_token(c, i)) return;
      ++i;
    }
  }
}

// Offset of the `n`-th object key (0-based, document order): a string followed by ':'.
std::size_t key_offset(std::string_view text, std::size_t n) {
  std::size_t seen = 0;
  std::optional<std::size_t> last_string;
  std::size_t found = 0;
  scan_tokens(text, [&](char kind, std::size_t offset) {
    if (kind == '"') {
      last_string = offset;
      return true;
    }
    if (kind == ':' && last_string) {
      if (seen++ == n) {
        found = *last_string;
        return false;
      }
    }
    last_string.reset();
    return true;
  });
  return found;
}

// Offset of the bracket that opens nesting level `level` (1 = the top-level object or array).
std::size_t depth_offset(std::string_view text, int level) {
  int depth = 0;
  std::size_t found = 0;
  scan_tokens(text, [&](char kind, std::size_t offset) {
    if (kind == '{' || kind == '[') {
      if (++depth == level) {
        found = offset;
        return false;
      }
    } else if (kind == '}' || kind == ']') {
      --depth;
    }
    return true;
  });
  return found;
}

void set_position(std::string_view text, std::size_t offset, JsonParseFailure& f) {
  f.line = 1;
  f.column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++f.line;
      f.column = 1;
    } else {
      ++f.column;
    }
  }
}

// Builds the document through nlohmann's own DOM builder while tracking the JSON path, the
// depth and the keys of every open object.
class StrictSax {
 public:
  explicit StrictSax(json& root) : dom_(root, /*allow_exceptions=*/false) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return value() && dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return value() && dom_.string(v); }
  bool binary(json::binary_t& v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) { return open(true) && dom_.start_object(n); }
  bool key(json::string_t& k) {
    Frame& f = frames_.back();
    const std::size_t index = keys_seen_++;
    const auto [it, inserted] = f.keys.emplace(k, index);
    if (!inserted) {
      failure_kind_ = JsonParseFailure::Kind::duplicate_key;
      duplicate_first_ = it->second;
      duplicate_second_ = index;
      message_ = std::string("key '") + k + "' appears twice in " +
                 (path().empty() ? std::string("the top-level object") : "object " + path());
      return false;
    }
    f.key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return open(false) && dom_.start_array(n); }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) {
    error_offset_ = position > 0 ? position - 1 : 0;
    if (e.id == 406) {  // number overflow: a literal beyond the range of double
      failure_kind_ = JsonParseFailure::Kind::number_out_of_range;
      const std::string p = pending_path();
      message_ = (p.empty() ? std::string() : p + ": ") + "number " + token +
                 " is out of range (JSON numbers here must be finite doubles, at most about "
                 "1.8e308 in magnitude)";
      // The position nlohmann reports is after the token.
      error_offset_ = position >= token.size() ? position - token.size() : 0;
      return false;
    }
    failure_kind_ = JsonParseFailure::Kind::syntax;
    std::string what = e.what();
    const auto pos = what.find("syntax error");
    message_ = "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos));
    return false;
  }

  JsonParseFailure::Kind failure_kind() const { return failure_kind_; }
  const std::string& message() const { return message_; }
  std::size_t error_offset() const { return error_offset_; }
  std::size_t duplicate_first() const { return duplicate_first_; }
  std::size_t duplicate_second() const { return duplicate_second_; }
  int too_deep_level() const { return too_deep_level_; }

 private:
  struct Frame {
    bool object = false;
    std::string key;                          // objects: the key of the value being read
    std::size_t count = 0;                    // arrays: values seen so far
    std::map<std::string, std::size_t> keys;  // objects: key -> its index among all keys
  };

  // Called at the start of every value: counts array elements.
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().count;
    return true;
  }
  bool open(bool object) {
    value();
    if (static_cast<int>(frames_.size()) >= limits::kMaxJsonDepth) {
      failure_kind_ = JsonParseFailure::Kind::too_deep;
      too_deep_level_ = static_cast<int>(frames_.size()) + 1;
      std::string p = path_of_frames(frames_.size());
      if (p.size() > 60) p = p.substr(0, 57) + "...";
      message_ = "nested deeper than the limit of " + std::to_string(limits::kMaxJsonDepth) +
                 " levels" + (p.empty() ? std::string() : " (at " + p + ")");
      return false;
    }
    Frame frame;
    frame.object = object;
    frames_.push_back(std::move(frame));
    return true;
  }
  // The path formed by the current children of the first `n` open containers.
  std::string path_of_frames(std::size_t n) const {
    std::string p;
    for (std::size_t i = 0; i < n && i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.object) {
        p += (p.empty() ? "" : ".") + f.key;
      } else {
        p += "[" + std::to_string(f.count > 0 ? f.count - 1 : 0) + "]";
      }
    }
    return p;
  }
  // The path of the innermost open container.
  std::string path() const { return path_of_frames(frames_.empty() ? 0 : frames_.size() - 1); }
  // The path of a value whose token failed before value() counted it.
  std::string pending_path() const {
    if (frames_.empty()) return "";
    const Frame& last = frames_.back();
    const std::string outer = path();
    if (last.object) return outer + (outer.empty() ? "" : ".") + last.key;
    return outer + "[" + std::to_string(last.count) + "]";
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<Frame> frames_;
  std::size_t keys_seen_ = 0;
  JsonParseFailure::Kind failure_kind_ = JsonParseFailure::Kind::syntax;
  std::string message_;
  std::size_t error_offset_ = 0;
  std::size_t duplicate_first_ = 0;
  std::size_t duplicate_second_ = 0;
  int too_deep_level_ = 0;
};

}  // namespace

bool parse_json_strict(std::string_view text, json& out, JsonParseFailure& failure) {
  json result;
  StrictSax sax(result);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/true);
  if (ok) {
    out = std::move(result);
    return true;
  }
  failure = JsonParseFailure{};
  failure.kind = sax.failure_kind();
  failure.message = sax.message();
  switch (failure.kind) {
    case JsonParseFailure::Kind::duplicate_key: {
      JsonParseFailure first;
      set_position(text, key_offset(text, sax.duplicate_first()), first);
      set_position(text, key_offset(text, sax.duplicate_second()), failure);
      failure.message += " (first at line " + std::to_string(first.line) + ", column " +
                         std::to_string(first.column) + "); which one is meant is ambiguous";
      break;
    }
    case JsonParseFailure::Kind::too_deep:
      set_position(text, depth_offset(text, sax.too_deep_level()), failure);
      break;
    case JsonParseFailure::Kind::syntax:
    case JsonParseFailure::Kind::number_out_of_range:
      set_position(text, sax.error_offset(), failure);
      break;
  }
  return false;
}

std::string dump_json(const json& v, int indent) {
  return v.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace trainsim::sim
