// BudgetWatch: the monthly token budgets' policy (budgets are soft: they warn; the quotas of
// key_limits.h are what refuses requests). Check() compares each budget with this UTC month's
// usage, as written to auth_usage (at most auth.usage_flush_ms behind the ledger): a key budget
// with the key's month row, an owner budget with the sum over every key the owner holds. A
// budget at or over its threshold is alerting; the first time in a month that one is seen so,
// an alert row and ONE audit record "auth.budget_alert" are written together (the row's primary
// key makes a second one impossible, however many checks run at once). The daemon checks when
// usage is read (the usage routes, the budget routes, every /metrics scrape), so the alert's
// time is when the crossing was first seen. Set() and Remove() change budgets, each audited
// ("auth.budget_set", "auth.budget_removed"); a Set() re-arms the month's alert of that budget.
// Public header of auth/: other folders include it.
// Thread safety: every method may be called from many threads at once. The stores outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "auth/auth_store.h"
#include "auth/authenticator.h"
#include "auth/budget_store.h"
#include "kimi/status.h"

namespace kimi::auth {

struct BudgetState {
  Budget budget;
  std::string name;         // a key budget's key name; empty for owners
  int64_t used_tokens = 0;  // this UTC month
  bool alerting = false;    // used_tokens >= the threshold
  bool exceeded = false;    // used_tokens >= tokens_per_month
};

class BudgetWatch {
 public:
  // `clock_ms`: Unix ms; the system clock when empty.
  BudgetWatch(AuthStore* auth_store, BudgetStore* budgets, std::function<int64_t()> clock_ms = {});

  // Every budget's state this month, alerting ones first; records first crossings (above).
  Result<std::vector<BudgetState>> Check();
  // Alerts recorded this month and the two before, newest first.
  Result<std::vector<BudgetAlert>> RecentAlerts();
  // Creates or replaces a budget. InvalidArgument for tokens_per_month < 1 or alert_percent
  // outside 1..100; NotFound for a key id that names no key, or an owner that is neither a
  // user, a system principal nor the owner of a key. Returns the budget as stored.
  Result<Budget> Set(const Actor& actor, Budget budget);
  // NotFound when there is no such budget.
  Status Remove(const Actor& actor, BudgetScope scope, const std::string& subject);

  int64_t NowMs() const;

 private:
  Status CheckSubject(BudgetScope scope, const std::string& subject);

  AuthStore* auth_store_;
  BudgetStore* budgets_;
  std::function<int64_t()> clock_ms_;
};

}  // namespace kimi::auth
