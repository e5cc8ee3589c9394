#pragma once
// Simulated time: a strong type over int64 picoseconds (range about +-106 days).
// Event ordering never touches floating point; conversions from seconds round to the nearest
// picosecond and throw on overflow or non-finite input.

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace trainsim::sim {

class TimeOverflow : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time ps(std::int64_t n) { return Time(n); }
  static constexpr Time ns(std::int64_t n) { return Time(scaled(n, 1'000)); }
  static constexpr Time us(std::int64_t n) { return Time(scaled(n, 1'000'000)); }
  static constexpr Time ms(std::int64_t n) { return Time(scaled(n, 1'000'000'000)); }
  static constexpr Time s(std::int64_t n) { return Time(scaled(n, 1'000'000'000'000)); }
  // Rounds to the nearest picosecond; throws TimeOverflow when out of range or not finite.
  static Time from_seconds(double seconds) {
    const double ps_value = std::round(seconds * 1e12);
    // 2^63 is exactly representable; anything at or above it does not fit.
    if (!std::isfinite(ps_value) || ps_value >= 9223372036854775808.0 ||
        ps_value < -9223372036854775808.0) {
      throw TimeOverflow("time out of range: " + std::to_string(seconds) + " s");
    }
    return Time(static_cast<std::int64_t>(ps_value));
  }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t picoseconds() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr Time operator+(Time o) const {
    std::int64_t r = 0;
    if (__builtin_add_overflow(ps_, o.ps_, &r)) throw TimeOverflow("time addition overflows");
    return Time(r);
  }
  constexpr Time operator-(Time o) const {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(ps_, o.ps_, &r)) throw TimeOverflow("time subtraction overflows");
    return Time(r);
  }
  constexpr Time operator*(std::int64_t k) const { return Time(scaled(ps_, k)); }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(std::int64_t ps_value) : ps_(ps_value) {}
  static constexpr std::int64_t scaled(std::int64_t n, std::int64_t k) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(n, k, &r)) throw TimeOverflow("time multiplication overflows");
    return r;
  }

  std::int64_t ps_ = 0;
};

}  // namespace trainsim::sim
