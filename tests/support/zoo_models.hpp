#pragma once
// Zoo-model helpers shared by the zoo tests: build a catalog model, count its parameters, find a
// layer by name.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <string_view>

#include "models/zoo/zoo.hpp"

namespace trainsim::test {

inline models::ZooModel build(const std::string& name,
                              const std::map<std::string, double>& overrides = {}) {
  return models::build_zoo_model(name, overrides, "--set");
}

inline double params_of(const models::ZooModel& m) {
  return static_cast<double>(m.params());
}

inline const models::Layer& layer_named(const models::ZooModel& m, const std::string& name) {
  for (const auto& l : m.layers) {
    if (l.name == name) return l;
  }
  FAIL("no layer " << name << " in " << m.name);
  return m.layers.front();
}

// The kernel `what` of layer `l`, forward or backward.
inline const models::KernelSpec& kernel_named(const models::Layer& l, std::string_view what) {
  for (const auto* ks : {&l.fwd_kernels, &l.bwd_kernels})
    for (const auto& k : *ks)
      if (what == k.what) return k;
  FAIL("no kernel " << what << " in " << l.name);
  return l.fwd_kernels.front();
}

}  // namespace trainsim::test
