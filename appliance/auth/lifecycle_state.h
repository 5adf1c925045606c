// The lifecycle of console users and API keys as everyone shows it: one state per user and per
// key, each decided by one function with a fixed precedence, so that the admin API, the
// console and kimictl never disagree (a locked user whose password change is also due is
// "locked": that is what stops it signing in). Also the rules for the dates an operator gives:
// a key's expiry and a rotation's grace period.
// Public header of auth/: other folders include it.
// Thread safety: pure functions and constants.
#pragma once

#include <cstdint>
#include <string_view>

#include "auth/auth_store.h"
#include "kimi/status.h"

namespace kimi::auth {

// In order of precedence: the first that holds is the state.
enum class UserState {
  kDisabled,           // may not sign in until re-enabled
  kLocked,             // locked_until is still ahead: too many failed sign-ins
  kPasswordChangeDue,  // may sign in, but only to choose a new password
  kActive,
};
UserState UserStateOf(const UserRecord& user, int64_t now_ms);
// "disabled", "locked", "password_change_due", "active".
std::string_view UserStateName(UserState state);

// In order of precedence: the first that holds is the state.
enum class KeyState {
  kRevoked,        // for good
  kExpired,        // now >= expires_ms
  kOwnerDisabled,  // its owner is a disabled or removed user: refused while that lasts
  kActive,
};
KeyState KeyStateOf(const KeyRecord& key, int64_t now_ms);
// "revoked", "expired", "owner_disabled", "active".
std::string_view KeyStateName(KeyState state);

// A key's expiry as an operator writes it: YYYY-MM-DD means the end of that UTC day (the key
// works through 23:59:59.999Z and is refused from the next midnight, the value returned), so
// that "today" is a valid choice; a full time (YYYY-MM-DDTHH:MM:SS[.mmm]Z) or Unix
// milliseconds is that instant. InvalidArgument for anything else and for an expiry that is
// not after now_ms.
Result<int64_t> ParseKeyExpiry(std::string_view text, int64_t now_ms);

// The longest an old secret stays valid after a rotation (7 days).
inline constexpr int64_t kMaxRotationGraceMs = 7LL * 24 * 3600 * 1000;

}  // namespace kimi::auth
