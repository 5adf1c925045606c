#include "auth/usage_ledger.h"

#include <sqlite3.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "auth/test_auth_store.h"
#include "store/store.h"

namespace kimi::auth {
namespace {

constexpr int64_t kDay = 1'796'083'200'000 - 86'400'000;  // 2026-11-30T00:00Z
constexpr int64_t kNextDay = 1'796'083'200'000;            // 2026-12-01T00:00Z
constexpr int64_t kMonth = 1'793'491'200'000;              // 2026-11-01T00:00Z
constexpr int64_t kNextMonth = kNextDay;
// Long enough that no write happens in a test unless the test asks for it.
constexpr int64_t kNeverOnItsOwn = 3'600'000;

class UsageLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(test_store_.status().ok()) << test_store_.status().ToString(); }

  KeyUsage Stored(const std::string& key_id, int64_t day = kDay, int64_t month = kMonth) {
    Result<KeyUsage> usage = test_store_.store()->ReadUsage(key_id, day, month);
    EXPECT_TRUE(usage.ok()) << usage.status().ToString();
    return usage.ok() ? *usage : KeyUsage{};
  }

  Status ExecOnStore(const char* sql) {
    return test_store_.db()->Write([sql](sqlite3* db) { return store::Exec(db, sql); });
  }

  TestAuthStore test_store_;
};

TEST_F(UsageLedgerTest, ConcurrentRequestsAreCountedAtOnceAndWrittenInOneTransaction) {
  UsageLedger ledger(test_store_.store(), kNeverOnItsOwn);
  constexpr int kThreads = 8;
  constexpr int kEach = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&ledger, t] {
      const std::string key = t % 2 == 0 ? "key_even" : "key_odd";
      for (int i = 0; i < kEach; ++i) ASSERT_TRUE(ledger.Add(key, kDay, kMonth, 10, 1).ok());
    });
  }
  for (std::thread& t : threads) t.join();
  Result<KeyUsage> even = ledger.Read("key_even", kDay, kMonth);
  ASSERT_TRUE(even.ok());
  EXPECT_EQ(even->day.requests, kThreads / 2 * kEach);
  EXPECT_EQ(even->day.prompt_tokens, 10 * kThreads / 2 * kEach);
  EXPECT_EQ(even->month.completion_tokens, kThreads / 2 * kEach);
  EXPECT_EQ(Stored("key_even").day.requests, 0);  // not written yet
  EXPECT_EQ(ledger.Stats().transactions, 0u);

  ASSERT_TRUE(ledger.Close().ok());
  EXPECT_EQ(ledger.Stats().transactions, 1u);  // 400 requests, one transaction
  EXPECT_EQ(ledger.Stats().rows_written, 4u);  // two keys, a day and a month each
  EXPECT_EQ(ledger.Stats().requests_added, static_cast<uint64_t>(kThreads * kEach));
  for (const char* key : {"key_even", "key_odd"}) {
    KeyUsage stored = Stored(key);
    EXPECT_EQ(stored.day.requests, kThreads / 2 * kEach) << key;
    EXPECT_EQ(stored.day.prompt_tokens, 10 * kThreads / 2 * kEach) << key;
    EXPECT_EQ(stored.month.completion_tokens, kThreads / 2 * kEach) << key;
  }
}

TEST_F(UsageLedgerTest, StartsFromTheStoredRowsAndAddsWithoutCountingTwice) {
  ASSERT_TRUE(test_store_.store()->AddUsage("key_a", kDay, kMonth, 100, 10).ok());
  {
    UsageLedger ledger(test_store_.store(), kNeverOnItsOwn);
    ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 5, 5).ok());
    ASSERT_TRUE(ledger.Flush().ok());
    ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 1, 1).ok());
    ASSERT_TRUE(ledger.Flush().ok());
    ASSERT_TRUE(ledger.Flush().ok());  // nothing left: no transaction
    EXPECT_EQ(ledger.Stats().transactions, 2u);
    EXPECT_EQ(ledger.Read("key_a", kDay, kMonth)->day.tokens(), 122);
  }  // destroyed without Close(): it closes itself
  EXPECT_EQ(Stored("key_a").day.requests, 3);
  EXPECT_EQ(Stored("key_a").day.tokens(), 122);
  UsageLedger restarted(test_store_.store(), kNeverOnItsOwn);
  EXPECT_EQ(restarted.Read("key_a", kDay, kMonth)->month.tokens(), 122);
}

TEST_F(UsageLedgerTest, TheWriterWritesWithoutBeingAsked) {
  UsageLedger ledger(test_store_.store(), /*flush_interval_ms=*/10);
  ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 3, 4).ok());
  // Waits for the writer, however slow the machine; the test fails only by never seeing it.
  for (int i = 0; i < 3000 && ledger.Stats().transactions == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ledger.Stats().transactions, 1u);
  EXPECT_EQ(Stored("key_a").day.tokens(), 7);
}

TEST_F(UsageLedgerTest, AFailedWriteKeepsTheUsageAndTheNextOneWritesItOnce) {
  UsageLedger ledger(test_store_.store(), kNeverOnItsOwn);
  ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 20, 2).ok());
  ASSERT_TRUE(ExecOnStore("ALTER TABLE auth_usage RENAME TO auth_usage_away").ok());
  EXPECT_FALSE(ledger.Flush().ok());
  EXPECT_EQ(ledger.Stats().failed_writes, 1u);
  ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 1, 0).ok());  // its slots are in memory
  EXPECT_EQ(ledger.Read("key_a", kDay, kMonth)->day.tokens(), 23);
  ASSERT_TRUE(ExecOnStore("ALTER TABLE auth_usage_away RENAME TO auth_usage").ok());
  ASSERT_TRUE(ledger.Flush().ok());
  EXPECT_EQ(Stored("key_a").day.requests, 2);
  EXPECT_EQ(Stored("key_a").day.tokens(), 23);
  EXPECT_EQ(Stored("key_a").month.tokens(), 23);
}

TEST_F(UsageLedgerTest, ANewPeriodStartsAtZeroAndTheEndedOneIsStillRight) {
  UsageLedger ledger(test_store_.store(), kNeverOnItsOwn);
  ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 10, 0).ok());
  ASSERT_TRUE(ledger.Add("key_a", kNextDay, kNextMonth, 1, 0).ok());
  EXPECT_EQ(ledger.Read("key_a", kNextDay, kNextMonth)->day.tokens(), 1);
  EXPECT_EQ(ledger.Read("key_a", kNextDay, kNextMonth)->month.tokens(), 1);
  ASSERT_TRUE(ledger.Flush().ok());  // drops November's slots, now written
  EXPECT_EQ(ledger.Read("key_a", kDay, kMonth)->day.tokens(), 10);  // read again from the rows
  EXPECT_EQ(Stored("key_a").month.tokens(), 10);
  EXPECT_EQ(Stored("key_a", kNextDay, kNextMonth).day.tokens(), 1);
}

TEST_F(UsageLedgerTest, AfterCloseEachRequestWritesItsOwnRow) {
  UsageLedger ledger(test_store_.store(), kNeverOnItsOwn);
  ASSERT_TRUE(ledger.Close().ok());
  ASSERT_TRUE(ledger.Add("key_a", kDay, kMonth, 2, 2).ok());  // a stream that outlived the shutdown
  EXPECT_EQ(Stored("key_a").day.tokens(), 4);
  EXPECT_TRUE(ledger.Close().ok());
}

}  // namespace
}  // namespace kimi::auth
