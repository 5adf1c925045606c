#include "admin/request_rules_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "admin/reply.h"

namespace kimi::admin {
namespace {

Status HandleRequestRules(const api::ModelRulesTable* rules, http::RequestContext&, const httplib::Request& req,
                          httplib::Response& res) {
  if (rules == nullptr) return Status::Unavailable("request rules are not available in this daemon");
  const std::string model = req.get_param_value("model");
  if (model.empty()) return Status::InvalidArgument("the query parameter model is required");
  ReplyJson(res, 200, nlohmann::json{{"model", model}, {"rules", rules->For(model).ToJson()}});
  return Status::OK();
}

}  // namespace

void AddRequestRulesRoute(http::RouteTable& table, const api::ModelRulesTable* rules) {
  using P = auth::Permission;
  table.Add({"GET", "/admin/v1/request-rules", "admin_request_rules", http::BindRoute(rules, &HandleRequestRules),
             false, P::kInference});
}

}  // namespace kimi::admin
