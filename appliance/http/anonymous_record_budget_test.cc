#include "http/anonymous_record_budget.h"

#include <gtest/gtest.h>

namespace kimi::http {
namespace {

AnonymousRecordBudgetOptions Options(int64_t per_source, int64_t all) {
  AnonymousRecordBudgetOptions o;
  o.per_source_per_minute = per_source;
  o.per_minute = all;
  o.window_ms = 10'000;
  return o;
}

int64_t Admitted(AnonymousRecordBudget& budget, std::string_view peer, int status, int n, int64_t now_ms) {
  int64_t admitted = 0;
  for (int i = 0; i < n; ++i) admitted += budget.Admit(peer, status, now_ms) ? 1 : 0;
  return admitted;
}

TEST(AnonymousRecordBudget, RecordsUpToTheBudgetPerAddressThenCounts) {
  AnonymousRecordBudget budget(Options(5, 0));
  // The port is not part of the address: a client cannot reconnect its way past the budget.
  EXPECT_EQ(Admitted(budget, "10.0.0.1:4000", 401, 3, 1'000), 3);
  EXPECT_EQ(Admitted(budget, "10.0.0.1:4001", 401, 10, 1'000), 2);
  EXPECT_EQ(Admitted(budget, "[::1]:4000", 401, 5, 1'000), 5);  // another address: its own budget
  EXPECT_TRUE(budget.TakeDue(1'000 + 9'999).empty());            // not due before its window ends

  std::vector<CountedRequests> due = budget.TakeDue(11'000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].source, "10.0.0.1");
  EXPECT_EQ(due[0].http_status, 401);
  EXPECT_EQ(due[0].count, 8);
  EXPECT_EQ(due[0].first_ms, 1'000);
  EXPECT_EQ(due[0].last_ms, 1'000);
  EXPECT_TRUE(budget.TakeDue(11'000).empty());  // taken once
}

TEST(AnonymousRecordBudget, TheBudgetRefillsAtItsRate) {
  AnonymousRecordBudget budget(Options(60, 0));
  EXPECT_EQ(Admitted(budget, "10.0.0.1:1", 401, 100, 0), 60);
  EXPECT_EQ(Admitted(budget, "10.0.0.1:1", 401, 100, 10'000), 10);  // one a second
}

TEST(AnonymousRecordBudget, ManyAddressesMeetTheBudgetForAll) {
  AnonymousRecordBudgetOptions o = Options(5, 20);
  o.max_sources = 3;
  AnonymousRecordBudget budget(o);
  int64_t admitted = 0;
  for (int a = 0; a < 100; ++a) admitted += Admitted(budget, "10.0.1." + std::to_string(a) + ":1", 400, 2, 0);
  EXPECT_EQ(admitted, 20);
  // 180 counted: three addresses apart, the rest together, and nothing lost.
  std::vector<CountedRequests> all = budget.TakeAll();
  ASSERT_EQ(all.size(), 4u);
  int64_t counted = 0, many = 0;
  for (const CountedRequests& c : all) {
    counted += c.count;
    EXPECT_EQ(c.http_status, 400);
    if (c.source == kManySources) many = c.count;
  }
  EXPECT_EQ(counted, 180);
  EXPECT_EQ(many, 180 - 3 * 2);
}

TEST(AnonymousRecordBudget, StatusesAreCountedApart) {
  AnonymousRecordBudget budget(Options(1, 0));
  EXPECT_EQ(Admitted(budget, "10.0.0.1:1", 401, 3, 0), 1);
  EXPECT_EQ(Admitted(budget, "10.0.0.1:1", 400, 4, 5), 0);
  std::vector<CountedRequests> all = budget.TakeAll();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].http_status + all[1].http_status, 801);
  EXPECT_EQ(all[0].count + all[1].count, 6);
}

TEST(AnonymousRecordBudget, ZeroMeansNoBound) {
  AnonymousRecordBudget budget(Options(0, 0));
  EXPECT_EQ(Admitted(budget, "10.0.0.1:1", 401, 10'000, 0), 10'000);
  EXPECT_TRUE(budget.TakeAll().empty());
}

TEST(AnonymousRecordBudget, ALaterCountIsDueAtItsOwnTime) {
  AnonymousRecordBudget budget(Options(1, 0));
  Admitted(budget, "10.0.0.1:1", 401, 2, 0);      // counted from 0
  Admitted(budget, "10.0.0.2:1", 401, 2, 5'000);  // counted from 5 s
  std::vector<CountedRequests> first = budget.TakeDue(10'000);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].source, "10.0.0.1");
  EXPECT_TRUE(budget.TakeDue(14'999).empty());
  ASSERT_EQ(budget.TakeDue(15'000).size(), 1u);
}

}  // namespace
}  // namespace kimi::http
