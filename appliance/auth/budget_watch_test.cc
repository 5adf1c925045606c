#include "auth/budget_watch.h"

#include <gtest/gtest.h>

#include <limits>

#include "auth/test_auth_store.h"
#include "auth/usage_meter.h"

namespace kimi::auth {
namespace {

constexpr int64_t kDecember = 1'764'547'200'000;  // 2025-12-01T00:00:00Z
constexpr int64_t kJanuary = 1'767'225'600'000;   // 2026-01-01T00:00:00Z

class BudgetWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test_.status().ok()) << test_.status().ToString();
    ASSERT_TRUE(store().InsertUser(UserRecord{"alice", "x", "user"}, Event("auth.user_added")).ok());
    AddKey("key_a", "alpha", "alice", 1);
    AddKey("key_b", "beta", "alice", 2);
    AddKey("key_c", "gamma", "system", 3);
    DrainEvents();
  }

  AuthStore& store() { return *test_.store(); }
  AuthEvent Event(std::string action) {
    return AuthEvent{0, now_, "test", "admin", "local", std::move(action)};
  }
  void AddKey(std::string id, std::string name, std::string owner, uint8_t hash) {
    KeyRecord k;
    k.id = std::move(id);
    k.name = std::move(name);
    k.owner = std::move(owner);
    k.role = "user";
    Digest digest{};
    digest[0] = hash;
    ASSERT_TRUE(store().InsertKey(k, digest, Event("auth.key_created")).ok());
  }
  // Usage as the ledger writes it: the day's and the month's rows of now_.
  void Use(const std::string& key, int64_t tokens) {
    ASSERT_TRUE(store().AddUsage(key, now_ - now_ % 86'400'000, UtcMonthStartMs(now_), tokens, 0).ok());
  }
  std::vector<AuthEvent> DrainEvents() {
    Result<std::vector<AuthEvent>> events = store().PendingEvents(100);
    EXPECT_TRUE(events.ok());
    if (!events->empty()) {
      EXPECT_TRUE(store().DeleteEventsThrough(events->back().id).ok());
    }
    return *events;
  }
  std::vector<BudgetState> Check() {
    Result<std::vector<BudgetState>> states = watch_.Check();
    EXPECT_TRUE(states.ok()) << states.status().ToString();
    return states.ok() ? *states : std::vector<BudgetState>{};
  }

  TestAuthStore test_;
  int64_t now_ = kDecember + 10 * 86'400'000 + 3'600'000;
  BudgetStore budgets_{test_.db()};
  BudgetWatch watch_{test_.store(), &budgets_, [this] { return now_; }};
  const Actor admin_{"root", "admin", "127.0.0.1"};
};

// The threshold of any budget int64 holds, without overflow (the product of the largest budget
// and its percent wrapped, and a budget alerted at 0 tokens used).
TEST(BudgetThreshold, IsThePercentRoundedUpForEveryBudget) {
  Budget b;
  b.tokens_per_month = 1000;
  b.alert_percent = 80;
  EXPECT_EQ(b.threshold_tokens(), 800);
  b.tokens_per_month = 999;
  EXPECT_EQ(b.threshold_tokens(), 800);  // 799.2 rounded up
  b.tokens_per_month = 1;
  b.alert_percent = 1;
  EXPECT_EQ(b.threshold_tokens(), 1);
  b.tokens_per_month = std::numeric_limits<int64_t>::max();
  b.alert_percent = 80;
  EXPECT_EQ(b.threshold_tokens(), 7378697629483820646);  // ceil((2^63 - 1) * 0.8)
  b.alert_percent = 100;
  EXPECT_EQ(b.threshold_tokens(), std::numeric_limits<int64_t>::max());
}

TEST_F(BudgetWatchTest, CrossingTheThresholdIsRecordedOncePerMonth) {
  Result<Budget> set = watch_.Set(admin_, Budget{BudgetScope::kKey, "key_a", 1000, 80});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::vector<AuthEvent> events = DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].action, "auth.budget_set");
  EXPECT_EQ(events[0].actor, "root");
  EXPECT_EQ(events[0].target, "key_a");

  Use("key_a", 799);
  std::vector<BudgetState> states = Check();
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].used_tokens, 799);
  EXPECT_EQ(states[0].name, "alpha");
  EXPECT_FALSE(states[0].alerting);
  EXPECT_TRUE(DrainEvents().empty());

  Use("key_a", 1);
  EXPECT_FALSE(Check()[0].exceeded);
  for (int i = 0; i < 3; ++i) {
    states = Check();
    ASSERT_EQ(states.size(), 1u);
    EXPECT_TRUE(states[0].alerting);
    now_ += 60'000;
    Use("key_a", 100);  // over the budget too: still the one alert of the month
  }
  events = DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].action, "auth.budget_alert");
  EXPECT_EQ(events[0].target, "key_a");
  EXPECT_EQ(events[0].actor, "kimi-appliance");
  EXPECT_EQ(events[0].detail,
            "key key_a ('alpha') used 800 of 1000 tokens this month (alert at 80%, 800 tokens)");
  EXPECT_TRUE(Check()[0].exceeded);

  // A new month starts from zero and alerts again once, when crossed again.
  now_ = kJanuary + 3'600'000;
  EXPECT_FALSE(Check()[0].alerting);
  Use("key_a", 900);
  Check();
  Check();
  events = DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].action, "auth.budget_alert");
  Result<std::vector<BudgetAlert>> alerts = watch_.RecentAlerts();
  ASSERT_TRUE(alerts.ok());
  ASSERT_EQ(alerts->size(), 2u);
  EXPECT_EQ((*alerts)[0].month_start_ms, kJanuary);
  EXPECT_EQ((*alerts)[0].tokens, 900);
  EXPECT_EQ((*alerts)[1].month_start_ms, kDecember);
  EXPECT_EQ((*alerts)[1].threshold_tokens, 800);
}

TEST_F(BudgetWatchTest, AnOwnerBudgetAddsUpEveryKeyTheOwnerHolds) {
  ASSERT_TRUE(watch_.Set(admin_, Budget{BudgetScope::kOwner, "alice", 100, 50}).ok());
  ASSERT_TRUE(watch_.Set(admin_, Budget{BudgetScope::kKey, "key_c", 100, 50}).ok());
  DrainEvents();
  Use("key_a", 30);
  Use("key_b", 30);
  Use("key_c", 10);
  std::vector<BudgetState> states = Check();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].budget.scope, BudgetScope::kOwner);  // alerting ones first
  EXPECT_EQ(states[0].used_tokens, 60);
  EXPECT_TRUE(states[0].alerting);
  EXPECT_EQ(states[1].used_tokens, 10);
  EXPECT_FALSE(states[1].alerting);
  std::vector<AuthEvent> events = DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].target, "alice");
}

TEST_F(BudgetWatchTest, ChangingABudgetRearmsItsAlertAndRemovingIsAudited) {
  ASSERT_TRUE(watch_.Set(admin_, Budget{BudgetScope::kKey, "key_b", 100, 80}).ok());
  Use("key_b", 90);
  Check();
  ASSERT_TRUE(watch_.Set(admin_, Budget{BudgetScope::kKey, "key_b", 110, 80}).ok());
  Check();  // 90 of 110 is still over 80%: the changed budget alerts anew
  std::vector<AuthEvent> events = DrainEvents();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1].action, "auth.budget_alert");
  EXPECT_EQ(events[2].action, "auth.budget_set");
  EXPECT_EQ(events[2].detail, "key budget 110 tokens per month, alert at 80%");
  EXPECT_EQ(events[3].action, "auth.budget_alert");
  ASSERT_TRUE(watch_.Remove(admin_, BudgetScope::kKey, "key_b").ok());
  EXPECT_EQ(watch_.Remove(admin_, BudgetScope::kKey, "key_b").code(), Status::Code::kNotFound);
  events = DrainEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].action, "auth.budget_removed");
  EXPECT_TRUE(Check().empty());
}

TEST_F(BudgetWatchTest, RefusesBudgetsOfNobodyAndOutOfRangeFigures) {
  EXPECT_EQ(watch_.Set(admin_, Budget{BudgetScope::kKey, "key_zz", 100, 80}).status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(watch_.Set(admin_, Budget{BudgetScope::kOwner, "mallory", 100, 80}).status().code(),
            Status::Code::kNotFound);
  EXPECT_EQ(watch_.Set(admin_, Budget{BudgetScope::kKey, "key_a", 0, 80}).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(watch_.Set(admin_, Budget{BudgetScope::kKey, "key_a", 10, 101}).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_TRUE(watch_.Set(admin_, Budget{BudgetScope::kOwner, "installer", 10, 100}).ok());
  EXPECT_TRUE(DrainEvents().size() == 1u);
}

}  // namespace
}  // namespace kimi::auth
