#include "admin/admin_routes.h"

#include "admin/key_routes.h"
#include "admin/model_routes.h"
#include "admin/policy_routes.h"
#include "admin/request_rules_routes.h"
#include "admin/session_routes.h"
#include "admin/trust_routes.h"
#include "admin/usage_routes.h"
#include "admin/user_routes.h"

namespace kimi::admin {

void AddAdminRoutes(http::RouteTable& table, const AdminServices& services) {
  AddModelRoutes(table, services.model_admin);
  AddTrustRoutes(table, TrustServices{services.trust, services.model_admin});
  AddSessionRoutes(table, services.authenticator);
  AddKeyRoutes(table, services.authenticator, services.backend);
  AddTlsRoutes(table, services.reload_tls);
  AddUserRoutes(table, services.authenticator);
  AddPolicyRoutes(table, services.policies);
  AddRequestRulesRoute(table, services.request_rules);
  AddAuditRoutes(table, services.audit);
  AddUsageRoutes(table, UsageServices{services.authenticator, services.auth_store, services.budgets});
  AddMetricsRoutes(table, services.metrics_history);
}

}  // namespace kimi::admin
