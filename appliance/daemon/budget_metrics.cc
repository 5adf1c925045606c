#include "daemon/budget_metrics.h"

#include "kimi/log.h"

namespace kimi::daemon {

std::function<void()> BudgetMetricsRefresher(metrics::Registry& registry, auth::BudgetWatch& budgets) {
  metrics::Gauge& alerts =
      registry
          .AddGauge("kimi_budget_alerts", "Token budgets at or over their alert threshold this UTC month.")
          .WithLabels({});
  metrics::Gauge& exceeded = registry
                                 .AddGauge("kimi_budgets_exceeded",
                                           "Token budgets used up this UTC month (soft: requests still run).")
                                 .WithLabels({});
  return [&alerts, &exceeded, &budgets] {
    Result<std::vector<auth::BudgetState>> states = budgets.Check();
    if (!states.ok()) {
      log::Warn("cannot check the token budgets", {{"error", states.status().ToString()}});
      return;
    }
    int alerting = 0, over = 0;
    for (const auth::BudgetState& st : *states) {
      alerting += st.alerting ? 1 : 0;
      over += st.exceeded ? 1 : 0;
    }
    alerts.Set(alerting);
    exceeded.Set(over);
  };
}

}  // namespace kimi::daemon
