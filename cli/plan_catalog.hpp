#pragma once
// The hardware catalog `trainsim plan` chooses from: options of whole nodes, each a cluster
// profile (or an inline cluster object) whose node count is varied, with a price per node hour
// (rental) or a purchase price per node amortised over a stated period. Loaded strictly.
//
//   {"kind": "plan_catalog", "currency": "USD",
//    "options": [{"name": "aws-p4d", "cluster": "dgx-a100-x4", "price_per_node_hour": 32.77,
//                 "max_nodes": 16},
//                {"name": "buy-dgx-a100", "cluster": "dgx-a100-x4",
//                 "purchase_price_per_node": 199000, "amortization": "26280 h",
//                 "node_counts": [1, 2, 4]}]}

#include <optional>
#include <string>
#include <vector>

#include "sim/config/profile_library.hpp"

namespace trainsim::cli {

struct PlanOption {
  std::string name;
  std::string description;
  std::string cluster_value;  // the "cluster" override: a profile name or inline JSON object text
  std::string cluster_name;
  std::string accelerator;
  int accelerators_per_node = 1;
  std::vector<int> node_counts;    // ascending
  double price_per_node_hour = 0;  // rental price, or purchase price / amortization hours
  std::optional<double> purchase_price_per_node;
  double amortization_hours = 0;
};

struct PlanCatalog {
  std::string file;
  std::string currency;
  std::vector<PlanOption> options;
};

PlanCatalog load_plan_catalog(const std::string& path, const sim::ProfileLibrary& profiles);

}  // namespace trainsim::cli
