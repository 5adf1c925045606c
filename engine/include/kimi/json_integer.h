// An integer field of a request as clients send it, read the same way by the engine and by the
// appliance's request rules.
//
// A JSON integer within int64, or a float with no fraction within it (some clients write every
// number as a float: 3.0 is 3). Anything else is not an integer: a fraction, a number past
// int64's range either way (2^63 sent as an integer wrapped to -2^63 where it was read as int64
// unchecked), or not a number.
//
// Thread safety: pure function.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace kimi {

template <class BasicJson>
std::optional<int64_t> JsonInteger(const BasicJson& value) {
  if (value.is_number_unsigned()) {
    const uint64_t u = value.template get<uint64_t>();
    if (u > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return int64_t(u);
  }
  if (value.is_number_integer()) return value.template get<int64_t>();
  if (value.is_number_float()) {
    const double d = value.template get<double>();
    // 2^63 is the first double past int64's range.
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9223372036854775808.0) return int64_t(d);
  }
  return std::nullopt;
}

}  // namespace kimi
