#include "http/routes.h"

#include "http/admin_handlers.h"
#include "http/handlers.h"

namespace kimi::http {
namespace {

using P = auth::Permission;

const Route kRoutes[] = {
    {"GET", "/healthz", "healthz", &HandleHealthz, /*probe=*/true, P::kPublic},
    {"GET", "/readyz", "readyz", &HandleReadyz, /*probe=*/true, P::kPublic},
    {"GET", "/metrics", "metrics", &HandleMetrics, /*probe=*/true, P::kMetricsRead},
    // The login form's POST is public by nature: it is how a person authenticates.
    {"POST", "/admin/v1/session", "admin_session_login", &HandleSessionLogin, false, P::kPublic,
     /*body_has_password=*/true},
    {"GET", "/admin/v1/session", "admin_session_get", &HandleSessionGet, false, P::kSessionSelf},
    {"DELETE", "/admin/v1/session", "admin_session_logout", &HandleSessionLogout, false, P::kSessionSelf},
    {"POST", "/admin/v1/session/password", "admin_session_password", &HandleSessionPassword, false, P::kSessionSelf,
     /*body_has_password=*/true},
    {"GET", "/admin/v1/keys", "admin_keys_list", &HandleKeysList, false, P::kKeysManage},
    {"POST", "/admin/v1/keys", "admin_keys_create", &HandleKeysCreate, false, P::kKeysManage},
    {"POST", "/admin/v1/keys/revoke", "admin_keys_revoke", &HandleKeysRevoke, false, P::kKeysManage},
    {"GET", "/admin/v1/users", "admin_users_list", &HandleUsersList, false, P::kUsersManage},
    {"POST", "/admin/v1/users", "admin_users_add", &HandleUsersAdd, false, P::kUsersManage},
    {"POST", "/admin/v1/users/disable", "admin_users_disable", &HandleUsersDisable, false, P::kUsersManage},
};

}  // namespace

std::span<const Route> Routes() { return kRoutes; }

const Route* FindRoute(std::string_view method, std::string_view path) {
  if (method == "HEAD") method = "GET";
  for (const Route& r : kRoutes) {
    if (r.method == method && r.path == path) return &r;
  }
  return nullptr;
}

std::string AllowedMethods(std::string_view path) {
  std::string out;
  for (const Route& r : kRoutes) {
    if (r.path != path) continue;
    if (!out.empty()) out += ", ";
    out += r.method;
    if (r.method == "GET") out += ", HEAD";
  }
  return out;
}

bool IsPublicPath(std::string_view path) {
  bool any = false;
  for (const Route& r : kRoutes) {
    if (r.path != path) continue;
    if (r.permission != auth::Permission::kPublic) return false;
    any = true;
  }
  return any;
}

}  // namespace kimi::http
