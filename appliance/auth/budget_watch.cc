#include "auth/budget_watch.h"

#include <algorithm>
#include <map>

#include "audit/record_builder.h"
#include "auth/principal.h"
#include "auth/usage_meter.h"
#include "kimi/utc_time.h"

namespace kimi::auth {
namespace {

std::string Describe(const Budget& b) {
  return std::string(BudgetScopeName(b.scope)) + " budget " + std::to_string(b.tokens_per_month) +
         " tokens per month, alert at " + std::to_string(b.alert_percent) + "%";
}

}  // namespace

BudgetWatch::BudgetWatch(AuthStore* auth_store, BudgetStore* budgets, std::function<int64_t()> clock_ms)
    : auth_store_(auth_store), budgets_(budgets), clock_ms_(std::move(clock_ms)) {}

int64_t BudgetWatch::NowMs() const {
  return clock_ms_ ? clock_ms_() : UnixMillisNow();
}

Result<std::vector<BudgetState>> BudgetWatch::Check() {
  KIMI_ASSIGN_OR_RETURN(std::vector<Budget> budgets, budgets_->List());
  if (budgets.empty()) return std::vector<BudgetState>{};
  const int64_t now = NowMs();
  const int64_t month = UtcMonthStartMs(now);
  KIMI_ASSIGN_OR_RETURN(std::vector<KeyRecord> keys, auth_store_->ListKeys());
  KIMI_ASSIGN_OR_RETURN(std::vector<UsageRowDelta> rows,
                        auth_store_->UsageRows(UsagePeriod::kMonth, month, NextUtcMonthStartMs(now)));
  std::map<std::string, const KeyRecord*> key_of;
  for (const KeyRecord& k : keys) key_of[k.id] = &k;
  std::map<std::string, int64_t> key_tokens, owner_tokens;
  for (const UsageRowDelta& row : rows) {
    const int64_t tokens = row.prompt_tokens + row.completion_tokens;
    key_tokens[row.key_id] += tokens;
    if (auto k = key_of.find(row.key_id); k != key_of.end()) owner_tokens[k->second->owner] += tokens;
  }
  std::vector<BudgetState> out;
  for (const Budget& b : budgets) {
    BudgetState state{b};
    const bool is_key = b.scope == BudgetScope::kKey;
    if (auto k = key_of.find(b.subject); is_key && k != key_of.end()) state.name = k->second->name;
    auto used = (is_key ? key_tokens : owner_tokens).find(b.subject);
    state.used_tokens = used == (is_key ? key_tokens : owner_tokens).end() ? 0 : used->second;
    state.alerting = state.used_tokens >= b.threshold_tokens();
    state.exceeded = state.used_tokens >= b.tokens_per_month;
    if (state.alerting) {
      const std::string who = is_key
                                  ? "key " + b.subject + (state.name.empty() ? "" : " ('" + state.name + "')")
                                  : "owner " + b.subject;
      AuthEvent event = ActorEvent(
          now, Actor{std::string(audit::kDaemonActor), "system", "local"}, "auth.budget_alert", b.subject, "ok",
          who + " used " + std::to_string(state.used_tokens) + " of " + std::to_string(b.tokens_per_month) +
              " tokens this month (alert at " + std::to_string(b.alert_percent) + "%, " +
              std::to_string(b.threshold_tokens()) + " tokens)");
      KIMI_RETURN_IF_ERROR(
          budgets_
              ->RecordAlert(
                  BudgetAlert{b.scope, b.subject, month, now, state.used_tokens, b.threshold_tokens()}, event)
              .status());
    }
    out.push_back(std::move(state));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const BudgetState& a, const BudgetState& b) { return a.alerting && !b.alerting; });
  return out;
}

Result<std::vector<BudgetAlert>> BudgetWatch::RecentAlerts() {
  int64_t from = UtcMonthStartMs(NowMs());
  for (int i = 0; i < 2; ++i) from = UtcMonthStartMs(from - 1);
  return budgets_->Alerts(from);
}

Status BudgetWatch::CheckSubject(BudgetScope scope, const std::string& subject) {
  KIMI_ASSIGN_OR_RETURN(std::vector<KeyRecord> keys, auth_store_->ListKeys());
  const bool is_key = scope == BudgetScope::kKey;
  for (const KeyRecord& k : keys) {
    if ((is_key ? k.id : k.owner) == subject) return Status::OK();
  }
  if (is_key) return Status::NotFound("no API key with id " + subject);
  if (IsSystemPrincipal(subject)) return Status::OK();
  KIMI_ASSIGN_OR_RETURN(std::optional<UserRecord> user, auth_store_->FindUser(subject));
  if (!user) return Status::NotFound("no user or key owner named '" + subject + "'");
  return Status::OK();
}

Result<Budget> BudgetWatch::Set(const Actor& actor, Budget budget) {
  if (budget.tokens_per_month < 1) return Status::InvalidArgument("tokens_per_month must be at least 1");
  if (budget.alert_percent < 1 || budget.alert_percent > 100)
    return Status::InvalidArgument("alert_percent must be 1..100");
  KIMI_RETURN_IF_ERROR(CheckSubject(budget.scope, budget.subject));
  budget.updated_ms = NowMs();
  KIMI_RETURN_IF_ERROR(budgets_->Put(
      budget, UtcMonthStartMs(budget.updated_ms),
      ActorEvent(budget.updated_ms, actor, "auth.budget_set", budget.subject, "ok", Describe(budget))));
  return budget;
}

Status BudgetWatch::Remove(const Actor& actor, BudgetScope scope, const std::string& subject) {
  return budgets_->Remove(scope, subject,
                          ActorEvent(NowMs(), actor, "auth.budget_removed", subject, "ok",
                                     std::string(BudgetScopeName(scope)) + " budget removed"));
}

}  // namespace kimi::auth
