// Usage report: the auth_usage rows of a range of UTC days turned into one line per key or per
// owner (an owner's line adds up every key it holds), with a value per day, and the lines
// ordered by tokens, most first. What the Usage screen's charts and top-keys table show
// (admin/usage_routes.h). Rows of keys not in the key list (none are ever deleted) still count,
// under their id with an empty name and owner.
// Public header of auth/: other folders include it.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "auth/auth_store.h"

namespace kimi::auth {

enum class UsageGrouping { kKey, kOwner };

inline constexpr int64_t kDayMs = 86'400'000;

struct UsageLine {
  std::string id;     // key id, or owner name
  std::string name;   // the key's name; empty for owners
  std::string owner;  // the key's owner; for owners, the owner again
  // One value per day of the range, oldest first.
  std::vector<int64_t> requests;
  std::vector<int64_t> prompt_tokens;
  std::vector<int64_t> completion_tokens;
  int64_t total_requests = 0;
  int64_t total_prompt_tokens = 0;
  int64_t total_completion_tokens = 0;
  int64_t total_tokens() const { return total_prompt_tokens + total_completion_tokens; }
};

// `day_rows`: day rows (AuthStore::UsageRows) of the `days` UTC days starting at first_day_ms
// (a UTC midnight); rows outside the range are ignored. Only keys or owners with a row in the
// range have a line. Ties in tokens are ordered by id.
std::vector<UsageLine> DailyUsageLines(const std::vector<UsageRowDelta>& day_rows,
                                       const std::vector<KeyRecord>& keys, int64_t first_day_ms, int days,
                                       UsageGrouping by);

}  // namespace kimi::auth
