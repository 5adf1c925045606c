// Roles and permissions: the one table that says which role may do what.
//
// A route declares the permission it requires (http/routes.cc); the dispatcher authenticates
// the request, then asks RoleAllows(principal.role, route.permission). Adding an endpoint
// never touches this file unless it needs a new kind of permission. docs/security.md prints
// the matrix; roles_test.cc pins it.
//
//   admin     everything
//   operator  models, backends, health, metrics, inference; not keys, users or the audit log
//   auditor   read and export the audit log; read-only elsewhere (models, metrics, usage, the
//             key inventory: names, owners, states, never a secret)
//   user      the inference API and the model list its key may see (/v1/models), nothing of
//             the admin API but its own session
//
// Every read of the admin API needs a permission that `user` lacks: what the model store,
// the trust store, the policies or the audit log hold (digests, source paths, signers, who
// imported what) would defeat per-key model hiding and is nobody's business but operators'.
//   scrape    /metrics only (a key for the monitoring system; no user has it)
// Public header of auth/: other folders include it.
// Thread safety: constant data and pure functions.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace kimi::auth {

enum class Role { kAdmin, kOperator, kAuditor, kUser, kScrape };

enum class Permission {
  kPublic,         // no authentication: liveness, readiness, the login form's POST
  kSessionSelf,    // any authenticated principal acting on its own session or password
  kMetricsRead,    // GET /metrics
  kModelsRead,     // GET /v1/models: the served models the key may use
  kModelsInspect,  // the model store (GET /admin/v1/models, import jobs): digests, sources, signers
  kInference,      // chat and completions
  kModelsManage,   // import, activate, retire models; backends
  kAuditRead,      // read, prove and export the audit log
  kKeysRead,       // list API keys (names, owners, roles, states, dates; never secrets or hashes)
  kKeysManage,     // create, edit, rotate and revoke anyone's API keys
  kUsersManage,    // add, list and disable console users
  kPolicyRead,     // read the active policy and its versions (changing one is admin.only)
  kTrustRead,      // list the model trust store's keys and CAs (changing it is admin.only)
  kUsageRead,      // usage per key and owner over time, top keys, budgets and their alerts
  kReadinessDetail,  // /readyz with each component's detail (paths, fingerprints, reasons)
  kAdminOnly,      // the default of a route that declares nothing: fail closed to admin
};

std::string_view RoleName(Role role);
std::optional<Role> ParseRole(std::string_view name);
// Roles a console user may hold (every role but scrape).
bool IsUserRole(Role role);
std::span<const Role> AllRoles();

std::string_view PermissionName(Permission permission);
std::span<const Permission> AllPermissions();

// The matrix. kPublic is allowed to every role (and to nobody, see the dispatcher).
bool RoleAllows(Role role, Permission permission);

}  // namespace kimi::auth
