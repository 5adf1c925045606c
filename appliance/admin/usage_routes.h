// The admin API's usage and budget routes (docs/admin-api.yaml): what each key and each owner
// used per UTC day over a range, the top keys or owners of a range, and the soft monthly token
// budgets with their alerts (auth/budget_watch.h). Reading the top list or the budgets checks the
// budgets, so an alert is recorded (once per budget and month) when it is first seen.
//
//   GET    /admin/v1/usage?by=key|owner&days=N        one line per key or owner, a value per day
//   GET    /admin/v1/usage/top?by=..&days=N&limit=M   the M that used most tokens, with share and budget
//   GET    /admin/v1/budgets                          every budget's state this month, recent alerts
//   PUT    /admin/v1/budgets/{scope}/{subject}        {tokens_per_month, alert_percent?} -> the budget
//   DELETE /admin/v1/budgets/{scope}/{subject}
//
// Reads need usage.read (admin, operator, auditor); changes keys.manage (admin), audited.
//
// Thread safety: each handler may run on many threads at once (the services are thread-safe).
#pragma once

#include "auth/auth_store.h"
#include "auth/authenticator.h"
#include "auth/budget_watch.h"
#include "http/routes.h"

namespace kimi::admin {

// Bound to the services, which outlive the table; a null one makes the routes answer 503.
struct UsageServices {
  auth::Authenticator* auth = nullptr;
  auth::AuthStore* store = nullptr;
  auth::BudgetWatch* budgets = nullptr;
};

void AddUsageRoutes(http::RouteTable& table, const UsageServices& services);

}  // namespace kimi::admin
