#include "sim/config/json_source.hpp"

#include "sim/config/input_file.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/strict_json.hpp"
#include "sim/config/utf8.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::sim {

namespace {

bool is_path_prefix(const std::string& prefix, const std::string& path) {
  if (prefix.empty()) return true;
  if (path.size() < prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

}  // namespace

std::string JsonSource::origin_of(const std::string& path) const {
  const std::pair<const std::string, std::string>* best = nullptr;
  for (const auto& entry : origins) {
    if (is_path_prefix(entry.first, path) &&
        (best == nullptr || entry.first.size() > best->first.size())) {
      best = &entry;
    }
  }
  return best == nullptr ? file : best->second;
}

std::string JsonSource::describe(const std::string& path) const {
  const std::pair<const std::string, std::string>* best = nullptr;
  for (const auto& entry : origins) {
    if (is_path_prefix(entry.first, path) &&
        (best == nullptr || entry.first.size() > best->first.size())) {
      best = &entry;
    }
  }
  if (best == nullptr) return file + ": " + path;
  if (best->second.rfind("--set ", 0) == 0) return best->second + " (" + file + "): " + path;
  return best->second + " (via " + file + " " + best->first + "): " + path;
}

nlohmann::json parse_json_text(const std::string& text, const std::string& label) {
  nlohmann::json doc;
  JsonParseFailure failure;
  if (!parse_json_strict(text, doc, failure)) {
    throw InputError(
        label + ":" + std::to_string(failure.line) + ":" + std::to_string(failure.column),
        failure.message);
  }
  return doc;
}

nlohmann::json load_json_file(const std::string& path, const std::string& what) {
  return parse_json_text(read_input_file(path, limits::kMaxJsonFileBytes, what), path);
}

nlohmann::json parse_override_value(const std::string& text, const std::string& where) {
  if (!is_valid_utf8(text)) throw UsageError(where, "the value is not valid UTF-8 text");
  nlohmann::json value;
  JsonParseFailure failure;
  if (parse_json_strict(text, value, failure)) return value;
  // Bare words such as fp16 or resnet50 are strings; JSON that is too deep, repeats a key or
  // holds a number beyond double's range is an error, not a string. A quantity such as
  // "1e999 GB/s" starts like a number but is a string (its unit reader reports the range).
  if (failure.kind == JsonParseFailure::Kind::syntax) return text;
  if (failure.kind == JsonParseFailure::Kind::number_out_of_range) {
    const auto first = text.find_first_not_of(" \t");
    const bool container = first != std::string::npos && (text[first] == '[' || text[first] == '{');
    const auto last = text.find_last_not_of(" \t");
    const bool bare_number =
        last != std::string::npos && text.find_first_not_of("0123456789+-.eE", first) > last;
    if (!container && !bare_number) return text;
  }
  throw UsageError(where, failure.message);
}

void apply_override(nlohmann::json& doc, const std::string& assignment, JsonSource& source,
                    const StringExpander& expand) {
  const std::string where = "--set " + assignment;
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(where, "expected PATH=VALUE, e.g. --set parallelism.data=64");
  }
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  const nlohmann::json value = parse_override_value(text, where);
  const std::vector<std::string> parts = split_path(path);
  if (static_cast<int>(parts.size()) > limits::kMaxJsonDepth) {
    throw UsageError(
        where, "path '" + path.substr(0, 40) + "...' has " + std::to_string(parts.size()) +
                   " components, more than the limit of " + std::to_string(limits::kMaxJsonDepth));
  }
  nlohmann::json* node = &doc;
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& key = parts[i];
    if (key.empty()) throw UsageError(where, "empty component in path '" + path + "'");
    if (node->is_string() && expand) expand(walked, *node, source);
    if (node->is_null()) *node = nlohmann::json::object();
    if (!node->is_object()) {
      throw UsageError(where, "cannot set '" + path + "': '" + walked + "' is " +
                                  node->type_name() + ", not an object");
    }
    walked += (walked.empty() ? "" : ".") + key;
    node = &(*node)[key];
  }
  *node = value;
  // A later override of the same path or a parent replaces earlier origins below it.
  for (auto it = source.origins.begin(); it != source.origins.end();) {
    it = is_path_prefix(path, it->first) ? source.origins.erase(it) : std::next(it);
  }
  source.origins[path] = where;
  if (node->is_string() && expand) expand(path, *node, source);
}

}  // namespace trainsim::sim
