#include "admin/key_routes.h"

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "admin/identity_fields.h"
#include "admin/reply.h"
#include "audit/record.h"
#include "auth/lifecycle_state.h"
#include "http/admin_body.h"
#include "http/error_response.h"
#include "kimi/utc_time.h"

namespace kimi::admin {
namespace {

using http::RequestContext;
using nlohmann::json;

// What the key routes use.
struct KeyServices {
  auth::Authenticator* auth;
  const api::Backend* backend;
};

json LimitsJson(const auth::KeyLimits& limits) {
  json out = json::object();
  for (const auth::KeyLimitField& f : auth::kKeyLimitFields) out[std::string(f.name)] = limits.*f.member;
  return out;
}

// A key as every key route answers it: never its secret or a hash. `state` is
// auth::KeyStateOf now; previous_secret_expires_at is set while a rotation's old secret works.
json KeyJson(const auth::KeyRecord& k) {
  auto time = [](int64_t ms) { return ms == 0 ? json(nullptr) : json(FormatUtcMillis(ms)); };
  const int64_t now = UnixMillisNow();
  json out{{"id", k.id},
           {"name", k.name},
           {"owner", k.owner},
           {"role", k.role},
           {"models", k.models},
           {"created_at", time(k.created_ms)},
           {"expires_at", time(k.expires_ms)},
           {"revoked_at", time(k.revoked_ms)},
           {"last_used_at", time(k.last_used_ms)},
           {"state", auth::KeyStateName(auth::KeyStateOf(k, now))},
           {"previous_secret_expires_at", time(k.previous_expires_ms > now ? k.previous_expires_ms : 0)}};
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
Result<std::vector<std::string>> ServedModelsField(const api::Backend* backend, const json& body) {
  std::vector<std::string> served = backend == nullptr ? std::vector<std::string>{} : backend->Models();
  std::vector<std::string> out;
  for (const json& value : body["models"]) {
    const std::string model = value.get<std::string>();
    if (std::find(out.begin(), out.end(), model) != out.end()) continue;
    if (std::find(served.begin(), served.end(), model) == served.end()) {
      std::string names;
      for (const std::string& m : served) names += (names.empty() ? "" : ", ") + m;
      return Status::InvalidArgument(
          "field 'models': unknown model '" + model + "' (served now: " +
          (names.empty() ? "none; a model loads or its backend comes up first" : names) + ")");
    }
    out.push_back(model);
  }
  return out;
}

Status HandleKeysList(const KeyServices& services, RequestContext& ctx, const httplib::Request& req,
                      httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(auth::ListQuery query, ListQueryParams(req, ctx));
  KIMI_ASSIGN_OR_RETURN(auth::ListPage<auth::KeyRecord> page, services.auth->ListKeys(query));
  json data = json::array();
  for (const auth::KeyRecord& k : page.items) data.push_back(KeyJson(k));
  ReplyJson(res, 200, ListPageJson(std::move(data), page.total, query));
  return Status::OK();
}

// A key with its new secret: the only time the secret is ever shown (creation, rotation).
void ReplyWithSecret(const auth::CreatedKey& key, int status, httplib::Response& res) {
  json out = KeyJson(key.record);
  out["key"] = key.secret;
  ReplyJson(res, status, out);
}

Status HandleKeysCreate(const KeyServices& services, RequestContext& ctx, const httplib::Request& req,
                        httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(
      json body,
      http::ParseBody(req.body, With({"name", "owner", "role", "models", "expires_at"}, LimitNames()),
                      {"models"}, LimitNames(), &ctx.error_param));
  auth::NewKey spec;
  ctx.error_param = "name";
  KIMI_ASSIGN_OR_RETURN(spec.name, http::Required(body, "name"));
  ctx.error_param = "role";
  KIMI_ASSIGN_OR_RETURN(spec.role, RoleField(body));
  spec.owner = http::Field(body, "owner");
  if (!spec.owner.empty()) {
    ctx.error_param = "owner";
    KIMI_RETURN_IF_ERROR(services.auth->CheckKeyOwner(spec.owner));
  }
  if (body.contains("models")) {
    ctx.error_param = "models";
    KIMI_ASSIGN_OR_RETURN(spec.models, ServedModelsField(services.backend, body));
  }
  auth::KeyChange limits;
  ReadLimitChange(body, &limits);
  spec.limits = auth::ApplyLimitChange(auth::KeyLimits{}, limits);
  if (std::string expires = http::Field(body, "expires_at"); !expires.empty()) {
    ctx.error_param = "expires_at";
    KIMI_ASSIGN_OR_RETURN(spec.expires_ms, auth::ParseKeyExpiry(expires, UnixMillisNow()));
  }
  ctx.error_param.reset();
  Result<auth::CreatedKey> created = services.auth->CreateKey(CallerOf(ctx), spec);
  DrainAuthEvents(*services.auth, ctx);
  if (!created.ok()) return created.status();
  ReplyWithSecret(*created, 201, res);
  return Status::OK();
}

Status HandleKeysRevoke(const KeyServices& services, RequestContext& ctx, const httplib::Request& req,
                        httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(json body, http::ParseBody(req.body, {"id"}));
  KIMI_ASSIGN_OR_RETURN(std::string id, http::Required(body, "id"));
  Status s = services.auth->RevokeKey(CallerOf(ctx), id);
  DrainAuthEvents(*services.auth, ctx);
  KIMI_RETURN_IF_ERROR(s);
  ReplyJson(res, 200, json{{"id", id}, {"revoked", true}});
  return Status::OK();
}

Status HandleKeyUpdate(const KeyServices& services, RequestContext& ctx, const httplib::Request& req,
                       httplib::Response& res) {
  const std::string& id = ctx.path_params["id"];
  KIMI_ASSIGN_OR_RETURN(json body, http::ParseBody(req.body, With({"role", "models"}, LimitNames()),
                                                   {"models"}, LimitNames(), &ctx.error_param));
  auth::KeyChange change;
  if (body.contains("role")) {
    ctx.error_param = "role";
    KIMI_ASSIGN_OR_RETURN(change.role, RoleField(body));
  }
  if (body.contains("models")) {
    ctx.error_param = "models";
    KIMI_ASSIGN_OR_RETURN(change.models, ServedModelsField(services.backend, body));
  }
  ReadLimitChange(body, &change);
  ctx.error_param.reset();
  Result<auth::KeyRecord> updated = services.auth->UpdateKey(CallerOf(ctx), id, change);
  DrainAuthEvents(*services.auth, ctx);
  if (!updated.ok()) return updated.status();
  ReplyJson(res, 200, KeyJson(*updated));
  return Status::OK();
}

Status HandleKeyRotate(const KeyServices& services, RequestContext& ctx, const httplib::Request& req,
                       httplib::Response& res) {
  const std::string& id = ctx.path_params["id"];
  KIMI_ASSIGN_OR_RETURN(json body, http::ParseBody(req.body, {"grace_seconds"}, {}, {"grace_seconds"},
                                                   &ctx.error_param));
  ctx.error_param = "grace_seconds";
  if (!body.contains("grace_seconds")) return Status::InvalidArgument("field 'grace_seconds' is required");
  const int64_t grace_s = body["grace_seconds"].get<int64_t>();
  if (grace_s < 0 || grace_s > auth::kMaxRotationGraceMs / 1000) {
    return Status::InvalidArgument("field 'grace_seconds' must be 0.." + std::to_string(auth::kMaxRotationGraceMs / 1000));
  }
  ctx.error_param.reset();
  Result<auth::CreatedKey> rotated = services.auth->RotateKey(CallerOf(ctx), id, grace_s * 1000);
  DrainAuthEvents(*services.auth, ctx);
  if (!rotated.ok()) return rotated.status();
  ReplyWithSecret(*rotated, 200, res);
  return Status::OK();
}

Status HandleKeyUsage(const KeyServices& services, RequestContext& ctx, const httplib::Request&,
                      httplib::Response& res) {
  const std::string& id = ctx.path_params["id"];
  KIMI_ASSIGN_OR_RETURN(std::vector<auth::KeyRecord> keys, services.auth->ListKeys());
  auto key = std::find_if(keys.begin(), keys.end(), [&](const auth::KeyRecord& k) { return k.id == id; });
  if (key == keys.end()) return Status::NotFound("no API key with id " + id);
  KIMI_ASSIGN_OR_RETURN(auth::KeyUsage usage, services.auth->Usage(id));
  std::optional<auth::Role> role = auth::ParseRole(key->role);
  auth::KeyLimits role_limits = role ? services.auth->RoleLimits()[*role] : auth::KeyLimits{};
  ReplyJson(res, 200,
            json{{"id", id},
                 {"limits", LimitsJson(key->limits)},
                 {"effective_limits", LimitsJson(auth::Stricter(key->limits, role_limits))},
                 {"day", PeriodJson(usage.day)},
                 {"month", PeriodJson(usage.month)},
                 {"streams_in_flight", services.auth->StreamsInFlight(id)}});
  return Status::OK();
}

Status HandleKeyLimitsRetired(const KeyServices&, RequestContext& ctx, const httplib::Request&,
                              httplib::Response& res) {
  http::WriteError(http::ApiError{410, "invalid_request_error", "route_retired",
                                  "POST /admin/v1/keys/" + ctx.path_params["id"] +
                                      "/limits is retired: send the same fields with PATCH /admin/v1/keys/" +
                                      ctx.path_params["id"] + " (fields left out keep their value)",
                                  std::nullopt},
                   res);
  return Status::OK();
}

Status HandleRolesList(const KeyServices& services, RequestContext&, const httplib::Request&,
                       httplib::Response& res) {
  std::map<auth::Role, auth::KeyLimits> limits = services.auth->RoleLimits();
  json data = json::array();
  for (auth::Role role : auth::AllRoles()) {
    json permissions = json::array();
    for (auth::Permission p : auth::AllPermissions()) {
      if (p != auth::Permission::kPublic && auth::RoleAllows(role, p))
        permissions.push_back(auth::PermissionName(p));
    }
    data.push_back(json{
        {"role", auth::RoleName(role)}, {"permissions", permissions}, {"limits", LimitsJson(limits[role])}});
  }
  ReplyJson(res, 200, json{{"object", "list"}, {"data", data}});
  return Status::OK();
}

Status HandleRoleLimits(const KeyServices& services, RequestContext& ctx, const httplib::Request& req,
                        httplib::Response& res) {
  const std::string& name = ctx.path_params["role"];
  std::optional<auth::Role> role = auth::ParseRole(name);
  if (!role) return Status::NotFound("no role named '" + name + "' (admin, operator, auditor, user, scrape)");
  KIMI_ASSIGN_OR_RETURN(json body, http::ParseBody(req.body, LimitNames(), {}, LimitNames()));
  auth::KeyChange change;
  ReadLimitChange(body, &change);  // fields left out keep their value
  Result<auth::KeyLimits> limits = services.auth->UpdateRoleLimits(CallerOf(ctx), *role, change);
  DrainAuthEvents(*services.auth, ctx);
  if (!limits.ok()) return limits.status();
  ReplyJson(res, 200, json{{"role", name}, {"limits", LimitsJson(*limits)}});
  return Status::OK();
}

}  // namespace

void AddKeyRoutes(http::RouteTable& table, auth::Authenticator* auth, const api::Backend* backend) {
  using P = auth::Permission;
  const auto bind = [s = KeyServices{auth, backend}](auto handler) { return http::BindRoute(s, handler); };
  // Auditors read the inventory (names, owners, states; never a secret) but change nothing.
  table.Add({"GET", "/admin/v1/keys", "admin_keys_list", bind(&HandleKeysList), false, P::kKeysRead});
  table.Add({"POST", "/admin/v1/keys", "admin_keys_create", bind(&HandleKeysCreate), false, P::kKeysManage});
  table.Add(
      {"POST", "/admin/v1/keys/revoke", "admin_keys_revoke", bind(&HandleKeysRevoke), false, P::kKeysManage});
  table.Add(
      {"PATCH", "/admin/v1/keys/{id}", "admin_keys_update", bind(&HandleKeyUpdate), false, P::kKeysManage});
  table.Add({"POST", "/admin/v1/keys/{id}/rotate", "admin_keys_rotate", bind(&HandleKeyRotate), false,
             P::kKeysManage});
  table.Add(
      {"GET", "/admin/v1/keys/{id}/usage", "admin_keys_usage", bind(&HandleKeyUsage), false, P::kKeysManage});
  // Retired in favour of PATCH /admin/v1/keys/{id}; answers 410 naming the replacement.
  table.Add({"POST", "/admin/v1/keys/{id}/limits", "admin_keys_limits", bind(&HandleKeyLimitsRetired), false,
             P::kKeysManage});
  table.Add({"GET", "/admin/v1/roles", "admin_roles_list", bind(&HandleRolesList), false, P::kKeysManage});
  table.Add({"POST", "/admin/v1/roles/{role}/limits", "admin_roles_limits", bind(&HandleRoleLimits), false,
             P::kKeysManage});
}

}  // namespace kimi::admin
