#include <catch2/catch.hpp>

#include "sim/config/nearest_name.hpp"
#include "sim/config/units.hpp"

using trainsim::sim::Dimension;
using trainsim::sim::parse_quantity;

TEST_CASE("bandwidths distinguish bits from bytes and decimal from binary prefixes") {
  CHECK(*parse_quantity("900 GB/s", Dimension::bytes_per_s) == 900e9);
  CHECK(*parse_quantity("1 Gb/s", Dimension::bytes_per_s) == 125e6);
  CHECK(*parse_quantity("100 Gbps", Dimension::bytes_per_s) == 12.5e9);
  CHECK(*parse_quantity("1 GiB/s", Dimension::bytes_per_s) == 1073741824.0);
  CHECK(*parse_quantity("25 GBps", Dimension::bytes_per_s) == 25e9);
  CHECK(*parse_quantity("10 kbit/s", Dimension::bytes_per_s) == 1250.0);
  CHECK(*parse_quantity("3e9", Dimension::dimensionless) == 3e9);
}

TEST_CASE("sizes, durations and compute rates") {
  CHECK(*parse_quantity("80 GiB", Dimension::bytes) == 80.0 * 1073741824.0);
  CHECK(*parse_quantity("16 GB", Dimension::bytes) == 16e9);
  CHECK(*parse_quantity("8 Mb", Dimension::bytes) == 1e6);
  CHECK(*parse_quantity("512B", Dimension::bytes) == 512.0);
  CHECK(*parse_quantity("50 us", Dimension::seconds) == Approx(50e-6).epsilon(1e-15));
  CHECK(*parse_quantity("1.5 ms", Dimension::seconds) == Approx(1.5e-3).epsilon(1e-15));
  CHECK(*parse_quantity("2 ns", Dimension::seconds) == Approx(2e-9).epsilon(1e-15));
  CHECK(*parse_quantity("2 h", Dimension::seconds) == 7200.0);
  CHECK(*parse_quantity("312 TFLOP/s", Dimension::flops_per_s) == 312e12);
  CHECK(*parse_quantity("624 TOP/s", Dimension::flops_per_s) == 624e12);
  CHECK(*parse_quantity("85%", Dimension::dimensionless) == Approx(0.85));
  CHECK(*parse_quantity("300 W", Dimension::watts) == 300.0);
  CHECK(*parse_quantity("1.2 kW", Dimension::watts) == Approx(1200.0));
  CHECK_FALSE(parse_quantity("300 W", Dimension::flops_per_s));  // a power is not a rate
  CHECK_FALSE(parse_quantity("300", Dimension::watts));
}

TEST_CASE("wrong or unknown units are rejected") {
  CHECK_FALSE(parse_quantity("900 GB", Dimension::bytes_per_s));    // a size is not a bandwidth
  CHECK_FALSE(parse_quantity("900 gB/s", Dimension::bytes_per_s));  // no such prefix
  CHECK_FALSE(parse_quantity("50 usec", Dimension::seconds));
  CHECK_FALSE(parse_quantity("50", Dimension::seconds));  // bare strings need a unit
  CHECK_FALSE(parse_quantity("fast", Dimension::bytes_per_s));
  CHECK_FALSE(parse_quantity("", Dimension::bytes));
  CHECK_FALSE(parse_quantity("nan GB", Dimension::bytes));
  CHECK_FALSE(parse_quantity("1 kms", Dimension::seconds));  // time units take no prefix
}

TEST_CASE("nearest_name: one typo rule for keys, profiles and models", "[config]") {
  using trainsim::sim::levenshtein;
  using trainsim::sim::nearest_name;
  CHECK(levenshtein("kitten", "sitting") == 3);
  CHECK(levenshtein("", "abc") == 3);
  CHECK(levenshtein("ResNet50", "resnet50") == 0);
  CHECK(nearest_name("gpt2-xl", {"gpt2", "gpt2_xl", "bert_base"}) == "gpt2_xl");
  CHECK(nearest_name("bandwith", {"bandwidth", "latency"}) == "bandwidth");
  CHECK(nearest_name("zzzzzzzz", {"gpt2", "vgg16"}).empty());
  CHECK(nearest_name("x", {}).empty());
}

TEST_CASE("a quantity beyond double's range, before or after its unit's factor, is refused") {
  using trainsim::sim::parse_quantity_detailed;
  CHECK_FALSE(parse_quantity("1e999 GB", Dimension::bytes));
  CHECK_FALSE(parse_quantity("1e300 EB/s", Dimension::bytes_per_s));  // finite number, inf in B/s
  CHECK(parse_quantity_detailed("1e300 EB/s", Dimension::bytes_per_s).out_of_range);
  CHECK(parse_quantity_detailed("1e999 GB", Dimension::bytes).out_of_range);
  CHECK_FALSE(parse_quantity_detailed("1e999 apples", Dimension::bytes).out_of_range);
  CHECK(*parse_quantity("1e300 B/s", Dimension::bytes_per_s) == 1e300);
}
