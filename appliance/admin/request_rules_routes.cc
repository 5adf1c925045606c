#include "admin/request_rules_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "admin/reply.h"
#include "auth/authenticator.h"

namespace kimi::admin {
namespace {

// A model the key may not use gets the rules of a model without an entry, as an unknown one
// does (as its requests are checked, http/openai_handlers.cc): its own would say it is served.
Status HandleRequestRules(const api::ModelRulesTable* rules, http::RequestContext& ctx, const httplib::Request& req,
                          httplib::Response& res) {
  if (rules == nullptr) return Status::Unavailable("request rules are not available in this daemon");
  const std::string model = req.get_param_value("model");
  if (model.empty()) return Status::InvalidArgument("query parameter 'model' is required");
  const bool may_use = !ctx.principal || auth::Authenticator::CheckModelAllowed(*ctx.principal, model).ok();
  ReplyJson(res, 200,
            nlohmann::json{{"model", model}, {"rules", (may_use ? rules->For(model) : rules->Unlisted()).ToJson()}});
  return Status::OK();
}

}  // namespace

void AddRequestRulesRoute(http::RouteTable& table, const api::ModelRulesTable* rules) {
  using P = auth::Permission;
  table.Add({"GET", "/admin/v1/request-rules", "admin_request_rules", http::BindRoute(rules, &HandleRequestRules),
             false, P::kInference});
}

}  // namespace kimi::admin
