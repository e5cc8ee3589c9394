#include "sim/net/max_min.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainsim::sim {

namespace {
// Min-heap order on (level, resource id): ties resolve by id, never by insertion history.
bool later(const auto& x, const auto& y) {
  return x.level > y.level || (x.level == y.level && x.resource > y.resource);
}
}  // namespace

MaxMinSolver::ResourceId MaxMinSolver::add_resource(double capacity) {
  if (!(capacity > 0) || !std::isfinite(capacity)) {
    throw std::invalid_argument("MaxMinSolver: resource capacity must be positive and finite");
  }
  resources_.push_back(Resource{});
  resources_.back().capacity = capacity;
  return static_cast<ResourceId>(resources_.size() - 1);
}

void MaxMinSolver::set_capacity(ResourceId r, double capacity) {
  if (!(capacity > 0) || !std::isfinite(capacity)) {
    throw std::invalid_argument("MaxMinSolver: resource capacity must be positive and finite");
  }
  if (r >= resources_.size()) throw std::invalid_argument("MaxMinSolver: unknown resource");
  resources_[r].capacity = capacity;
  mark_dirty(r);
}

MaxMinSolver::VarId MaxMinSolver::add_variable(double weight,
                                               std::span<const ResourceId> resources) {
  if (!(weight > 0) || !std::isfinite(weight)) {
    throw std::invalid_argument("MaxMinSolver: variable weight must be positive and finite");
  }
  VarId v;
  if (!free_vars_.empty()) {
    v = free_vars_.back();
    free_vars_.pop_back();
  } else {
    v = static_cast<VarId>(vars_.size());
    vars_.emplace_back();
  }
  Var& var = vars_[v];
  var.weight = weight;
  var.rate = 0;
  var.new_rate = 0;
  var.live = true;
  var.elems.clear();
  for (ResourceId r : resources) {
    if (r >= resources_.size()) throw std::invalid_argument("MaxMinSolver: unknown resource");
    Resource& res = resources_[r];
    var.elems.push_back(Elem{r, static_cast<std::uint32_t>(res.vars.size())});
    res.vars.push_back(VarRef{v, static_cast<std::uint32_t>(var.elems.size() - 1)});
    mark_dirty(r);
  }
  ++live_vars_;
  return v;
}

void MaxMinSolver::remove_variable(VarId v) {
  Var& var = vars_[v];
  if (!var.live) throw std::logic_error("MaxMinSolver: variable removed twice");
  for (const Elem& e : var.elems) {
    Resource& res = resources_[e.resource];
    // Swap-remove, fixing the back-pointer of the variable that moves into the hole.
    const VarRef moved = res.vars.back();
    res.vars[e.pos] = moved;
    vars_[moved.var].elems[moved.elem].pos = e.pos;
    res.vars.pop_back();
    mark_dirty(e.resource);
  }
  var.elems.clear();
  var.live = false;
  var.rate = 0;
  free_vars_.push_back(v);
  --live_vars_;
}

void MaxMinSolver::mark_dirty(ResourceId r) {
  if (!resources_[r].dirty) {
    resources_[r].dirty = true;
    dirty_.push_back(r);
  }
}

std::size_t MaxMinSolver::collect_components() {
  ++epoch_;
  comp_resources_.clear();
  comp_vars_.clear();
  // Breadth-first over resource -> variables -> resources, seeded by the dirty resources in the
  // order they were dirtied (deterministic).
  for (ResourceId seed : dirty_) {
    resources_[seed].dirty = false;
    if (resources_[seed].epoch == epoch_) continue;
    resources_[seed].epoch = epoch_;
    std::size_t head = comp_resources_.size();
    comp_resources_.push_back(seed);
    while (head < comp_resources_.size()) {
      const Resource& res = resources_[comp_resources_[head++]];
      for (const VarRef& ref : res.vars) {
        Var& var = vars_[ref.var];
        if (var.epoch == epoch_) continue;
        var.epoch = epoch_;
        comp_vars_.push_back(ref.var);
        for (const Elem& e : var.elems) {
          if (resources_[e.resource].epoch != epoch_) {
            resources_[e.resource].epoch = epoch_;
            comp_resources_.push_back(e.resource);
          }
        }
      }
    }
  }
  dirty_.clear();
  return comp_vars_.size();
}

void MaxMinSolver::push_level(ResourceId r, double floor) {
  Resource& res = resources_[r];
  // Levels only rise during progressive filling; clamping keeps rounding in the running sums
  // from producing a level below the one already reached.
  const double level = std::max(res.remaining / res.weight_sum, floor);
  heap_.push_back(Level{level, r, ++res.version});
  std::push_heap(heap_.begin(), heap_.end(),
                 [](const Level& x, const Level& y) { return later(x, y); });
}

void MaxMinSolver::fill() {
  auto cmp = [](const Level& x, const Level& y) { return later(x, y); };
  heap_.clear();
  for (VarId v : comp_vars_)
    vars_[v].fixed = false;
  for (ResourceId r : comp_resources_) {
    Resource& res = resources_[r];
    res.remaining = res.capacity;
    res.weight_sum = 0;
    res.unfixed = static_cast<std::uint32_t>(res.vars.size());
    for (const VarRef& ref : res.vars)
      res.weight_sum += vars_[ref.var].weight;
    if (res.unfixed > 0) push_level(r, 0.0);
  }
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    const Level top = heap_.back();
    heap_.pop_back();
    Resource& bottleneck = resources_[top.resource];
    if (top.version != bottleneck.version || bottleneck.unfixed == 0) continue;  // stale entry
    for (const VarRef& ref : bottleneck.vars) {
      Var& var = vars_[ref.var];
      if (var.fixed) continue;
      var.fixed = true;
      var.new_rate = var.weight * top.level;
      for (const Elem& e : var.elems) {
        Resource& res = resources_[e.resource];
        res.remaining -= var.new_rate;
        res.weight_sum -= var.weight;
        --res.unfixed;
      }
    }
    // Re-level the resources whose unfixed set shrank (those sharing a just-fixed variable).
    for (const VarRef& ref : bottleneck.vars) {
      for (const Elem& e : vars_[ref.var].elems) {
        Resource& res = resources_[e.resource];
        if (e.resource != top.resource && res.unfixed > 0 && res.epoch == epoch_) {
          res.epoch = epoch_ + 1;  // re-level once per round
          push_level(e.resource, top.level);
        }
      }
    }
    for (const VarRef& ref : bottleneck.vars) {
      for (const Elem& e : vars_[ref.var].elems)
        resources_[e.resource].epoch = epoch_;
    }
  }
}

}  // namespace trainsim::sim
