#pragma once
// The profile values a simulated result depends on, with their sources (sim/config/provenance.hpp):
// every number and quantity of the profiles the scenario uses (the cluster, its accelerator, host
// and links, the framework) and, of the accelerator's kernels profile, only the entries the step's
// kernels are priced with (models::kernel_uses): compute[class][dtype] of the compute classes it
// runs, memory[class] of the classes it runs, memory.copy, gemm_tile and k_half. Values the user
// gave (in the scenario file, inline profiles, or a --set reaching inside a profile) are the
// user's inputs, not parameters, and are left out.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "sim/config/json_source.hpp"
#include "sim/config/profile_library.hpp"
#include "sim/config/provenance.hpp"

namespace trainsim::cli {

struct ParameterSource {
  std::string profile;  // "kind/name", e.g. "kernels/nvidia-ampere-ga100"
  std::string path;     // JSON path inside the profile, e.g. "compute.conv.fp16"
  sim::Provenance provenance;
  std::string scenario_path;  // where a --set reaches it, e.g. "framework.host.per_step"

  std::string name() const { return profile + ":" + path; }
};

struct ResultProvenance {
  // By profile (cluster, accelerator, kernels, host, links, framework), each profile once, its
  // values in document order.
  std::vector<ParameterSource> parameters;

  int count(sim::ProvenanceKind k) const;
  int sourced() const;  // datasheet, paper or measured
};

// The parameters behind a simulation of `scenario`, read from its resolved document and origins
// (resolved_scenario_doc in cli/scenario_source.hpp).
ResultProvenance result_provenance(nlohmann::json doc, sim::JsonSource source,
                                   const sim::ProfileLibrary& profiles,
                                   const models::Scenario& scenario);

// {"parameters", "estimates", "calibrated", "sourced", "unsourced", "estimate_paths",
// "unsourced_paths"}; paths as "kind/name:path".
nlohmann::json provenance_json(const ResultProvenance& p);

// "N of the M parameters behind this result are estimates: <profile>: a, b; <profile>: c, ..."
// (shortest paths first within each profile, at most `max_names` names), plus the unsourced ones
// when there are any.
std::string provenance_line(const ResultProvenance& p, std::size_t max_names = 8);

}  // namespace trainsim::cli
