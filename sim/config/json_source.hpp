#pragma once
// Where the values of a JSON document came from, so an error can name the right origin: the
// scenario file, a profile file that was expanded into it, or a `--set PATH=VALUE` override.

#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace trainsim::sim {

struct JsonSource {
  std::string file;  // the document's own file (or "<embedded>/name")
  // JSON path prefix -> origin label, e.g. "cluster" -> "hw_profiles/clusters/dgx-a100.json",
  // "parallelism.data" -> "--set parallelism.data=64". The longest matching prefix wins.
  std::map<std::string, std::string> origins;

  // Origin label and path relative to it for an error at `path`.
  std::string describe(const std::string& path) const;
  // Just the origin of the value at `path`: "--set PATH=VALUE", a profile file or `file`.
  std::string origin_of(const std::string& path) const;
};

// Reads and parses a JSON file (comments allowed, see strict_json.hpp for what is refused). A
// missing file, a folder, a file over limits::kMaxJsonFileBytes or malformed JSON throws
// InputError naming the file, and the line and column of a syntax error. `what` names the
// file's role in messages ("scenario", "catalog").
nlohmann::json load_json_file(const std::string& path, const std::string& what = "JSON");
// Parses JSON text that came from `label` (a file name or "<embedded>/...").
nlohmann::json parse_json_text(const std::string& text, const std::string& label);
// The value of a `--set PATH=VALUE` (or --vary) as JSON: valid JSON is taken as JSON, anything
// else as a string. `where` labels errors (text that is not UTF-8, JSON nested too deep, with a
// repeated key or a number beyond double's range).
nlohmann::json parse_override_value(const std::string& text, const std::string& where);

// Turns a string found where an object is needed (e.g. "cluster": "dgx-a100") into that
// object (the profile's contents) so overrides can reach inside it; records the origin in
// `source`. Returns false when the string at `path` is not expandable.
using StringExpander =
    std::function<bool(const std::string& path, nlohmann::json& node, JsonSource& source)>;

// Applies "a.b.c=VALUE" to `doc`. VALUE is parsed as JSON when it is valid JSON, else taken as a
// string. Missing objects on the path are created; the leaf's origin is recorded in `source`.
void apply_override(nlohmann::json& doc, const std::string& assignment, JsonSource& source,
                    const StringExpander& expand = {});

}  // namespace trainsim::sim
