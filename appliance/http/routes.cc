#include "http/routes.h"

#include <vector>

#include "admin/model_routes.h"
#include "admin/trust_routes.h"
#include "http/admin_handlers.h"
#include "http/console_handlers.h"
#include "http/audit_admin_handlers.h"
#include "http/audit_proof_handler.h"
#include "http/handlers.h"
#include "http/openai_handlers.h"
#include "policy/policy_routes.h"

namespace kimi::http {
namespace {

using P = auth::Permission;

const Route kRoutes[] = {
    {"GET", "/healthz", "healthz", &HandleHealthz, /*probe=*/true, P::kPublic},
    {"GET", "/readyz", "readyz", &HandleReadyz, /*probe=*/true, P::kPublic},
    {"GET", "/metrics", "metrics", &HandleMetrics, /*probe=*/true, P::kMetricsRead},
    // The web console's static files: public and unaudited like the probes (console_handlers.h).
    {"GET", "/", "console_root", &HandleConsoleRedirect, /*probe=*/true, P::kPublic},
    {"GET", "/console", "console_redirect", &HandleConsoleRedirect, /*probe=*/true, P::kPublic},
    {"GET", "/console/", "console_index", &HandleConsoleAsset, /*probe=*/true, P::kPublic},
    {"GET", "/console/{path...}", "console_asset", &HandleConsoleAsset, /*probe=*/true, P::kPublic},
    {"POST", "/v1/chat/completions", "chat_completions", &HandleChatCompletions, false, P::kInference},
    {"POST", "/v1/completions", "completions", &HandleCompletions, false, P::kInference},
    {"GET", "/v1/models", "models", &HandleListModels, false, P::kModelsRead},
    {"GET", "/v1/models/{id...}", "model", &HandleGetModel, false, P::kModelsRead},
    {"GET", "/admin/v1/models", "admin_models_list", &admin::HandleListModels, false, P::kModelsInspect},
    {"DELETE", "/admin/v1/models", "admin_models_remove", &admin::HandleRemoveModel, false, P::kModelsManage},
    {"POST", "/admin/v1/models/import", "admin_models_import", &admin::HandleImportModel, false, P::kModelsManage},
    {"GET", "/admin/v1/models/import", "admin_models_import_status", &admin::HandleImportStatus, false, P::kModelsInspect},
    {"POST", "/admin/v1/models/activate", "admin_models_activate", &admin::HandleActivateModel, false, P::kModelsManage},
    {"POST", "/admin/v1/models/rollback", "admin_models_rollback", &admin::HandleRollbackModel, false, P::kModelsManage},
    {"GET", "/admin/v1/trust", "admin_trust_list", &admin::HandleListTrust, false, P::kTrustRead},
    {"POST", "/admin/v1/trust", "admin_trust_add", &admin::HandleAddTrust, false, P::kAdminOnly},
    {"DELETE", "/admin/v1/trust/{id}", "admin_trust_remove", &admin::HandleRemoveTrust, false, P::kAdminOnly},
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
    {"PATCH", "/admin/v1/keys/{id}", "admin_keys_update", &HandleKeyUpdate, false, P::kKeysManage},
    {"GET", "/admin/v1/keys/{id}/usage", "admin_keys_usage", &HandleKeyUsage, false, P::kKeysManage},
    // Retired in favour of PATCH /admin/v1/keys/{id}; answers 410 naming the replacement.
    {"POST", "/admin/v1/keys/{id}/limits", "admin_keys_limits", &HandleKeyLimitsRetired, false, P::kKeysManage},
    {"GET", "/admin/v1/roles", "admin_roles_list", &HandleRolesList, false, P::kKeysManage},
    {"POST", "/admin/v1/roles/{role}/limits", "admin_roles_limits", &HandleRoleLimits, false, P::kKeysManage},
    {"POST", "/admin/v1/tls/reload", "admin_tls_reload", &HandleTlsReload, false, P::kAdminOnly},
    {"GET", "/admin/v1/users", "admin_users_list", &HandleUsersList, false, P::kUsersManage},
    {"POST", "/admin/v1/users", "admin_users_add", &HandleUsersAdd, false, P::kUsersManage},
    {"POST", "/admin/v1/users/disable", "admin_users_disable", &HandleUsersDisable, false, P::kUsersManage},
    {"POST", "/admin/v1/users/enable", "admin_users_enable", &HandleUsersEnable, false, P::kUsersManage},
    {"POST", "/admin/v1/users/unlock", "admin_users_unlock", &HandleUsersUnlock, false, P::kUsersManage},
    {"GET", "/admin/v1/policies", "admin_policies_list", &policy::HandleListPolicies, false, P::kPolicyRead},
    {"POST", "/admin/v1/policies", "admin_policies_submit", &policy::HandleSubmitPolicy, false, P::kAdminOnly},
    {"GET", "/admin/v1/policies/{version}", "admin_policies_get", &policy::HandleGetPolicy, false, P::kPolicyRead},
    {"GET", "/admin/v1/audit", "admin_audit_search", &HandleAuditSearch, false, P::kAuditRead},
    {"GET", "/admin/v1/audit/export", "admin_audit_export", &HandleAuditExport, false, P::kAuditRead},
    {"GET", "/admin/v1/audit/verify", "admin_audit_verify", &HandleAuditVerify, false, P::kAuditRead},
    {"GET", "/admin/v1/audit/records/{seq}/proof", "admin_audit_proof", &HandleAuditRecordProof, false, P::kAuditRead},
};

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    out.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return out;
}

bool IsParameter(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

bool IsRestParameter(std::string_view segment) {
  return IsParameter(segment) && segment.size() > 5 && segment.ends_with("...}");
}

std::string ParameterName(std::string_view segment) {
  std::string_view name = segment.substr(1, segment.size() - 2);
  if (name.size() >= 3 && name.substr(name.size() - 3) == "...") name.remove_suffix(3);
  return std::string(name);
}

}  // namespace

std::span<const Route> Routes() { return kRoutes; }

const Route* FindRoute(std::string_view method, std::string_view path) {
  if (method == "HEAD") method = "GET";
  for (const Route& r : kRoutes) {
    if (r.method == method && MatchRoutePath(r.path, path, nullptr)) return &r;
  }
  return nullptr;
}

std::string AllowedMethods(std::string_view path) {
  std::string out;
  for (const Route& r : kRoutes) {
    if (!MatchRoutePath(r.path, path, nullptr)) continue;
    if (!out.empty()) out += ", ";
    out += r.method;
    if (r.method == "GET") out += ", HEAD";
  }
  return out;
}

bool MatchRoutePath(std::string_view pattern, std::string_view path, std::map<std::string, std::string>* params) {
  const std::vector<std::string_view> want = Segments(pattern);
  const std::vector<std::string_view> got = Segments(path);
  std::map<std::string, std::string> found;
  size_t offset = 0;  // of got[i] in path
  for (size_t i = 0; i < want.size(); ++i) {
    if (i >= got.size()) return false;
    if (IsRestParameter(want[i]) && i + 1 == want.size()) {
      std::string_view rest = path.substr(offset);
      if (rest.empty()) return false;
      found[ParameterName(want[i])] = std::string(rest);
      if (params != nullptr) *params = std::move(found);
      return true;
    }
    if (IsParameter(want[i])) {
      if (got[i].empty()) return false;
      found[ParameterName(want[i])] = std::string(got[i]);
    } else if (want[i] != got[i]) {
      return false;
    }
    offset += got[i].size() + 1;
  }
  if (got.size() != want.size()) return false;
  if (params != nullptr) *params = std::move(found);
  return true;
}

std::string RoutePathRegex(std::string_view pattern) {
  static const std::string kSpecial = R"(\^$.|?*+()[]{})";
  std::string out;
  const std::vector<std::string_view> segments = Segments(pattern);
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) out += '/';
    if (IsRestParameter(segments[i]) && i + 1 == segments.size()) {
      out += "(.+)";
    } else if (IsParameter(segments[i])) {
      out += "([^/]+)";
    } else {
      for (char c : segments[i]) {
        if (kSpecial.find(c) != std::string::npos) out += '\\';
        out += c;
      }
    }
  }
  return out;
}

bool IsPublicPath(std::string_view path) {
  bool any = false;
  for (const Route& r : kRoutes) {
    if (!MatchRoutePath(r.path, path, nullptr)) continue;
    if (r.permission != auth::Permission::kPublic) return false;
    any = true;
  }
  return any;
}

}  // namespace kimi::http
