#include "cli/parameter_provenance.hpp"

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

#include "models/kernel_plan.hpp"
#include "sim/hw/dtype.hpp"
#include "sim/hw/kernel.hpp"

namespace trainsim::cli {

namespace {

// Where a scenario names profiles, each before the profiles it names in turn.
struct Reference {
  const char* path;
  const char* kind;
};
constexpr Reference kReferences[] = {{"cluster", "cluster"},
                                     {"cluster.node.accelerator", "accelerator"},
                                     {"cluster.node.accelerator.kernels", "kernels"},
                                     {"cluster.node.host", "host"},
                                     {"cluster.node.intra.link", "link"},
                                     {"cluster.node.host_link", "link"},
                                     {"cluster.inter.link", "link"},
                                     {"framework", "framework"}};

// The entries of a kernels profile the step's kernels are priced with (sim/hw/kernel_model.hpp):
// the tile and main-loop terms, the compute efficiency of each compute class in its dtype, the
// memory efficiency of each class run (compute classes use copy's).
std::set<std::string> kernel_paths(const models::Scenario& s, const sim::ProfileProvenance& k) {
  std::set<std::string> paths = {"gemm_tile.m", "gemm_tile.n", "gemm_tile.half_tile_throughput",
                                 "k_half", "memory.copy"};
  const std::vector<models::KernelUse> uses = models::kernel_uses(s);
  for (const models::KernelUse& u : uses) {
    const std::string cls = sim::kernel_class_name(u.cls);
    // Convolutions' tiles lose their own share per halving, and Winograd has a channel floor,
    // where the profile gives them.
    if (u.cls == sim::KernelClass::conv) {
      for (const char* path : {"gemm_tile.conv_half_tile_throughput", "winograd_min_channels"})
        if (k.find(path) != nullptr) paths.insert(path);
    }
    // Recurrent steps stream at what their thread blocks draw, where the profile says.
    if (u.cls == sim::KernelClass::recurrent && k.find("recurrent_block_bandwidth") != nullptr)
      paths.insert("recurrent_block_bandwidth");
    // And the cycles per element of the data-gradient steps the library walks serially at some
    // batches (counted whatever the batch: the uses do not carry it).
    if (u.cls == sim::KernelClass::recurrent &&
        k.find("recurrent_serial_data_gradient.cycles_per_element") != nullptr) {
      paths.insert("recurrent_serial_data_gradient.cycles_per_element");
    }
    // And the rates of the small-batch step kernels, where the profile gives them (counted
    // whatever the batch, as above).
    if (u.cls == sim::KernelClass::recurrent) {
      for (const char* path : {"recurrent_narrow_batch.forward_flops_per_cycle",
                               "recurrent_narrow_batch.data_gradient_peak_fraction"})
        if (k.find(path) != nullptr) paths.insert(path);
    }
    if (!sim::is_compute_class(u.cls)) {
      paths.insert("memory." + cls);
      continue;
    }
    std::string path = "compute." + cls + "." + sim::dtype_name(u.dtype);
    // As KernelEfficiency::effective_compute: fp16 and bf16 stand in for each other.
    if (k.find(path) == nullptr && (u.dtype == sim::Dtype::fp16 || u.dtype == sim::Dtype::bf16)) {
      path = "compute." + cls + "." + (u.dtype == sim::Dtype::fp16 ? "bf16" : "fp16");
    }
    paths.insert(path);
  }
  // The sustained-clock curve, where the board has a power limit for it to act on.
  const sim::AcceleratorSpec& a = s.cluster.accelerator;
  if (a.board_power_w && a.kernels.sustained_clock_hz > 0) {
    for (const char* leaf : {"clock", "unit_power", "power_clock_exponent"})
      paths.insert(std::string("sustained_clock.") + leaf);
    for (const models::KernelUse& u : uses) {
      if (sim::is_compute_class(u.cls))
        paths.insert(std::string("sustained_clock.flops_per_clock.") + sim::dtype_name(u.dtype));
    }
  }
  return paths;
}

// The parameters of kind `k`, grouped by profile in the order the profiles come, shortest paths
// first within a profile.
std::vector<const ParameterSource*> of_kind(const ResultProvenance& p, sim::ProvenanceKind k) {
  std::vector<std::string> profiles;
  for (const ParameterSource& x : p.parameters) {
    if (profiles.empty() || profiles.back() != x.profile) profiles.push_back(x.profile);
  }
  std::vector<const ParameterSource*> out;
  for (const ParameterSource& x : p.parameters) {
    if (x.provenance.kind == k) out.push_back(&x);
  }
  const auto rank = [&](const ParameterSource* x) {
    const auto at = std::find(profiles.begin(), profiles.end(), x->profile) - profiles.begin();
    return std::make_tuple(at, x->path.size(), x->path);
  };
  std::stable_sort(out.begin(), out.end(), [&](const ParameterSource* a, const ParameterSource* b) {
    return rank(a) < rank(b);
  });
  return out;
}

// "profile: a, b; profile: c, ..." with at most `max_names` names.
std::string name_list(const std::vector<const ParameterSource*>& list, std::size_t max_names) {
  std::string out;
  std::string profile;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i == max_names) {
      out += ", ...";
      break;
    }
    if (list[i]->profile != profile) {
      profile = list[i]->profile;
      out += (out.empty() ? "" : "; ") + profile + ": ";
    } else {
      out += ", ";
    }
    out += list[i]->path;
  }
  return out;
}

}  // namespace

int ResultProvenance::count(sim::ProvenanceKind k) const {
  return static_cast<int>(std::count_if(parameters.begin(), parameters.end(),
                                        [k](const auto& x) { return x.provenance.kind == k; }));
}

int ResultProvenance::sourced() const {
  return count(sim::ProvenanceKind::datasheet) + count(sim::ProvenanceKind::paper) +
         count(sim::ProvenanceKind::measured);
}

ResultProvenance result_provenance(nlohmann::json doc, sim::JsonSource source,
                                   const sim::ProfileLibrary& profiles,
                                   const models::Scenario& scenario) {
  // A scenario without "framework" runs the default one (models/scenario.cpp).
  if (doc.is_object() && !doc.contains("framework")) doc["framework"] = scenario.framework.name;
  ResultProvenance out;
  std::set<std::string> counted;  // a profile named twice (one link as two) counts once
  for (const Reference& ref : kReferences) {
    nlohmann::json* node = sim::value_at_path(doc, ref.path);
    if (node == nullptr) continue;
    if (node->is_string()) {  // a profile name no override reached inside: expand it as they do
      const sim::ProfileEntry& e =
          profiles.find(node->get<std::string>(), ref.kind, source.describe(ref.path));
      *node = e.json;
      source.origins[ref.path] = e.origin;
    }
    const auto origin = source.origins.find(ref.path);
    if (origin == source.origins.end()) continue;  // an inline object: the user's own values
    const sim::ProfileEntry* entry = nullptr;
    for (const sim::ProfileEntry* e : profiles.list()) {
      if (e->kind == ref.kind && e->origin == origin->second) entry = e;
    }
    if (entry == nullptr) continue;  // a whole object given by --set
    const std::string profile = entry->kind + "/" + entry->name;
    if (!counted.insert(profile).second) continue;
    const bool kernels = entry->kind == "kernels";
    const std::set<std::string> used =
        kernels ? kernel_paths(scenario, entry->provenance) : std::set<std::string>{};
    for (const sim::ProvenanceLeaf& leaf : entry->provenance.leaves) {
      if (kernels && !used.contains(leaf.path)) continue;
      // A value a --set replaced is the user's.
      const std::string path = std::string(ref.path) + "." + leaf.path;
      if (sim::value_at_path(doc, path) == nullptr || source.origin_of(path) != origin->second)
        continue;
      out.parameters.push_back({profile, leaf.path, leaf.provenance, path});
    }
  }
  return out;
}

nlohmann::json provenance_json(const ResultProvenance& p) {
  nlohmann::json estimates = nlohmann::json::array();
  for (const ParameterSource* x : of_kind(p, sim::ProvenanceKind::estimate))
    estimates.push_back(x->name());
  nlohmann::json unsourced = nlohmann::json::array();
  for (const ParameterSource* x : of_kind(p, sim::ProvenanceKind::unsourced))
    unsourced.push_back(x->name());
  return {{"parameters", p.parameters.size()},
          {"estimates", p.count(sim::ProvenanceKind::estimate)},
          {"calibrated", p.count(sim::ProvenanceKind::calibrated)},
          {"sourced", p.sourced()},
          {"unsourced", p.count(sim::ProvenanceKind::unsourced)},
          {"estimate_paths", estimates},
          {"unsourced_paths", unsourced}};
}

std::string provenance_line(const ResultProvenance& p, std::size_t max_names) {
  const auto estimates = of_kind(p, sim::ProvenanceKind::estimate);
  std::string line = std::to_string(estimates.size()) + " of the " +
                     std::to_string(p.parameters.size()) +
                     " parameters behind this result are estimates";
  if (!estimates.empty()) line += ": " + name_list(estimates, max_names);
  const auto unsourced = of_kind(p, sim::ProvenanceKind::unsourced);
  if (!unsourced.empty()) {
    line += "; " + std::to_string(unsourced.size()) + (unsourced.size() == 1 ? " has" : " have") +
            " no source: " + name_list(unsourced, max_names);
  }
  return line;
}

}  // namespace trainsim::cli
