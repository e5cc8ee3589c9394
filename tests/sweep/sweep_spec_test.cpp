// --vary parsing: lists, ranges and the cross-product order.

#include <catch2/catch.hpp>

#include "cli/sweep_spec.hpp"
#include "sim/core/input_error.hpp"

using trainsim::cli::parse_vary;
using trainsim::cli::parse_vary_list;
using trainsim::cli::row_count;
using trainsim::cli::row_indices;
using trainsim::cli::row_overrides;
using Values = std::vector<std::string>;

TEST_CASE("a list of values is split on top-level commas only") {
  const auto a = parse_vary(R"(model={"name":"resnet","depth":50},vgg16,"a,b",[1,2])");
  CHECK(a.path == "model");
  CHECK(a.values == Values{R"({"name":"resnet","depth":50})", "vgg16", R"("a,b")", "[1,2]"});
}

TEST_CASE("geometric range 1..1024x2 has the 11 powers of two") {
  const auto a = parse_vary("parallelism.data=1..1024x2");
  REQUIRE(a.values.size() == 11);
  CHECK(a.values.front() == "1");
  CHECK(a.values[5] == "32");
  CHECK(a.values.back() == "1024");
}

TEST_CASE("arithmetic ranges include the end and mix with plain values") {
  CHECK(parse_vary("steps=3..7").values == Values{"3", "4", "5", "6", "7"});
  CHECK(parse_vary("batch_per_replica=8,16..40+8,100").values ==
        Values{"8", "16", "24", "32", "40", "100"});
  // Float steps are computed from the start, so 0.1 + 4 x 0.1 lands on 0.5 (not 0.49999).
  CHECK(parse_vary("communication.density=0.1..0.5+0.1").values ==
        Values{"0.1", "0.2", "0.30000000000000004", "0.4", "0.5"});
  // A range whose end is not on the grid stops below it.
  CHECK(parse_vary("x=1..100x10").values == Values{"1", "10", "100"});
  CHECK(parse_vary("x=1..99x10").values == Values{"1", "10"});
  // Negative ends include themselves too (the end's tolerance is on its magnitude: scaled by
  // 1 + eps, -6 moved below its start and left "-6..-6" empty, a division by zero in the row
  // count; tests/fuzz/regressions/sweep_ranges).
  CHECK(parse_vary("x=-6..-6").values == Values{"-6"});
  CHECK(parse_vary("x=-3..-1").values == Values{"-3", "-2", "-1"});
  CHECK(parse_vary("x=-1..1+0.5").values == Values{"-1.0", "-0.5", "0.0", "0.5", "1.0"});
}

TEST_CASE("malformed --vary arguments are usage errors naming the argument") {
  for (const char* bad : {"parallelism.data", "=1,2", "x=1,,2", "x=5..1", "x=1..8x1", "x=0..8x2",
                          "x=1..8+0", "x=a..b", "x=1..2+q"}) {
    INFO(bad);
    try {
      parse_vary(bad);
      FAIL("accepted");
    } catch (const trainsim::UsageError& e) {
      CHECK_THAT(e.what(), Catch::Contains(std::string("--vary ") + bad));
    }
  }
  CHECK_THROWS_AS(parse_vary_list({"a=1,2", "a=3"}), trainsim::UsageError);
  CHECK_THROWS_AS(parse_vary_list({"a=1..1000", "b=1..1000"}, 10'000), trainsim::UsageError);
}

TEST_CASE("rows are the cross product with the last axis fastest") {
  const auto axes = parse_vary_list({"a=1,2", "b=x,y,z"});
  REQUIRE(row_count(axes) == 6);
  CHECK(row_indices(axes, 0) == std::vector<std::size_t>{0, 0});
  CHECK(row_indices(axes, 2) == std::vector<std::size_t>{0, 2});
  CHECK(row_indices(axes, 3) == std::vector<std::size_t>{1, 0});
  CHECK(row_overrides(axes, 5) == Values{"a=2", "b=z"});
}
