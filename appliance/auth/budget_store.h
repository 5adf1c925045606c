// BudgetStore: the rows of auth_budgets and auth_budget_alerts (auth_migrations.h) in the
// daemon's Store. A budget is a soft monthly token budget of one key or of one owner (every key
// that owner holds) with the percentage at which it alerts; an alert row says that a budget's
// threshold was crossed in a UTC month, at most one per budget and month. Each change is written
// in one transaction with its auth event (the audit outbox). No policy lives here: BudgetWatch
// (budget_watch.h) decides when a threshold is crossed.
// Public header of auth/: other folders include it.
// Thread safety: every method may be called from any thread (the Store serialises them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/auth_store.h"
#include "kimi/status.h"
#include "store/store.h"

namespace kimi::auth {

enum class BudgetScope { kKey, kOwner };
std::string_view BudgetScopeName(BudgetScope scope);  // "key", "owner"
std::optional<BudgetScope> ParseBudgetScope(std::string_view name);

struct Budget {
  BudgetScope scope = BudgetScope::kKey;
  std::string subject;           // key id or owner name
  int64_t tokens_per_month = 0;  // > 0
  int64_t alert_percent = 80;    // 1..100
  int64_t updated_ms = 0;
  // The month's usage at which it alerts: alert_percent of the budget, rounded up; worked out in
  // two parts so that no budget up to int64's largest overflows (the product did, and alerted at 0).
  int64_t threshold_tokens() const {
    return tokens_per_month / 100 * alert_percent + (tokens_per_month % 100 * alert_percent + 99) / 100;
  }
};

struct BudgetAlert {
  BudgetScope scope = BudgetScope::kKey;
  std::string subject;
  int64_t month_start_ms = 0;
  int64_t time_ms = 0;  // when the crossing was seen
  int64_t tokens = 0;   // the month's usage then
  int64_t threshold_tokens = 0;
};

class BudgetStore {
 public:
  // `store` outlives this object.
  explicit BudgetStore(store::Store* store) : store_(store) {}

  // Every budget, ordered by scope and subject.
  Result<std::vector<Budget>> List();
  // Creates or replaces the budget, with its event. The current month's alert row of the budget
  // (month_start_ms) is deleted with it, so that the new threshold alerts again when crossed.
  Status Put(const Budget& budget, int64_t month_start_ms, const AuthEvent& event);
  // NotFound when there is no such budget.
  Status Remove(BudgetScope scope, const std::string& subject, const AuthEvent& event);
  // Writes the alert with its event unless the budget already has one for that month; true
  // when this call wrote it.
  Result<bool> RecordAlert(const BudgetAlert& alert, const AuthEvent& event);
  // Alerts of months starting at or after `from_month_ms`, newest first.
  Result<std::vector<BudgetAlert>> Alerts(int64_t from_month_ms);

 private:
  store::Store* store_;
};

}  // namespace kimi::auth
