#include "admin/policy_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "admin/reply.h"
#include "http/request_audit.h"
#include "kimi/utc_time.h"

namespace kimi::admin {
namespace {

using nlohmann::json;

Result<policy::PolicyService*> Service(policy::PolicyService* policies) {
  if (policies == nullptr) return Status::Unavailable("policies are not enabled in this daemon");
  return policies;
}

json VersionJson(const policy::StoredPolicy& p, int64_t active_version) {
  return json{{"version", p.version},
              {"name", p.name},
              {"created_at", FormatUtcMillis(p.created_ms)},
              {"actor", p.actor},
              {"active", p.version == active_version}};
}

// The {version} path parameter; NotFound for anything but a decimal number.
Result<int64_t> VersionParam(http::RequestContext& ctx) {
  const std::string& text = ctx.path_params["version"];
  int64_t version = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || version > (int64_t{1} << 40))
      return Status::NotFound("no policy version '" + text + "'");
    version = version * 10 + (c - '0');
  }
  return version;
}

Status HandleListPolicies(policy::PolicyService* policies, http::RequestContext&, const httplib::Request&,
                          httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(policy::PolicyService * service, Service(policies));
  std::shared_ptr<const policy::ActivePolicy> active = service->Active();
  if (active == nullptr) return Status::Unavailable("no policy is active yet");
  KIMI_ASSIGN_OR_RETURN(std::vector<policy::StoredPolicy> versions, service->store().List());
  json list = json::array();
  for (const policy::StoredPolicy& p : versions) list.push_back(VersionJson(p, active->version));
  ReplyJson(res, 200,
            json{{"active_version", active->version}, {"active", active->document}, {"versions", list}});
  return Status::OK();
}

Status HandleSubmitPolicy(policy::PolicyService* policies, http::RequestContext& ctx,
                          const httplib::Request& req, httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(policy::PolicyService * service, Service(policies));
  json document = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Status::InvalidArgument("the request body is not valid JSON");
  KIMI_ASSIGN_OR_RETURN(int64_t version, service->Submit(document, http::AuditActorOf(ctx)));
  ctx.change_in_outbox = true;
  ReplyJson(res, 201, json{{"version", version}, {"active", true}, {"name", document["name"]}});
  return Status::OK();
}

Status HandleActivatePolicy(policy::PolicyService* policies, http::RequestContext& ctx, const httplib::Request&,
                            httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(policy::PolicyService * service, Service(policies));
  KIMI_ASSIGN_OR_RETURN(int64_t restores, VersionParam(ctx));
  KIMI_ASSIGN_OR_RETURN(int64_t version, service->Restore(restores, http::AuditActorOf(ctx)));
  ctx.change_in_outbox = true;
  std::shared_ptr<const policy::ActivePolicy> active = service->Active();
  ReplyJson(res, 201,
            json{{"version", version}, {"active", true}, {"restores", restores},
                 {"name", active ? json(active->policy.name) : json()}});
  return Status::OK();
}

Status HandleGetPolicy(policy::PolicyService* policies, http::RequestContext& ctx, const httplib::Request&,
                       httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(policy::PolicyService * service, Service(policies));
  KIMI_ASSIGN_OR_RETURN(int64_t version, VersionParam(ctx));
  const std::string& text = ctx.path_params["version"];
  KIMI_ASSIGN_OR_RETURN(std::optional<policy::StoredPolicy> stored, service->store().Get(version));
  if (!stored) return Status::NotFound("no policy version '" + text + "'");
  std::shared_ptr<const policy::ActivePolicy> active = service->Active();
  json out = VersionJson(*stored, active ? active->version : 0);
  out["document"] = json::parse(stored->document, nullptr, /*allow_exceptions=*/false);
  ReplyJson(res, 200, out);
  return Status::OK();
}

}  // namespace

void AddPolicyRoutes(http::RouteTable& table, policy::PolicyService* policies) {
  using P = auth::Permission;
  const auto bind = [policies](auto handler) { return http::BindRoute(policies, handler); };
  table.Add(
      {"GET", "/admin/v1/policies", "admin_policies_list", bind(&HandleListPolicies), false, P::kPolicyRead});
  table.Add({"POST", "/admin/v1/policies", "admin_policies_submit", bind(&HandleSubmitPolicy), false,
             P::kAdminOnly});
  table.Add({"GET", "/admin/v1/policies/{version}", "admin_policies_get", bind(&HandleGetPolicy), false,
             P::kPolicyRead});
  table.Add({"POST", "/admin/v1/policies/{version}/activate", "admin_policies_activate", bind(&HandleActivatePolicy),
             false, P::kAdminOnly});
}

}  // namespace kimi::admin
