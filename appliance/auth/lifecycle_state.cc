#include "auth/lifecycle_state.h"

#include "audit/record.h"
#include "auth/principal.h"

namespace kimi::auth {
namespace {

constexpr int64_t kDayMs = 24LL * 3600 * 1000;
constexpr size_t kDateOnlyChars = 10;  // YYYY-MM-DD

}  // namespace

UserState UserStateOf(const UserRecord& user, int64_t now_ms) {
  if (user.disabled) return UserState::kDisabled;
  if (user.locked_until_ms > now_ms) return UserState::kLocked;
  if (user.must_change_password) return UserState::kPasswordChangeDue;
  return UserState::kActive;
}

std::string_view UserStateName(UserState state) {
  switch (state) {
    case UserState::kDisabled: return "disabled";
    case UserState::kLocked: return "locked";
    case UserState::kPasswordChangeDue: return "password_change_due";
    case UserState::kActive: return "active";
  }
  return "active";
}

KeyState KeyStateOf(const KeyRecord& key, int64_t now_ms) {
  if (key.revoked_ms != 0) return KeyState::kRevoked;
  if (key.expires_ms != 0 && now_ms >= key.expires_ms) return KeyState::kExpired;
  if (!IsSystemPrincipal(key.owner) && !key.owner_enabled) return KeyState::kOwnerDisabled;
  return KeyState::kActive;
}

std::string_view KeyStateName(KeyState state) {
  switch (state) {
    case KeyState::kRevoked: return "revoked";
    case KeyState::kExpired: return "expired";
    case KeyState::kOwnerDisabled: return "owner_disabled";
    case KeyState::kActive: return "active";
  }
  return "active";
}

Result<int64_t> ParseKeyExpiry(std::string_view text, int64_t now_ms) {
  KIMI_ASSIGN_OR_RETURN(int64_t ms, audit::ParseUtcMillis(text));
  const bool date_only = text.size() == kDateOnlyChars && text[4] == '-';
  if (date_only) ms += kDayMs;
  if (ms <= now_ms) {
    return Status::InvalidArgument(date_only ? "the expiry date has passed (a date means the end of that UTC day)"
                                             : "the expiry must be in the future");
  }
  // An expiry the appliance can write back as a date (years past 9999 came out in a form the
  // parser refuses).
  constexpr int64_t kLastMs = 253'402'300'799'999;  // 9999-12-31T23:59:59.999Z
  if (ms > kLastMs) return Status::InvalidArgument("the expiry must be at most 9999-12-31T23:59:59.999Z");
  return ms;
}

}  // namespace kimi::auth
