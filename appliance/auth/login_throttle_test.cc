#include "auth/login_throttle.h"

#include "auth/peer_address.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kimi::auth {
namespace {

TEST(PeerAddressTest, DropsThePortOfBothFamilies) {
  EXPECT_EQ(PeerAddress("127.0.0.1:4000"), "127.0.0.1");
  EXPECT_EQ(PeerAddress("[::1]:4000"), "::1");
  EXPECT_EQ(PeerAddress("::1"), "::1");
  EXPECT_EQ(PeerAddress("local"), "local");
}

TEST(PeerAddressTest, AClientIsItsIpv4AddressOrItsIpv6Slash64) {
  EXPECT_EQ(PeerGroup("127.0.0.1:4000"), "127.0.0.1");
  EXPECT_EQ(PeerGroup("[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:4000"), "2001:db8:1:2::/64");
  EXPECT_EQ(PeerGroup("[2001:db8:1:2::99]:5000"), "2001:db8:1:2::/64");
  EXPECT_EQ(PeerGroup("2001:db8:1:3::1"), "2001:db8:1:3::/64");
  EXPECT_EQ(PeerGroup("[::ffff:10.0.0.7]:4000"), "10.0.0.7");
  EXPECT_EQ(PeerGroup("[::1]:4000"), "::/64");
  EXPECT_EQ(PeerGroup("local"), "local");
}

// A host holding a /64 spoke from a fresh address for every attempt: each had a budget of its
// own, so the per-address login budget (and the anonymous record budget) bounded nothing.
TEST(LoginThrottleTest, TheAddressesOfOneIpv6Slash64ShareOneBudget) {
  LoginThrottle throttle(LoginThrottleOptions{3, 0});
  int64_t retry = 0;
  bool first = false;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(throttle.Admit("[2001:db8:0:7::" + std::to_string(i + 1) + "]:4000", "u", 0, &retry, &first).ok());
  }
  EXPECT_FALSE(throttle.Admit("[2001:db8:0:7:ffff::4]:4000", "u", 0, &retry, &first).ok());
  EXPECT_TRUE(throttle.Admit("[2001:db8:0:8::1]:4000", "u", 0, &retry, &first).ok());
}

TEST(LoginThrottleTest, EachSourceHasItsBudgetWhateverItsPort) {
  LoginThrottle throttle(LoginThrottleOptions{3, 0});
  int64_t retry = 0;
  bool first = false;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(throttle.Admit("10.0.0.1:" + std::to_string(4000 + i), "u" + std::to_string(i), 0, &retry, &first).ok());
  }
  Status refused = throttle.Admit("10.0.0.1:5000", "other", 0, &retry, &first);
  EXPECT_EQ(refused.code(), Status::Code::kResourceExhausted);
  EXPECT_GE(retry, 1);
  EXPECT_TRUE(first);
  EXPECT_NE(refused.message().find("from this address"), std::string::npos);
  // Audited once per window: the next refusals are not the first.
  EXPECT_FALSE(throttle.Admit("10.0.0.1:5001", "other", 0, &retry, &first).ok());
  EXPECT_FALSE(first);
  // Another address is not affected, and a refilled budget admits (and re-arms the audit).
  EXPECT_TRUE(throttle.Admit("10.0.0.2:5000", "other", 0, &retry, &first).ok());
  EXPECT_TRUE(throttle.Admit("10.0.0.1:5000", "other", 20'000, &retry, &first).ok());
  EXPECT_FALSE(throttle.Admit("10.0.0.1:5000", "other", 20'000, &retry, &first).ok());
  EXPECT_TRUE(first);
}

TEST(LoginThrottleTest, EachUserNameHasItsBudgetAcrossSources) {
  LoginThrottle throttle(LoginThrottleOptions{0, 2});
  int64_t retry = 0;
  bool first = false;
  EXPECT_TRUE(throttle.Admit("10.0.0.1:1", "alice", 0, &retry, &first).ok());
  EXPECT_TRUE(throttle.Admit("10.0.0.2:1", "alice", 0, &retry, &first).ok());
  Status refused = throttle.Admit("10.0.0.3:1", "alice", 0, &retry, &first);
  EXPECT_EQ(refused.code(), Status::Code::kResourceExhausted);
  EXPECT_NE(refused.message().find("for this user name"), std::string::npos);
  EXPECT_EQ(retry, 30);
  EXPECT_TRUE(throttle.Admit("10.0.0.3:1", "bob", 0, &retry, &first).ok());
}

TEST(LoginThrottleTest, NamesThatClientsMakeUpDoNotGrowItWithoutBound) {
  LoginThrottleOptions options{0, 5};
  options.max_tracked = 100;
  LoginThrottle throttle(options);
  int64_t retry = 0;
  bool first = false;
  // Each name is tried once; a minute later its bucket is full again and may be forgotten.
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(throttle.Admit("s", "name-" + std::to_string(i), int64_t{i} * 60'000, &retry, &first).ok());
  }
  EXPECT_LE(throttle.TrackedUserNames(), 101u);
}

TEST(HashSlotsTest, NoMoreThanTheBoundRunAtOnce) {
  HashSlots slots(2, 5'000);
  std::atomic<int> running{0}, peak{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&] {
      Result<HashSlots::Slot> slot = slots.Acquire();
      ASSERT_TRUE(slot.ok());
      int now = ++running;
      int seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      --running;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(peak.load(), 2);
}

TEST(HashSlotsTest, AWaitBeyondTheBoundIsRefused) {
  HashSlots slots(1, 10);
  Result<HashSlots::Slot> held = slots.Acquire();
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(slots.Acquire().status().code(), Status::Code::kResourceExhausted);
}

}  // namespace
}  // namespace kimi::auth
