#pragma once
// Weighted max-min fair sharing of resources (link directions) among variables (flows), solved by
// progressive filling: every unfixed variable on a resource grows at a speed proportional to its
// weight; the resource whose capacity runs out first (lowest level = remaining capacity / sum of
// unfixed weights) fixes its variables at weight x level, and so on. This is SimGrid's lmm
// "maxmin" solver with sharing penalty = 1 / weight.
//
// Incremental: adding or removing a variable marks its resources dirty, and solve() re-solves only
// the connected components (resources linked by shared variables) that contain a dirty resource.
// Everything is plain vectors in a fixed order, so the same calls give bit-identical rates.

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace trainsim::sim {

class MaxMinSolver {
 public:
  using ResourceId = std::uint32_t;
  using VarId = std::uint32_t;
  static constexpr VarId kNoVar = std::numeric_limits<VarId>::max();

  ResourceId add_resource(double capacity);
  // Changes a resource's capacity (positive, finite); its component is re-solved next time.
  void set_capacity(ResourceId r, double capacity);
  std::size_t num_resources() const { return resources_.size(); }

  // The variable's rate is 0 until the next solve(). A resource may appear at most once.
  VarId add_variable(double weight, std::span<const ResourceId> resources);
  void remove_variable(VarId v);
  double rate(VarId v) const { return vars_[v].rate; }
  std::size_t num_variables() const { return live_vars_; }

  // Re-solves the dirty components and calls on_change(var, new_rate) for every variable of those
  // components whose rate changed (new variables included), in a deterministic order. Returns the
  // number of variables re-solved.
  template <typename OnChange>
  std::size_t solve(OnChange&& on_change) {
    const std::size_t n = collect_components();
    fill();
    for (VarId v : comp_vars_) {
      Var& var = vars_[v];
      if (var.new_rate != var.rate) {
        var.rate = var.new_rate;
        on_change(v, var.rate);
      }
    }
    return n;
  }

 private:
  struct Elem {
    ResourceId resource;
    std::uint32_t pos;  // index of this variable in the resource's var list
  };
  struct Var {
    double weight = 0;
    double rate = 0;
    double new_rate = 0;
    std::vector<Elem> elems;
    std::uint32_t epoch = 0;
    bool live = false;
    bool fixed = false;
  };
  struct VarRef {
    VarId var;
    std::uint32_t elem;  // index into the variable's elems
  };
  struct Resource {
    double capacity = 0;
    std::vector<VarRef> vars;
    std::uint32_t epoch = 0;
    bool dirty = false;
    // progressive-filling scratch
    double remaining = 0;
    double weight_sum = 0;
    std::uint32_t unfixed = 0;
    std::uint32_t version = 0;
  };
  struct Level {
    double level;
    ResourceId resource;
    std::uint32_t version;
  };

  void mark_dirty(ResourceId r);
  std::size_t collect_components();
  void fill();
  void push_level(ResourceId r, double floor);

  std::vector<Resource> resources_;
  std::vector<Var> vars_;
  std::vector<VarId> free_vars_;
  std::size_t live_vars_ = 0;
  std::vector<ResourceId> dirty_;
  std::uint32_t epoch_ = 0;
  // scratch
  std::vector<ResourceId> comp_resources_;
  std::vector<VarId> comp_vars_;
  std::vector<Level> heap_;
};

}  // namespace trainsim::sim
