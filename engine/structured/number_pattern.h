// Regular expressions (in the subset of regex.h) for JSON numbers within bounds: the integers
// of a range, and decimal numbers whose every possible value (fraction digits included, after
// rounding to a double) stays inside the bounds.
//
// A value may have at most kMaxIntegerDigits integer digits, so huge or absent bounds still give
// numbers every JSON parser reads exactly (Python refuses integers of more than 4300 digits).
//
// Owns nothing. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kimi::structured {

inline constexpr int kMaxIntegerDigits = 18;
inline constexpr int64_t kMaxMagnitude = 999999999999999999;  // 18 nines

struct NumberBounds {
  std::optional<double> minimum, maximum;  // absent: unbounded on that side
  bool exclusive_minimum = false, exclusive_maximum = false;
};

// An anchored pattern for the integers within the bounds (none when the range is empty).
std::optional<std::string> IntegerPattern(const NumberBounds& bounds);
// An anchored pattern for numbers within the bounds: integers, decimals and, when both sides
// are unbounded, exponents. None when no value fits.
std::optional<std::string> NumberPattern(const NumberBounds& bounds);
// The decimal integers lo..hi, 0 <= lo <= hi <= kMaxMagnitude, without leading zeros, as an
// unanchored alternation.
std::string NonNegativeRangePattern(int64_t lo, int64_t hi);

}  // namespace kimi::structured
