#include "auth/lifecycle_state.h"

#include <gtest/gtest.h>

#include "auth/list_query.h"

namespace kimi::auth {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;

TEST(LifecycleStateTest, UserStatePrecedenceIsDisabledLockedPasswordChangeActive) {
  UserRecord u;
  u.disabled = true;
  u.locked_until_ms = kNow + 1;
  u.must_change_password = true;
  EXPECT_EQ(UserStateOf(u, kNow), UserState::kDisabled);
  u.disabled = false;
  EXPECT_EQ(UserStateOf(u, kNow), UserState::kLocked);  // not "password change due"
  u.locked_until_ms = kNow;                             // the lock has run out
  EXPECT_EQ(UserStateOf(u, kNow), UserState::kPasswordChangeDue);
  u.must_change_password = false;
  EXPECT_EQ(UserStateOf(u, kNow), UserState::kActive);
  EXPECT_EQ(UserStateName(UserState::kPasswordChangeDue), "password_change_due");
  EXPECT_EQ(UserStateName(UserState::kLocked), "locked");
}

TEST(LifecycleStateTest, KeyStatePrecedenceIsRevokedExpiredOwnerDisabledActive) {
  KeyRecord k;
  k.owner = "alice";
  k.revoked_ms = kNow - 10;
  k.expires_ms = kNow;
  EXPECT_EQ(KeyStateOf(k, kNow), KeyState::kRevoked);
  k.revoked_ms = 0;
  EXPECT_EQ(KeyStateOf(k, kNow), KeyState::kExpired);
  k.expires_ms = kNow + 1;
  EXPECT_EQ(KeyStateOf(k, kNow), KeyState::kOwnerDisabled);
  k.owner_enabled = true;
  EXPECT_EQ(KeyStateOf(k, kNow), KeyState::kActive);
  k.owner = "system";
  k.owner_enabled = false;
  EXPECT_EQ(KeyStateOf(k, kNow), KeyState::kActive);
  k.expires_ms = 0;
  EXPECT_EQ(KeyStateOf(k, kNow), KeyState::kActive);
}

TEST(LifecycleStateTest, ADateOnlyExpiryIsTheEndOfThatUtcDay) {
  // 2026-12-01 ends at 2026-12-02T00:00:00Z.
  const int64_t morning = 1796119200000;  // 2026-12-01T10:00:00Z
  EXPECT_EQ(*ParseKeyExpiry("2026-12-01", morning), 1796169600000);  // today is valid
  EXPECT_EQ(ParseKeyExpiry("2026-11-30", morning).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(*ParseKeyExpiry("2026-12-01T10:00:01Z", morning), morning + 1000);
  EXPECT_EQ(ParseKeyExpiry("2026-12-01T10:00:00Z", morning).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(*ParseKeyExpiry("1796119200001", morning), morning + 1);
  EXPECT_FALSE(ParseKeyExpiry("tomorrow", 0).ok());
  // At most the last millisecond of 9999, which the appliance can still write as a date.
  EXPECT_TRUE(ParseKeyExpiry("253402300799999", morning).ok());
  EXPECT_FALSE(ParseKeyExpiry("253402300800000", morning).ok());
  EXPECT_FALSE(ParseKeyExpiry("9223372036854775807", morning).ok());
}

}  // namespace
}  // namespace kimi::auth
