#include "cli/scenario_source.hpp"

#include <span>

#include <nlohmann/json.hpp>

#include "sim/config/embedded_file.hpp"
#include "sim/config/json_source.hpp"

namespace trainsim::examples {
std::span<const sim::EmbeddedFile> embedded_files();
}

namespace trainsim::cli {

std::string scenario_label(const std::string& file, const std::vector<std::string>& overrides) {
  std::string label = file.empty() ? std::string("<built-in>/examples/") + kDefaultScenario : file;
  for (std::size_t i = 0; i < overrides.size(); ++i)
    label += (i == 0 ? " with --set " : " --set ") + overrides[i];
  return label;
}

namespace {

// The scenario file's document (the built-in default when `file` is empty) and its label.
nlohmann::json scenario_doc(const std::string& file, std::string& label) {
  nlohmann::json doc;
  label = file;
  if (file.empty()) {
    label = std::string("<built-in>/examples/") + kDefaultScenario;
    for (const auto& f : examples::embedded_files()) {
      if (f.path == kDefaultScenario) doc = sim::parse_json_text(std::string(f.content), label);
    }
  } else {
    doc = sim::load_json_file(file, "scenario");
  }
  return doc;
}

}  // namespace

models::Scenario load_scenario_source(const std::string& file,
                                      const std::vector<std::string>& overrides,
                                      const sim::ProfileLibrary& profiles) {
  std::string label;
  nlohmann::json doc = scenario_doc(file, label);
  return models::load_scenario(std::move(doc), label, overrides, profiles);
}

nlohmann::json resolved_scenario_doc(const std::string& file,
                                     const std::vector<std::string>& overrides,
                                     const sim::ProfileLibrary& profiles, sim::JsonSource& source) {
  nlohmann::json doc = scenario_doc(file, source.file);
  const sim::StringExpander expand = models::scenario_expander(profiles);
  for (const std::string& o : overrides)
    sim::apply_override(doc, o, source, expand);
  return doc;
}

}  // namespace trainsim::cli
