// KeyLimits: the limits an API key carries (docs/security.md "Quotas"), set at creation and
// changed by an admin, and the same limits set per role (auth_role_limits): requests per
// minute and prompt plus completion tokens per minute (token buckets, rate_limiter.h), tokens
// per UTC day and per UTC month (usage_meter.h), and requests of the generation routes in
// flight at once. 0 means no limit. A key is held to the stricter of its own limits and its
// role's (Stricter). kKeyLimitFields names them once for the admin API, kimictl and audit
// details.
//
// Thread safety: value types and constants.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi::auth {

struct KeyLimits {
  int64_t requests_per_minute = 0;
  int64_t tokens_per_day = 0;
  int64_t tokens_per_month = 0;
  int64_t max_concurrent_streams = 0;
  int64_t tokens_per_minute = 0;
};

struct KeyLimitField {
  std::string_view name;     // the admin API's JSON field
  std::string_view flag;     // kimictl's option
  int64_t KeyLimits::*member;
};

inline constexpr KeyLimitField kKeyLimitFields[] = {
    {"requests_per_minute", "--rpm", &KeyLimits::requests_per_minute},
    {"tokens_per_minute", "--tpm", &KeyLimits::tokens_per_minute},
    {"tokens_per_day", "--tokens-per-day", &KeyLimits::tokens_per_day},
    {"tokens_per_month", "--tokens-per-month", &KeyLimits::tokens_per_month},
    {"max_concurrent_streams", "--max-streams", &KeyLimits::max_concurrent_streams},
};

// InvalidArgument naming the first negative limit.
inline Status CheckKeyLimits(const KeyLimits& limits) {
  for (const KeyLimitField& f : kKeyLimitFields) {
    if (limits.*f.member < 0) return Status::InvalidArgument(std::string(f.name) + " must not be negative");
  }
  return Status::OK();
}

// Field by field, the lower of two limits, where 0 (no limit) is the highest.
inline KeyLimits Stricter(const KeyLimits& a, const KeyLimits& b) {
  KeyLimits out;
  for (const KeyLimitField& f : kKeyLimitFields) {
    int64_t x = a.*f.member, y = b.*f.member;
    out.*f.member = x == 0 ? y : y == 0 ? x : (x < y ? x : y);
  }
  return out;
}

// "requests_per_minute 60; tokens_per_day 100000": the limits that are set, for audit
// details; "" when none is.
inline std::string DescribeKeyLimits(const KeyLimits& limits) {
  std::string out;
  for (const KeyLimitField& f : kKeyLimitFields) {
    if (limits.*f.member == 0) continue;
    if (!out.empty()) out += "; ";
    out += std::string(f.name) + " " + std::to_string(limits.*f.member);
  }
  return out;
}

}  // namespace kimi::auth
