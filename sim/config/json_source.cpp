#include "sim/config/json_source.hpp"

#include <fstream>
#include <sstream>

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
  try {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/true,
                                 /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports a byte offset; users want line and column.
    std::size_t line = 1;
    std::size_t col = 1;
    const std::size_t end = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    const auto pos = what.find("syntax error");
    if (pos != std::string::npos) what = what.substr(pos);
    throw InputError(label + ":" + std::to_string(line) + ":" + std::to_string(col),
                     "malformed JSON: " + what);
  }
}

nlohmann::json load_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open file (does it exist and is it readable?)");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_json_text(ss.str(), path);
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
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error&) {
    value = text;  // bare words such as fp16 or resnet50 are strings
  }
  const std::vector<std::string> parts = split_path(path);
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
