#include <catch2/catch.hpp>

#include "sim/core/time.hpp"

using trainsim::sim::Time;
using trainsim::sim::TimeOverflow;

TEST_CASE("time unit constructors are exact picoseconds") {
  CHECK(Time::ns(1).picoseconds() == 1'000);
  CHECK(Time::us(50).picoseconds() == 50'000'000);
  CHECK(Time::ms(3).picoseconds() == 3'000'000'000);
  CHECK(Time::s(2).picoseconds() == 2'000'000'000'000);
  CHECK(Time::from_seconds(1.5e-9).picoseconds() == 1'500);
  CHECK(Time::from_seconds(0.4e-12).picoseconds() == 0);  // rounds to nearest
  CHECK(Time::from_seconds(0.6e-12).picoseconds() == 1);
  CHECK(Time::s(3).seconds() == Approx(3.0));
}

TEST_CASE("time arithmetic checks overflow") {
  const Time big = Time::s(9'000'000);  // about 104 days
  CHECK_THROWS_AS(big + big, TimeOverflow);
  CHECK_THROWS_AS(Time::s(10'000'000), TimeOverflow);  // beyond int64 picoseconds
  CHECK_THROWS_AS(Time::from_seconds(1e300), TimeOverflow);
  CHECK_THROWS_AS(Time::from_seconds(std::nan("")), TimeOverflow);
  CHECK_THROWS_AS(Time::max() * 2, TimeOverflow);
  CHECK_THROWS_AS(Time::zero() - Time::max() - Time::s(1), TimeOverflow);
  CHECK((Time::us(1) + Time::ns(5)).picoseconds() == 1'005'000);
  CHECK(Time::ms(1) < Time::ms(2));
}
