#include "cli/plan_catalog.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include "sim/config/json_reader.hpp"
#include "sim/config/json_source.hpp"
#include "sim/config/limits.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {
namespace {

constexpr double kSecondsPerHour = 3600;
constexpr double kMaxPricePerNodeHour = 1e9;
constexpr double kMaxPurchasePrice = 1e12;
constexpr double kMaxAmortizationHours = 876000;  // 100 years

PlanOption read_option(sim::JsonReader& r, const sim::ProfileLibrary& profiles) {
  PlanOption o;
  o.name = r.string("name");
  o.description = r.string_or("description", "");
  sim::ClusterSpec cluster;
  if (r.has("cluster") && r.raw()["cluster"].is_string()) {
    o.cluster_value = r.string("cluster");
    cluster = profiles.cluster(o.cluster_value, r.where("cluster"));
  } else {
    sim::JsonReader c = r.object("cluster");
    cluster = profiles.cluster_from(c);
    o.cluster_value = c.raw().dump();
  }
  o.cluster_name = cluster.name;
  o.accelerator = cluster.accelerator.name;
  o.accelerators_per_node = cluster.accelerators_per_node;
  const bool rental = r.has("price_per_node_hour");
  const bool bought = r.has("purchase_price_per_node");
  if (rental == bought) {
    r.fail_here(
        "give exactly one of price_per_node_hour (rental) or purchase_price_per_node "
        "(with amortization)");
  }
  // Prices far above any hardware's (a DGX node rents for ~30-100 USD per hour and sells for
  // ~0.2-0.5 M USD) keep every cost finite; amortization from 1 hour to 100 years.
  if (rental) {
    o.price_per_node_hour = r.number("price_per_node_hour", sim::Bound::positive);
    if (o.price_per_node_hour > kMaxPricePerNodeHour) {
      r.fail("price_per_node_hour", "value " + sim::show_json(r.raw()["price_per_node_hour"]) +
                                        " is above the limit of 1e9 per node hour");
    }
  } else {
    o.purchase_price_per_node = r.number("purchase_price_per_node", sim::Bound::positive);
    if (*o.purchase_price_per_node > kMaxPurchasePrice) {
      r.fail("purchase_price_per_node", "value " +
                                            sim::show_json(r.raw()["purchase_price_per_node"]) +
                                            " is above the limit of 1e12 per node");
    }
    o.amortization_hours =
        r.quantity("amortization", sim::Dimension::seconds, sim::Bound::positive) / kSecondsPerHour;
    if (o.amortization_hours < 1 || o.amortization_hours > kMaxAmortizationHours) {
      r.fail("amortization", "value " + sim::show_json(r.raw()["amortization"]) +
                                 " is outside 1 h to 100 years (876000 h)");
    }
    o.price_per_node_hour = *o.purchase_price_per_node / o.amortization_hours;
  }
  const bool has_max = r.has("max_nodes");
  const bool has_counts = r.has("node_counts");
  if (has_max == has_counts) r.fail_here("give exactly one of max_nodes or node_counts");
  if (has_max) {
    const auto max_nodes = r.integer("max_nodes", 1, sim::limits::kMaxAccelerators);
    for (std::int64_t n = 1; n < max_nodes; n *= 2)
      o.node_counts.push_back(static_cast<int>(n));
    o.node_counts.push_back(static_cast<int>(max_nodes));
  } else {
    for (const auto n : r.integer_list("node_counts", 1, sim::limits::kMaxAccelerators))
      o.node_counts.push_back(static_cast<int>(n));
    if (o.node_counts.empty()) r.fail("node_counts", "must not be empty");
  }
  std::sort(o.node_counts.begin(), o.node_counts.end());
  o.node_counts.erase(std::unique(o.node_counts.begin(), o.node_counts.end()), o.node_counts.end());
  if (o.node_counts.back() > 1 && !cluster.inter_link) {
    r.fail("cluster", "cluster '" + cluster.name +
                          "' has no inter-node network (\"inter\"), so it "
                          "cannot grow beyond one node; use a multi-node cluster profile");
  }
  r.done();
  return o;
}

}  // namespace

PlanCatalog load_plan_catalog(const std::string& path, const sim::ProfileLibrary& profiles) {
  const nlohmann::json doc = sim::load_json_file(path, "catalog");
  auto source = std::make_shared<sim::JsonSource>();
  source->file = path;
  sim::JsonReader r(doc, source);
  PlanCatalog c;
  c.file = path;
  r.choice("kind", {"plan_catalog"});
  (void)r.string_or("description", "");
  c.currency = r.string("currency");
  std::set<std::string> names;
  for (sim::JsonReader& o : r.objects("options")) {
    PlanOption option = read_option(o, profiles);
    if (!names.insert(option.name).second)
      o.fail("name", "option name '" + option.name + "' is used twice");
    c.options.push_back(std::move(option));
  }
  if (c.options.empty()) r.fail("options", "the catalog has no options");
  r.done();
  return c;
}

}  // namespace trainsim::cli
