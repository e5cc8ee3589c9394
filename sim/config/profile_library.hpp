#pragma once
// The hardware profiles: the ones compiled into the binary plus any found in extra folders
// (a user's own profiles shadow built-in ones of the same kind and name). Turns profile JSON
// into validated spec structs; a cluster may be given by name or as an inline object whose
// node.host / node.accelerator / links are names of other profiles.

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/embedded_file.hpp"
#include "sim/config/json_reader.hpp"
#include "sim/config/provenance.hpp"
#include "sim/hw/specs.hpp"

namespace trainsim::sim {

struct ProfileEntry {
  std::string kind;  // accelerator | kernels | framework | host | link | cluster
  std::string name;
  std::string description;
  std::string origin;  // file path, or hw_profiles/<path> for embedded ones
  nlohmann::json json;
  // The source of every number and quantity, read from the file's comments at load time
  // (sim/config/provenance.hpp). A value with no source of its own in a profile that shadows one
  // of the same kind and name keeps the shadowed profile's source while the value is the same
  // (so a profile written by `calibrate --out` keeps the sources of the values it did not fit).
  ProfileProvenance provenance;
};

class ProfileLibrary {
 public:
  ProfileLibrary(std::span<const EmbeddedFile> embedded,
                 const std::vector<std::filesystem::path>& extra_dirs);

  std::vector<const ProfileEntry*> list() const;
  // Finds a profile by name (any kind when `kind` is empty); InputError with a suggestion if
  // absent.
  const ProfileEntry& find(const std::string& name, const std::string& kind,
                           const std::string& where) const;

  AcceleratorSpec accelerator(const std::string& name, const std::string& where) const;
  KernelEfficiency kernels(const std::string& name, const std::string& where) const;
  FrameworkSpec framework(const std::string& name, const std::string& where) const;
  HostSpec host(const std::string& name, const std::string& where) const;
  LinkSpec link(const std::string& name, const std::string& where) const;
  ClusterSpec cluster(const std::string& name, const std::string& where) const;
  // A cluster object (from a profile or inline in a scenario), read strictly.
  ClusterSpec cluster_from(JsonReader& r) const;

  // For overrides: turns a profile name into the profile's object so a --set can reach inside it:
  // the cluster at JSON path "cluster", and the profiles it names at "cluster.node.host",
  // "cluster.node.accelerator", "cluster.node.accelerator.kernels", "cluster.node.intra.link",
  // "cluster.node.host_link" and "cluster.inter.link". The origin is recorded in `source`;
  // cluster_from reads either form.
  bool expand_cluster(const std::string& path, nlohmann::json& node, JsonSource& source) const;

  // Sets the value at `path` ("a.b.c") inside profile (kind, name) and re-validates the profile
  // (calibration against reference tables varies profile values this way). InputError naming the
  // profile and path when it has no such value or the new one is rejected.
  void set_value(const std::string& kind, const std::string& name, const std::string& path,
                 const nlohmann::json& value);

 private:
  // `folder`: the kind folder the file was found in ("" for built-in profiles).
  void add(const std::string& origin, const std::string& text, const std::string& folder);

  std::map<std::pair<std::string, std::string>, ProfileEntry> entries_;  // (kind, name)
};

// The value at a dotted JSON path ("compute.gemm.fp32"; list items by index), or nullptr.
const nlohmann::json* value_at_path(const nlohmann::json& doc, const std::string& path);
nlohmann::json* value_at_path(nlohmann::json& doc, const std::string& path);

// An accelerator profile; its "kernels" (a kernels profile name, or an inline object) is looked up
// in `library`.
AcceleratorSpec read_accelerator(JsonReader& r, const ProfileLibrary& library);
KernelEfficiency read_kernels(JsonReader& r);
FrameworkSpec read_framework(JsonReader& r);
HostSpec read_host(JsonReader& r);
LinkSpec read_link(JsonReader& r);

}  // namespace trainsim::sim
