#include "structured/number_pattern.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kimi::structured {
namespace {

bool AllOf(const std::string& s, size_t from, char c) {
  return std::all_of(s.begin() + long(from), s.end(), [c](char x) { return x == c; });
}

std::string AnyDigits(size_t n) { return n == 0 ? "" : "[0-9]{" + std::to_string(n) + "}"; }

// Numbers written with exactly a.size() digits, from a to b (a <= b, same length).
std::string SameLength(const std::string& a, const std::string& b) {
  if (a == b) return a;
  size_t p = 0;
  while (a[p] == b[p]) ++p;
  const std::string prefix = a.substr(0, p);
  const size_t rest = a.size() - p - 1;
  const char lo = a[p], hi = b[p];
  if (AllOf(a, p + 1, '0') && AllOf(b, p + 1, '9')) {
    return prefix + "[" + lo + "-" + hi + "]" + AnyDigits(rest);
  }
  std::vector<std::string> alternatives;
  alternatives.push_back(std::string(1, lo) + SameLength(a.substr(p + 1), std::string(rest, '9')));
  if (hi - lo > 1) {
    alternatives.push_back(std::string("[") + char(lo + 1) + "-" + char(hi - 1) + "]" + AnyDigits(rest));
  }
  alternatives.push_back(std::string(1, hi) + SameLength(std::string(rest, '0'), b.substr(p + 1)));
  std::string out = prefix + "(?:";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? "|" : "") + alternatives[i];
  return out + ")";
}

// Integer bounds from the schema's (possibly fractional, possibly exclusive) bounds.
int64_t LowestInteger(const NumberBounds& b) {
  if (!b.minimum) return -kMaxMagnitude;
  const double m = *b.minimum;
  if (m < -double(kMaxMagnitude)) return -kMaxMagnitude;
  if (m > double(kMaxMagnitude)) return kMaxMagnitude + 1;
  return b.exclusive_minimum ? int64_t(std::floor(m)) + 1 : int64_t(std::ceil(m));
}
int64_t HighestInteger(const NumberBounds& b) {
  if (!b.maximum) return kMaxMagnitude;
  const double m = *b.maximum;
  if (m > double(kMaxMagnitude)) return kMaxMagnitude;
  if (m < -double(kMaxMagnitude)) return -kMaxMagnitude - 1;
  return b.exclusive_maximum ? int64_t(std::ceil(m)) - 1 : int64_t(std::floor(m));
}

// Integers lo..hi (any signs) as an unanchored alternation, or empty when lo > hi.
std::string SignedRange(int64_t lo, int64_t hi) {
  if (lo > hi) return "";
  std::vector<std::string> parts;
  if (hi >= 0) parts.push_back(NonNegativeRangePattern(std::max<int64_t>(lo, 0), hi));
  if (lo < 0) parts.push_back("-(?:" + NonNegativeRangePattern(std::max<int64_t>(1, -hi), -lo) + ")");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "|" : "") + parts[i];
  return out;
}

}  // namespace

std::string NonNegativeRangePattern(int64_t lo, int64_t hi) {
  const std::string a = std::to_string(lo), b = std::to_string(hi);
  std::vector<std::string> alternatives;
  for (size_t len = a.size(); len <= b.size(); ++len) {
    const std::string from = len == a.size() ? a : "1" + std::string(len - 1, '0');
    const std::string to = len == b.size() ? b : std::string(len, '9');
    alternatives.push_back(SameLength(from, to));
  }
  std::string out;
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? "|" : "") + alternatives[i];
  return out;
}

std::optional<std::string> IntegerPattern(const NumberBounds& bounds) {
  const std::string range = SignedRange(LowestInteger(bounds), HighestInteger(bounds));
  if (range.empty()) return std::nullopt;
  return "^(?:" + range + ")$";
}

std::optional<std::string> NumberPattern(const NumberBounds& bounds) {
  const std::string fraction = "\\.[0-9]{1,17}";
  if (!bounds.minimum && !bounds.maximum) {
    return "^-?(?:0|[1-9][0-9]{0,17})(?:" + fraction + ")?(?:[eE][+-]?[1-9][0-9]?)?$";
  }
  std::vector<std::string> parts;
  const std::string integers = SignedRange(LowestInteger(bounds), HighestInteger(bounds));
  if (!integers.empty()) parts.push_back(integers);
  // I.F lies in [I, I+1]: allowed when I is at or above the minimum and I+1 at or below the
  // maximum (one more unit of margin on an exclusive maximum, which rounding could reach).
  // A bound past the magnitudes written here is as good as none; clamped so that the integer
  // conversions below stay within int64_t (converting a double outside it is undefined).
  const double limit = double(kMaxMagnitude) + 2;
  const double lo = std::clamp(bounds.minimum.value_or(-double(kMaxMagnitude)), -limit, limit);
  const double hi = std::clamp(bounds.maximum.value_or(double(kMaxMagnitude)), -limit, limit);
  const int64_t pos_lo = std::max<int64_t>(0, bounds.exclusive_minimum ? int64_t(std::floor(lo)) + 1 : int64_t(std::ceil(std::max(lo, -1.0))));
  const int64_t pos_hi = std::min<int64_t>(kMaxMagnitude, int64_t(std::floor(std::min(hi, double(kMaxMagnitude)))) - (bounds.exclusive_maximum ? 2 : 1));
  if (pos_lo <= pos_hi && hi >= 1) parts.push_back("(?:" + NonNegativeRangePattern(pos_lo, pos_hi) + ")" + fraction);
  // -I.F lies in [-(I+1), -I]: allowed when -I is at or below the maximum and -(I+1) at or
  // above the minimum.
  const int64_t neg_lo = std::max<int64_t>(0, bounds.exclusive_maximum ? int64_t(std::floor(-hi)) + 1 : int64_t(std::ceil(std::max(-hi, -1.0))));
  const int64_t neg_hi = std::min<int64_t>(kMaxMagnitude, int64_t(std::floor(std::min(-lo, double(kMaxMagnitude)))) - (bounds.exclusive_minimum ? 2 : 1));
  if (neg_lo <= neg_hi && -lo >= 1) parts.push_back("-(?:" + NonNegativeRangePattern(neg_lo, neg_hi) + ")" + fraction);
  if (parts.empty()) return std::nullopt;
  std::string out = "^(?:";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "|" : "") + parts[i];
  return out + ")$";
}

}  // namespace kimi::structured
