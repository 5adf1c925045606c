#include "http/admin_handlers.h"

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <set>

#include "api/backend.h"
#include "audit/record.h"
#include "auth/authenticator.h"
#include "auth/password.h"
#include "http/admin_body.h"
#include "http/error_response.h"
#include "http/request_auth.h"
#include "kimi/log.h"
#include "kimi/utc_time.h"

namespace kimi::http {
namespace {

using nlohmann::json;

void Reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// The auth events of the change just made go into the audit log before the response does.
void DrainEvents(const Services& services, const RequestContext& ctx) {
  Status s = services.authenticator->DrainEvents();
  if (!s.ok()) log::Warn("auth events not yet in the audit log", {{"request_id", ctx.request_id}, {"error", s.ToString()}});
}

auth::Authenticator& Auth(const Services& services) { return *services.authenticator; }

auth::Actor ActorOf(const RequestContext& ctx) { return auth::Actor::Of(*ctx.principal, ctx.remote_addr); }

Result<auth::Role> RoleField(const json& body) {
  KIMI_ASSIGN_OR_RETURN(std::string name, Required(body, "role"));
  std::optional<auth::Role> role = auth::ParseRole(name);
  if (!role) return Status::InvalidArgument("unknown role '" + name + "' (admin, operator, auditor, user, scrape)");
  return *role;
}

json LimitsJson(const auth::KeyLimits& limits) {
  json out = json::object();
  for (const auth::KeyLimitField& f : auth::kKeyLimitFields) out[std::string(f.name)] = limits.*f.member;
  return out;
}

json KeyJson(const auth::KeyRecord& k) {
  auto time = [](int64_t ms) { return ms == 0 ? json(nullptr) : json(FormatUtcMillis(ms)); };
  json out{{"id", k.id},           {"name", k.name},       {"owner", k.owner},
           {"role", k.role},       {"models", k.models},   {"created_at", time(k.created_ms)},
           {"expires_at", time(k.expires_ms)}, {"revoked_at", time(k.revoked_ms)},
           {"last_used_at", time(k.last_used_ms)}};
  out.update(LimitsJson(k.limits));
  return out;
}

json PeriodJson(const auth::PeriodUsage& p) {
  return json{{"period_start", FormatUtcMillis(p.period_start_ms)},
              {"requests", p.requests},
              {"prompt_tokens", p.prompt_tokens},
              {"completion_tokens", p.completion_tokens},
              {"total_tokens", p.tokens()}};
}

// The limit fields present in `body`, as the limits of a change.
void ReadLimitChange(const json& body, auth::KeyChange* change) {
  for (size_t i = 0; i < std::size(auth::kKeyLimitFields); ++i) {
    const std::string name(auth::kKeyLimitFields[i].name);
    if (body.contains(name)) change->limits[i] = body[name].get<int64_t>();
  }
}

std::set<std::string> LimitNames() {
  std::set<std::string> out;
  for (const auth::KeyLimitField& f : auth::kKeyLimitFields) out.insert(std::string(f.name));
  return out;
}

std::set<std::string> With(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

// The allowed models of a new or edited key: each must be a model the appliance serves now, so
// that a typing mistake cannot lock a key out of its model. Duplicates are dropped.
Result<std::vector<std::string>> ServedModelsField(const Services& services, const json& body) {
  std::vector<std::string> served = services.backend == nullptr ? std::vector<std::string>{} : services.backend->Models();
  std::vector<std::string> out;
  for (const json& value : body["models"]) {
    const std::string model = value.get<std::string>();
    if (std::find(out.begin(), out.end(), model) != out.end()) continue;
    if (std::find(served.begin(), served.end(), model) == served.end()) {
      std::string names;
      for (const std::string& m : served) names += (names.empty() ? "" : ", ") + m;
      return Status::InvalidArgument("field 'models': unknown model '" + model + "' (served now: " +
                                     (names.empty() ? "none; a model loads or its backend comes up first" : names) + ")");
    }
    out.push_back(model);
  }
  return out;
}

// A body that carries credentials is small: anything larger is refused (413) before it is
// parsed, hashed or written anywhere. Room for two passwords of kMaxPasswordBytes, each byte
// escaped as \u00XX, and a user name.
constexpr size_t kMaxCredentialBodyBytes = 16 * 1024;

bool RefuseOversizeCredentials(const httplib::Request& req, httplib::Response& res) {
  if (req.body.size() <= kMaxCredentialBodyBytes) return false;
  WriteError(PayloadTooLarge(static_cast<int64_t>(kMaxCredentialBodyBytes)), res);
  return true;
}

// The required user name of a body, checked (auth::CheckUsername) with the field named.
Result<std::string> UsernameField(const json& body, RequestContext& ctx) {
  return CheckedUsername(body, &ctx.error_param);
}

// A required password field, at most auth::kMaxPasswordBytes, with the field named.
Result<std::string> PasswordField(const json& body, const char* key, RequestContext& ctx) {
  return CheckedPassword(body, key, &ctx.error_param);
}

json PrincipalJson(const auth::Principal& p) {
  return json{{"id", p.id},
              {"kind", p.kind == auth::Principal::Kind::kSession ? "session" : "api_key"},
              {"role", auth::RoleName(p.role)},
              {"owner", p.owner},
              {"must_change_password", p.must_change_password}};
}

// The user routes whose body is {"username"}: `act` on that user, then `state` (the fields
// the act set) beside its name.
Status ActOnUser(const Services& services, RequestContext& ctx, const httplib::Request& req, httplib::Response& res,
                 Status (auth::Authenticator::*act)(const auth::Actor&, const std::string&), json state) {
  KIMI_ASSIGN_OR_RETURN(json body, ParseBody(req.body, {"username"}, {}, {}, &ctx.error_param));
  KIMI_ASSIGN_OR_RETURN(std::string username, UsernameField(body, ctx));
  Status s = (Auth(services).*act)(ActorOf(ctx), username);
  DrainEvents(services, ctx);
  KIMI_RETURN_IF_ERROR(s);
  state["username"] = username;
  Reply(res, 200, state);
  return Status::OK();
}

}  // namespace

Status HandleSessionLogin(const Services& services, RequestContext& ctx, const httplib::Request& req,
                          httplib::Response& res) {
  if (services.authenticator == nullptr) return Status::Unavailable("authentication is not configured");
  if (RefuseOversizeCredentials(req, res)) return Status::OK();
  KIMI_ASSIGN_OR_RETURN(LoginBody login, ParseLoginBody(req.body, &ctx.error_param));
  const std::string& username = login.username;
  Result<auth::Session> session = Auth(services).Login(username, login.password, ctx.remote_addr, &ctx.retry_after_s);
  DrainEvents(services, ctx);
  if (!session.ok()) {
    ctx.auth_failure = "login failed for " + username;
    return session.status();
  }
  ctx.principal = session->principal;
  int64_t max_age_s = Auth(services).options().session_absolute_timeout_ms / 1000;
  res.set_header("Set-Cookie", SessionCookie(session->session_id, max_age_s));
  json out = PrincipalJson(session->principal);
  out["csrf_token"] = session->csrf_token;
  out["expires_at"] = FormatUtcMillis(session->expires_ms);
  Reply(res, 200, out);
  return Status::OK();
}

Status HandleSessionGet(const Services&, RequestContext& ctx, const httplib::Request&, httplib::Response& res) {
  Reply(res, 200, PrincipalJson(*ctx.principal));
  return Status::OK();
}

Status HandleSessionLogout(const Services& services, RequestContext& ctx, const httplib::Request&,
                           httplib::Response& res) {
  Status s = Auth(services).Logout(*ctx.principal, ctx.remote_addr);
  DrainEvents(services, ctx);
  KIMI_RETURN_IF_ERROR(s);
  res.set_header("Set-Cookie", ExpiredSessionCookie());
  Reply(res, 200, json{{"status", "logged_out"}});
  return Status::OK();
}

Status HandleSessionPassword(const Services& services, RequestContext& ctx, const httplib::Request& req,
                             httplib::Response& res) {
  if (RefuseOversizeCredentials(req, res)) return Status::OK();
  KIMI_ASSIGN_OR_RETURN(json body, ParseBody(req.body, {"old_password", "new_password"}, {}, {}, &ctx.error_param));
  KIMI_ASSIGN_OR_RETURN(std::string old_password, PasswordField(body, "old_password", ctx));
  KIMI_ASSIGN_OR_RETURN(std::string new_password, PasswordField(body, "new_password", ctx));
  Status s = Auth(services).ChangePassword(*ctx.principal, old_password, new_password, ctx.remote_addr);
  DrainEvents(services, ctx);
  KIMI_RETURN_IF_ERROR(s);
  Reply(res, 200, json{{"status", "password_changed"}});
  return Status::OK();
}

Status HandleKeysList(const Services& services, RequestContext&, const httplib::Request&, httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::KeyRecord> keys, Auth(services).ListKeys());
  json data = json::array();
  for (const auth::KeyRecord& k : keys) data.push_back(KeyJson(k));
  Reply(res, 200, json{{"object", "list"}, {"data", data}});
  return Status::OK();
}

Status HandleKeysCreate(const Services& services, RequestContext& ctx, const httplib::Request& req,
                        httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(json body, ParseBody(req.body, With({"name", "owner", "role", "models", "expires_at"}, LimitNames()),
                                             {"models"}, LimitNames(), &ctx.error_param));
  auth::NewKey spec;
  ctx.error_param = "name";
  KIMI_ASSIGN_OR_RETURN(spec.name, Required(body, "name"));
  ctx.error_param = "role";
  KIMI_ASSIGN_OR_RETURN(spec.role, RoleField(body));
  spec.owner = Field(body, "owner");
  if (!spec.owner.empty()) {
    ctx.error_param = "owner";
    KIMI_RETURN_IF_ERROR(Auth(services).CheckKeyOwner(spec.owner));
  }
  if (body.contains("models")) {
    ctx.error_param = "models";
    KIMI_ASSIGN_OR_RETURN(spec.models, ServedModelsField(services, body));
  }
  auth::KeyChange limits;
  ReadLimitChange(body, &limits);
  spec.limits = auth::ApplyLimitChange(auth::KeyLimits{}, limits);
  if (std::string expires = Field(body, "expires_at"); !expires.empty()) {
    ctx.error_param = "expires_at";
    KIMI_ASSIGN_OR_RETURN(spec.expires_ms, audit::ParseUtcMillis(expires));
  }
  ctx.error_param.reset();
  Result<auth::CreatedKey> created = Auth(services).CreateKey(ActorOf(ctx), spec);
  DrainEvents(services, ctx);
  if (!created.ok()) return created.status();
  json out = KeyJson(created->record);
  out["key"] = created->secret;  // the only time it is ever shown
  Reply(res, 201, out);
  return Status::OK();
}

Status HandleKeysRevoke(const Services& services, RequestContext& ctx, const httplib::Request& req,
                        httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(json body, ParseBody(req.body, {"id"}));
  KIMI_ASSIGN_OR_RETURN(std::string id, Required(body, "id"));
  Status s = Auth(services).RevokeKey(ActorOf(ctx), id);
  DrainEvents(services, ctx);
  KIMI_RETURN_IF_ERROR(s);
  Reply(res, 200, json{{"id", id}, {"revoked", true}});
  return Status::OK();
}

Status HandleKeyUpdate(const Services& services, RequestContext& ctx, const httplib::Request& req,
                       httplib::Response& res) {
  const std::string& id = ctx.path_params["id"];
  KIMI_ASSIGN_OR_RETURN(json body, ParseBody(req.body, With({"role", "models"}, LimitNames()), {"models"}, LimitNames(),
                                             &ctx.error_param));
  auth::KeyChange change;
  if (body.contains("role")) {
    ctx.error_param = "role";
    KIMI_ASSIGN_OR_RETURN(change.role, RoleField(body));
  }
  if (body.contains("models")) {
    ctx.error_param = "models";
    KIMI_ASSIGN_OR_RETURN(change.models, ServedModelsField(services, body));
  }
  ReadLimitChange(body, &change);
  ctx.error_param.reset();
  Result<auth::KeyRecord> updated = Auth(services).UpdateKey(ActorOf(ctx), id, change);
  DrainEvents(services, ctx);
  if (!updated.ok()) return updated.status();
  Reply(res, 200, KeyJson(*updated));
  return Status::OK();
}

Status HandleKeyUsage(const Services& services, RequestContext& ctx, const httplib::Request&, httplib::Response& res) {
  const std::string& id = ctx.path_params["id"];
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::KeyRecord> keys, Auth(services).ListKeys());
  auto key = std::find_if(keys.begin(), keys.end(), [&](const auth::KeyRecord& k) { return k.id == id; });
  if (key == keys.end()) return Status::NotFound("no API key with id " + id);
  KIMI_ASSIGN_OR_RETURN(auth::KeyUsage usage, Auth(services).Usage(id));
  std::optional<auth::Role> role = auth::ParseRole(key->role);
  auth::KeyLimits role_limits = role ? Auth(services).RoleLimits()[*role] : auth::KeyLimits{};
  Reply(res, 200, json{{"id", id},
                       {"limits", LimitsJson(key->limits)},
                       {"effective_limits", LimitsJson(auth::Stricter(key->limits, role_limits))},
                       {"day", PeriodJson(usage.day)},
                       {"month", PeriodJson(usage.month)},
                       {"streams_in_flight", Auth(services).StreamsInFlight(id)}});
  return Status::OK();
}

Status HandleKeyLimitsRetired(const Services&, RequestContext& ctx, const httplib::Request&,
                              httplib::Response& res) {
  WriteError(ApiError{410, "invalid_request_error", "route_retired",
                      "POST /admin/v1/keys/" + ctx.path_params["id"] +
                          "/limits is retired: send the same fields with PATCH /admin/v1/keys/" +
                          ctx.path_params["id"] + " (fields left out keep their value)",
                      std::nullopt},
             res);
  return Status::OK();
}

Status HandleRolesList(const Services& services, RequestContext&, const httplib::Request&, httplib::Response& res) {
  std::map<auth::Role, auth::KeyLimits> limits = Auth(services).RoleLimits();
  json data = json::array();
  for (auth::Role role : auth::AllRoles()) {
    json permissions = json::array();
    for (auth::Permission p : auth::AllPermissions()) {
      if (p != auth::Permission::kPublic && auth::RoleAllows(role, p)) permissions.push_back(auth::PermissionName(p));
    }
    data.push_back(json{{"role", auth::RoleName(role)}, {"permissions", permissions}, {"limits", LimitsJson(limits[role])}});
  }
  Reply(res, 200, json{{"object", "list"}, {"data", data}});
  return Status::OK();
}

Status HandleRoleLimits(const Services& services, RequestContext& ctx, const httplib::Request& req,
                        httplib::Response& res) {
  const std::string& name = ctx.path_params["role"];
  std::optional<auth::Role> role = auth::ParseRole(name);
  if (!role) return Status::NotFound("no role named '" + name + "' (admin, operator, auditor, user, scrape)");
  KIMI_ASSIGN_OR_RETURN(json body, ParseBody(req.body, LimitNames(), {}, LimitNames()));
  auth::KeyChange change;
  ReadLimitChange(body, &change);  // fields left out keep their value
  Result<auth::KeyLimits> limits = Auth(services).UpdateRoleLimits(ActorOf(ctx), *role, change);
  DrainEvents(services, ctx);
  if (!limits.ok()) return limits.status();
  Reply(res, 200, json{{"role", name}, {"limits", LimitsJson(*limits)}});
  return Status::OK();
}

Status HandleTlsReload(const Services& services, RequestContext& ctx, const httplib::Request&,
                       httplib::Response& res) {
  if (!services.reload_tls) return Status::FailedPrecondition("this daemon does not serve TLS (server.tls is not set)");
  Result<std::string> loaded = services.reload_tls(ActorOf(ctx));
  if (!loaded.ok()) return loaded.status();
  Reply(res, 200, json{{"reloaded", true}, {"certificate", *loaded}});
  return Status::OK();
}

Status HandleUsersList(const Services& services, RequestContext&, const httplib::Request&, httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::UserRecord> users, Auth(services).ListUsers());
  json data = json::array();
  for (const auth::UserRecord& u : users) {
    data.push_back(json{{"username", u.username},
                        {"role", u.role},
                        {"disabled", u.disabled},
                        {"must_change_password", u.must_change_password},
                        {"locked_until", u.locked_until_ms ? json(FormatUtcMillis(u.locked_until_ms)) : json(nullptr)},
                        {"last_login_at", u.last_login_ms ? json(FormatUtcMillis(u.last_login_ms)) : json(nullptr)}});
  }
  Reply(res, 200, json{{"object", "list"}, {"data", data}});
  return Status::OK();
}

Status HandleUsersAdd(const Services& services, RequestContext& ctx, const httplib::Request& req,
                      httplib::Response& res) {
  if (RefuseOversizeCredentials(req, res)) return Status::OK();
  KIMI_ASSIGN_OR_RETURN(json body, ParseBody(req.body, {"username", "role"}, {}, {}, &ctx.error_param));
  KIMI_ASSIGN_OR_RETURN(std::string username, UsernameField(body, ctx));
  ctx.error_param = "role";
  KIMI_ASSIGN_OR_RETURN(auth::Role role, RoleField(body));
  ctx.error_param.reset();
  Result<std::string> one_time = Auth(services).AddUser(ActorOf(ctx), username, role);
  DrainEvents(services, ctx);
  if (!one_time.ok()) return one_time.status();
  Reply(res, 201, json{{"username", username},
                       {"role", auth::RoleName(role)},
                       {"one_time_password", *one_time},
                       {"must_change_password", true}});
  return Status::OK();
}

Status HandleUsersDisable(const Services& services, RequestContext& ctx, const httplib::Request& req,
                          httplib::Response& res) {
  return ActOnUser(services, ctx, req, res, &auth::Authenticator::DisableUser, json{{"disabled", true}});
}

Status HandleUsersEnable(const Services& services, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  return ActOnUser(services, ctx, req, res, &auth::Authenticator::EnableUser, json{{"disabled", false}});
}

Status HandleUsersUnlock(const Services& services, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  return ActOnUser(services, ctx, req, res, &auth::Authenticator::UnlockUser, json{{"locked_until", nullptr}});
}

}  // namespace kimi::http
