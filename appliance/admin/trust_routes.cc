#include "admin/trust_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "admin/model_routes.h"
#include "admin/reply.h"
#include "models/model_admin.h"
#include "models/trust_directory.h"

namespace kimi::admin {
namespace {

using nlohmann::json;

Result<models::TrustDirectory*> Trust(const TrustServices& services) {
  if (services.trust == nullptr) return Status::Unavailable("the trust store is not managed by this daemon");
  return services.trust;
}

json EntryJson(const models::TrustEntry& e) {
  json entry{{"id", e.id}, {"kind", e.kind}, {"description", e.description}, {"file", e.file}};
  if (e.kind == "ca") entry["signers"] = e.signers;
  return entry;
}

// The active versions, as the model admin lists them; empty without a model store.
json ActiveVersions(const TrustServices& services) {
  json active = json::array();
  if (services.model_admin == nullptr) return active;
  Result<json> listed = services.model_admin->List();
  if (!listed.ok()) return active;
  for (const json& v : listed->value("models", json::array())) {
    if (v.value("state", "") == "active") active.push_back(v);
  }
  return active;
}

}  // namespace

// A signer reads "key sha256:<fp> (...)" or "certificate <subject> issued by <issuer>
// (sha256:<leaf>; trust anchor sha256:<ca>)". A version verified before signers named their
// anchor matches the CA that issued its leaf.
bool SignedBy(const models::TrustEntry& entry, const std::string& signer) {
  if (entry.kind == "key") return signer.find("sha256:" + entry.id) != std::string::npos;
  return signer.find("trust anchor sha256:" + entry.id) != std::string::npos ||
         signer.find("issued by " + entry.description + " (") != std::string::npos;
}

Status HandleListTrust(const TrustServices& services, http::RequestContext&, const httplib::Request&,
                       httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::TrustDirectory * trust, Trust(services));
  const json active = ActiveVersions(services);
  json entries = json::array();
  for (const models::TrustEntry& e : trust->List()) {
    json signs = json::array();
    for (const json& v : active) {
      if (SignedBy(e, v.value("signer", ""))) {
        signs.push_back({{"model", v.value("model", "")}, {"version", v.value("version", 0)},
                         {"digest", v.value("digest", "")}});
      }
    }
    json entry = EntryJson(e);
    entry["signs_active"] = std::move(signs);
    entries.push_back(std::move(entry));
  }
  ReplyJson(res, 200, json{{"path", trust->path()}, {"editable", trust->editable()}, {"entries", std::move(entries)}});
  return Status::OK();
}

Status HandleAddTrust(const TrustServices& services, http::RequestContext& ctx, const httplib::Request& req,
                      httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::TrustDirectory * trust, Trust(services));
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object() || !body.contains("pem") || !body["pem"].is_string()) {
    return Status::InvalidArgument("field 'pem' is required: the request body is a JSON object with the key as a PEM string");
  }
  if (body.contains("label") && !body["label"].is_string()) return Status::InvalidArgument("'label' must be a string");
  std::vector<std::string> signers;
  if (body.contains("signers")) {
    const json& list = body["signers"];
    if (!list.is_array()) return Status::InvalidArgument("'signers' must be an array of strings");
    for (const json& p : list) {
      if (!p.is_string()) return Status::InvalidArgument("'signers' must be an array of strings");
      signers.push_back(p.get<std::string>());
    }
  }
  KIMI_ASSIGN_OR_RETURN(models::TrustEntry added,
                        trust->Add(body["pem"].get<std::string>(), body.value("label", ""), ActorOf(ctx), signers));
  ReplyJson(res, 201, EntryJson(added));
  return Status::OK();
}

Status HandleRemoveTrust(const TrustServices& services, http::RequestContext& ctx, const httplib::Request&,
                         httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::TrustDirectory * trust, Trust(services));
  KIMI_ASSIGN_OR_RETURN(models::TrustEntry removed, trust->Remove(ctx.path_params["id"], ActorOf(ctx)));
  ReplyJson(res, 200, json{{"removed", EntryJson(removed)}});
  return Status::OK();
}

void AddTrustRoutes(http::RouteTable& table, TrustServices services) {
  using P = auth::Permission;
  const auto bind = [services](auto handler) { return http::BindRoute(services, handler); };
  table.Add({"GET", "/admin/v1/trust", "admin_trust_list", bind(&HandleListTrust), false, P::kTrustRead});
  table.Add({"POST", "/admin/v1/trust", "admin_trust_add", bind(&HandleAddTrust), false, P::kAdminOnly});
  table.Add({"DELETE", "/admin/v1/trust/{id}", "admin_trust_remove", bind(&HandleRemoveTrust), false, P::kAdminOnly});
}

}  // namespace kimi::admin
