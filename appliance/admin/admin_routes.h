// The whole /admin/v1 API (docs/admin-api.yaml): every group of admin routes added to the route
// table, each bound to exactly the services it uses. The daemon calls it once at start-up; the
// admin API doc test calls it with no services to read the table.
//
//   group      file                        services
//   models     model_routes.h              ModelAdmin
//   trust      trust_routes.h              TrustDirectory, ModelAdmin (read)
//   session    session_routes.h            Authenticator
//   keys/roles key_routes.h                Authenticator, Backend (the served models)
//   tls        tls_routes.h                the daemon's TLS reload
//   users      user_routes.h               Authenticator
//   policies   policy_routes.h             PolicyService
//   rules      request_rules_routes.h       ModelRulesTable
//   audit      audit_routes.h, audit_proof_route.h   AuditAccess (with the Authenticator's key list)
//   usage      usage_routes.h              Authenticator, AuthStore (usage rows), BudgetWatch
//   metrics    metrics_routes.h            MetricsHistory
// Public header of admin/: other folders include it.
// Thread safety: call before the server runs; the handlers may run on many threads at once.
#pragma once

#include "admin/audit_routes.h"
#include "admin/metrics_routes.h"
#include "admin/tls_routes.h"
#include "http/routes.h"

namespace kimi::api {
class Backend;
class ModelRulesTable;
}  // namespace kimi::api
namespace kimi::auth {
class Authenticator;
class AuthStore;
class BudgetWatch;
}  // namespace kimi::auth
namespace kimi::models {
class ModelAdmin;
class TrustDirectory;
}  // namespace kimi::models
namespace kimi::policy {
class PolicyService;
}  // namespace kimi::policy

namespace kimi::admin {

// The services of the admin routes, owned by the daemon and outliving the table. A null one
// makes its routes answer 503 (the daemon sets them all; reload_tls is empty without TLS).
struct AdminServices {
  auth::Authenticator* authenticator = nullptr;
  const api::Backend* backend = nullptr;
  models::ModelAdmin* model_admin = nullptr;
  models::TrustDirectory* trust = nullptr;
  policy::PolicyService* policies = nullptr;
  const api::ModelRulesTable* request_rules = nullptr;
  const AuditAccess* audit = nullptr;
  auth::AuthStore* auth_store = nullptr;
  auth::BudgetWatch* budgets = nullptr;
  MetricsHistoryServices metrics_history;
  ReloadTls reload_tls;
};

void AddAdminRoutes(http::RouteTable& table, const AdminServices& services);

}  // namespace kimi::admin
