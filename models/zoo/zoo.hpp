#pragma once
// The model zoo's public entry points: the catalog of networks and the builder that generates one
// from its hyper-parameters.

#include <map>
#include <string>
#include <vector>

#include "models/zoo/zoo_model.hpp"

namespace trainsim::models {

struct ModelInfo {
  std::string name;
  std::string description;
  std::map<std::string, double> defaults;
};

// Every model, in catalog order.
std::vector<ModelInfo> zoo_catalog();

// Generates `name` with `overrides` applied over its defaults. Every hyper-parameter is a positive
// integer. Throws InputError naming `where` (e.g. "--set"), the key and the value for an unknown
// model or hyper-parameter (suggesting the nearest valid name), a value that is not a positive
// integer, or a combination whose shapes do not work out.
ZooModel build_zoo_model(const std::string& name, const std::map<std::string, double>& overrides,
                         const std::string& where);

}  // namespace trainsim::models
