// The monthly token budgets on /metrics: kimi_budget_alerts, how many budgets are at or over
// their alert threshold this UTC month, and kimi_budgets_exceeded, how many are used up
// (auth/budget_watch.h). Checked when scraped, so a scrape also records a first crossing (its
// audit event reaches the audit log with the outbox's next pass).
//
// Thread safety: register at start-up; the refresher on one thread at a time (the /metrics
// handler's before-render hook).
#pragma once

#include <functional>

#include "auth/budget_watch.h"
#include "metrics/metrics.h"

namespace kimi::daemon {

// Registers the two gauges; the returned function brings them up to budgets.Check(). A failed
// check leaves them as they are (and is logged). Both arguments outlive the function.
std::function<void()> BudgetMetricsRefresher(metrics::Registry& registry, auth::BudgetWatch& budgets);

}  // namespace kimi::daemon
