// Hostile catalogs and options of `trainsim plan`.
#include "hostile/hostile_support.hpp"

using trainsim::test::deep_array;
using trainsim::test::with;

namespace {

std::string catalog(const std::string& option) {
  return R"({"kind": "plan_catalog", "currency": "USD", "options": [)" + option + "]}";
}
const std::string kRental =
    R"({"name": "rent", "cluster": "dgx-a100-x4", "price_per_node_hour": 30, "node_counts": [1]})";
const char* const kCatalog = "@src/examples/plan_catalog.json";

}  // namespace

HOSTILE("catalog nested 100,000 deep", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"@/c.json:1:", "nested deeper than the limit of 64 levels"},
        {{"c.json", "{\"kind\": \"plan_catalog\", \"currency\": " + deep_array(100000) + "}"}})
HOSTILE("catalog is a folder", {"plan", "--catalog", "@src/examples", "--target", "1"}, 2,
        {"examples: is a folder, not a catalog file"})
HOSTILE("catalog that does not exist", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"@/c.json: cannot open catalog file: it does not exist"})
HOSTILE("catalog price 1e308 per hour", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"@/c.json: options[0].price_per_node_hour: value 1e+308 is above the limit of 1e9"},
        {{"c.json", catalog(with(kRental, "30", "1e308"))}})
HOSTILE("catalog price -1", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[0].price_per_node_hour: value -1 must be positive"},
        {{"c.json", catalog(with(kRental, "30", "-1"))}})
HOSTILE("catalog price overflow", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[0].price_per_node_hour: number 1e400 is out of range"},
        {{"c.json", catalog(with(kRental, "30", "1e400"))}})
HOSTILE("catalog purchase price 1e300", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[0].purchase_price_per_node: value 1e+300 is above the limit of 1e12"},
        {{"c.json",
          catalog(with(kRental, "\"price_per_node_hour\": 30",
                       "\"purchase_price_per_node\": 1e300, \"amortization\": \"3 y\""))}})
HOSTILE("catalog amortization of 1 ps", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[0].amortization: value \"1 ps\" is outside 1 h to 100 years"},
        {{"c.json",
          catalog(with(kRental, "\"price_per_node_hour\": 30",
                       "\"purchase_price_per_node\": 1000, \"amortization\": \"1 ps\""))}})
HOSTILE("catalog max_nodes 1e9", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[0].max_nodes: value 1000000000 is above the limit of 262144"},
        {{"c.json", catalog(with(kRental, "\"node_counts\": [1]", "\"max_nodes\": 1e9"))}})
HOSTILE("catalog node count 0", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[0].node_counts: element 0 must be at least 1"},
        {{"c.json", catalog(with(kRental, "[1]", "[0]"))}})
HOSTILE("catalog node count 1.5", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[0].node_counts: expected an integer, got 1.5"},
        {{"c.json", catalog(with(kRental, "[1]", "[1.5]"))}})
HOSTILE("catalog without node counts", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[0].node_counts: must not be empty"},
        {{"c.json", catalog(with(kRental, "[1]", "[]"))}})
HOSTILE("catalog with no options", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"@/c.json: options: the catalog has no options"}, {{"c.json", catalog("")}})
HOSTILE("catalog description that is a number", {"plan", "--catalog", "@/c.json", "--target", "1"},
        2, {"@/c.json: description: expected a string, got 5"},
        {{"c.json",
          R"({"kind": "plan_catalog", "description": 5, "currency": "USD", "options": []})"}})
HOSTILE("catalog of the wrong kind", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"@/c.json: kind: value \"scenario\" is not one of plan_catalog"},
        {{"c.json", R"({"kind": "scenario"})"}})
HOSTILE("catalog naming an unknown cluster", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"@/c.json: options[0].cluster: unknown cluster profile \"dgx-a100-x5\""},
        {{"c.json", catalog(with(kRental, "dgx-a100-x4", "dgx-a100-x5"))}})
HOSTILE("catalog option named twice", {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[1].name: option name 'rent' is used twice"},
        {{"c.json", catalog(kRental + "," + kRental)}})
HOSTILE("catalog with a single-node cluster grown",
        {"plan", "--catalog", "@/c.json", "--target", "1"}, 2,
        {"options[0].cluster: cluster 'dgx-a100' has no inter-node network"},
        {{"c.json", catalog(with(with(kRental, "dgx-a100-x4", "dgx-a100"), "[1]", "[1, 2]"))}})
HOSTILE("--epochs 0 echoes the value",
        {"plan", "--catalog", kCatalog, "--target", "24 h", "--epochs", "0", "--dataset-samples",
         "1000"},
        2, {"--epochs 0: expected a number above 0 up to 1e+06"})
HOSTILE("--epochs -1",
        {"plan", "--catalog", kCatalog, "--target", "1", "--epochs", "-1", "--dataset-samples",
         "10"},
        2, {"--epochs -1: expected a number above 0"})
HOSTILE("--epochs inf",
        {"plan", "--catalog", kCatalog, "--target", "1", "--epochs", "inf", "--dataset-samples",
         "10"},
        2, {"--epochs inf: expected a number"})
HOSTILE("--epochs nan",
        {"plan", "--catalog", kCatalog, "--target", "1", "--epochs", "nan", "--dataset-samples",
         "10"},
        2, {"--epochs nan: expected a number"})
HOSTILE("--epochs 1e300",
        {"plan", "--catalog", kCatalog, "--target", "1", "--epochs", "1e300", "--dataset-samples",
         "10"},
        2, {"--epochs 1e300: expected a number above 0 up to 1e+06"})
HOSTILE("--epochs abc",
        {"plan", "--catalog", kCatalog, "--target", "1", "--epochs", "abc", "--dataset-samples",
         "10"},
        2, {"--epochs abc: expected a number"})
HOSTILE("--dataset-samples 1.5",
        {"plan", "--catalog", kCatalog, "--target", "1", "--epochs", "1", "--dataset-samples",
         "1.5"},
        2, {"--dataset-samples 1.5: expected an integer from 1 to 1000000000000000"})
HOSTILE("--dataset-samples 0",
        {"plan", "--catalog", kCatalog, "--target", "1", "--epochs", "1", "--dataset-samples", "0"},
        2, {"--dataset-samples 0: expected an integer"})
HOSTILE("--dataset-samples 1e300",
        {"plan", "--catalog", kCatalog, "--target", "1", "--epochs", "1", "--dataset-samples",
         "1e300"},
        2, {"--dataset-samples 1e300: expected an integer"})
HOSTILE("--max-pipeline 0 echoes the value",
        {"plan", "--catalog", kCatalog, "--target", "1", "--max-pipeline", "0"}, 2,
        {"--max-pipeline 0: expected an integer from 1 to 262144"})
HOSTILE("--max-pipeline 3", {"plan", "--catalog", kCatalog, "--target", "1", "--max-pipeline", "3"},
        2, {"--max-pipeline 3: expected a power of two"})
HOSTILE("--max-pipeline 1e9",
        {"plan", "--catalog", kCatalog, "--target", "1", "--max-pipeline", "1e9"}, 2,
        {"--max-pipeline 1e9: expected an integer from 1 to 262144"})
HOSTILE("--max-pipeline abc",
        {"plan", "--catalog", kCatalog, "--target", "1", "--max-pipeline", "abc"}, 2,
        {"--max-pipeline abc: expected an integer"})
HOSTILE("plan --jobs 0", {"plan", "--catalog", kCatalog, "--target", "1", "--jobs", "0"}, 2,
        {"--jobs 0: expected an integer from 1 to 1024"})
HOSTILE("plan --jobs 100000", {"plan", "--catalog", kCatalog, "--target", "1", "--jobs", "100000"},
        2, {"--jobs 100000: expected an integer from 1 to 1024"})
HOSTILE("--target 1e999", {"plan", "--catalog", kCatalog, "--target", "1e999"}, 2,
        {"--target 1e999: expected a throughput such as '20000 samples/s'"})
HOSTILE("--target abc", {"plan", "--catalog", kCatalog, "--target", "abc"}, 2,
        {"--target abc: expected a throughput"})
HOSTILE("--target 0 samples/s", {"plan", "--catalog", kCatalog, "--target", "0 samples/s"}, 2,
        {"--target 0 samples/s: expected a throughput"})
HOSTILE("--target -5 h",
        {"plan", "--catalog", kCatalog, "--target", "-5 h", "--epochs", "1", "--dataset-samples",
         "10"},
        2, {"--target -5 h: the time must be positive"})
HOSTILE("time target without the work", {"plan", "--catalog", kCatalog, "--target", "24 h"}, 2,
        {"--target 24 h: a time target needs --epochs E and --dataset-samples D"})
HOSTILE("--epochs without --dataset-samples",
        {"plan", "--catalog", kCatalog, "--target", "1", "--epochs", "3"}, 2,
        {"--epochs/--dataset-samples: give both"})
HOSTILE("plan --format xml", {"plan", "--catalog", kCatalog, "--target", "1", "--format", "xml"}, 2,
        {"--format xml: expected text, json or csv"})
HOSTILE("plan without --catalog", {"plan", "--target", "1"}, 2, {"catalog"})
HOSTILE("plan with a bad scenario --set",
        {"plan", "--catalog", kCatalog, "--target", "1", "--set", "steps=1e999"}, 2,
        {"--set steps=1e999: number 1e999 is out of range"})
HOSTILE("plan with enormous work prints finite hours and costs",
        {"plan", "--catalog", "@/c.json", "--target", "24 h", "--epochs", "1e6",
         "--dataset-samples", "1e15", "--set", "steps=3", "--set", "warmup_steps=1",
         // Data parallelism alone: the costs are what is checked, not the layout search.
         "--max-pipeline", "1", "--max-tensor", "1"},
        0, {"no layout meets the target", "e+13 h ", "e+14 USD"},
        {{"c.json", catalog(with(kRental, "[1]", "[1, 2]"))}})
HOSTILE("plan with a tiny amortization keeps costs finite",
        {"plan", "--catalog", "@/c.json", "--target", "1", "--set", "steps=3", "--set",
         "warmup_steps=1", "--format", "csv", "--max-pipeline", "1", "--max-tensor", "1"},
        0, {"cheapest_meeting_target"},
        {{"c.json", catalog(with(kRental, "\"price_per_node_hour\": 30",
                                 "\"purchase_price_per_node\": 1e12, \"amortization\": \"1 h\""))}})
