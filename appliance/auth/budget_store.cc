#include "auth/budget_store.h"

#include "store/sql_statement.h"

namespace kimi::auth {

using store::SqlStatement;

std::string_view BudgetScopeName(BudgetScope scope) {
  return scope == BudgetScope::kKey ? "key" : "owner";
}

std::optional<BudgetScope> ParseBudgetScope(std::string_view name) {
  if (name == "key") return BudgetScope::kKey;
  if (name == "owner") return BudgetScope::kOwner;
  return std::nullopt;
}

Result<std::vector<Budget>> BudgetStore::List() {
  std::vector<Budget> out;
  Status status = store_->Read([&](sqlite3* db) -> Status {
    SqlStatement s(db,
                   "SELECT scope, subject, tokens_per_month, alert_percent, updated_ms FROM auth_budgets "
                   "ORDER BY scope, subject");
    return s.ForEachRow([&] {
      out.push_back(Budget{ParseBudgetScope(s.Text(0)).value_or(BudgetScope::kKey), s.Text(1), s.Int(2),
                           s.Int(3), s.Int(4)});
    });
  });
  if (!status.ok()) return status;
  return out;
}

Status BudgetStore::Put(const Budget& b, int64_t month_start_ms, const AuthEvent& event) {
  const std::string scope(BudgetScopeName(b.scope));
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement put(db,
                     "INSERT INTO auth_budgets(scope, subject, tokens_per_month, alert_percent, updated_ms) "
                     "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(scope, subject) DO UPDATE SET "
                     "tokens_per_month = ?3, alert_percent = ?4, updated_ms = ?5");
    put.Bind(1, scope)
        .Bind(2, b.subject)
        .Bind(3, b.tokens_per_month)
        .Bind(4, b.alert_percent)
        .Bind(5, b.updated_ms);
    KIMI_RETURN_IF_ERROR(put.Run());
    SqlStatement rearm(
        db, "DELETE FROM auth_budget_alerts WHERE scope = ?1 AND subject = ?2 AND month_start_ms = ?3");
    rearm.Bind(1, scope).Bind(2, b.subject).Bind(3, month_start_ms);
    KIMI_RETURN_IF_ERROR(rearm.Run());
    return InsertAuthEvent(db, event);
  });
}

Status BudgetStore::Remove(BudgetScope scope, const std::string& subject, const AuthEvent& event) {
  return store_->Write([&](sqlite3* db) -> Status {
    SqlStatement s(db, "DELETE FROM auth_budgets WHERE scope = ?1 AND subject = ?2");
    s.Bind(1, BudgetScopeName(scope)).Bind(2, subject);
    KIMI_RETURN_IF_ERROR(s.Run());
    if (s.Changes() == 0) {
      return Status::NotFound("no " + std::string(BudgetScopeName(scope)) + " budget for '" + subject + "'");
    }
    return InsertAuthEvent(db, event);
  });
}

Result<bool> BudgetStore::RecordAlert(const BudgetAlert& a, const AuthEvent& event) {
  bool written = false;
  Status status = store_->Write([&](sqlite3* db) -> Status {
    SqlStatement s(
        db,
        "INSERT OR IGNORE INTO auth_budget_alerts(scope, subject, month_start_ms, time_ms, tokens, "
        "threshold_tokens) VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    s.Bind(1, BudgetScopeName(a.scope)).Bind(2, a.subject).Bind(3, a.month_start_ms).Bind(4, a.time_ms);
    s.Bind(5, a.tokens).Bind(6, a.threshold_tokens);
    KIMI_RETURN_IF_ERROR(s.Run());
    written = s.Changes() > 0;
    return written ? InsertAuthEvent(db, event) : Status::OK();
  });
  if (!status.ok()) return status;
  return written;
}

Result<std::vector<BudgetAlert>> BudgetStore::Alerts(int64_t from_month_ms) {
  std::vector<BudgetAlert> out;
  Status status = store_->Read([&](sqlite3* db) -> Status {
    SqlStatement s(
        db,
        "SELECT scope, subject, month_start_ms, time_ms, tokens, threshold_tokens FROM auth_budget_alerts "
        "WHERE month_start_ms >= ?1 ORDER BY time_ms DESC, scope, subject");
    s.Bind(1, from_month_ms);
    return s.ForEachRow([&] {
      out.push_back(BudgetAlert{ParseBudgetScope(s.Text(0)).value_or(BudgetScope::kKey), s.Text(1), s.Int(2),
                                s.Int(3), s.Int(4), s.Int(5)});
    });
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace kimi::auth
