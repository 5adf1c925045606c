#include "admin/model_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "admin/reply.h"
#include "http/request_audit.h"
#include "models/model_admin.h"

namespace kimi::admin {
namespace {

Result<models::ModelAdmin*> Admin(models::ModelAdmin* admin) {
  if (admin == nullptr) return Status::Unavailable("the model store is not enabled in this daemon");
  return admin;
}

Result<nlohmann::json> Body(const httplib::Request& req) {
  nlohmann::json body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) return Status::InvalidArgument("the request body must be a JSON object");
  return body;
}

Status Reply(Result<nlohmann::json> reply, int status, httplib::Response& res) {
  if (!reply.ok()) return reply.status();
  ReplyJson(res, status, *reply);
  return Status::OK();
}

// The reply of an act that changed the model store: its record committed with it, in the audit
// outbox (model_store.h), so the act stands whether or not this request's own record can be stored.
Status ChangeReply(Result<nlohmann::json> reply, http::RequestContext& ctx, httplib::Response& res) {
  if (reply.ok()) ctx.change_in_outbox = true;
  return Reply(std::move(reply), 200, res);
}

}  // namespace

models::Actor ActorOf(const http::RequestContext& ctx) {
  audit::Actor who = http::AuditActorOf(ctx);
  return models::Actor{std::move(who.name), std::move(who.role), std::move(who.source), std::move(who.request_id),
                       std::move(who.client_request_id)};
}

Status HandleListModels(models::ModelAdmin* model_admin, http::RequestContext&, const httplib::Request&,
                        httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(model_admin));
  return Reply(admin->List(), 200, res);
}

Status HandleImportModel(models::ModelAdmin* model_admin, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(model_admin));
  KIMI_ASSIGN_OR_RETURN(nlohmann::json body, Body(req));
  return Reply(admin->StartImport(body, ActorOf(ctx)), 202, res);
}

Status HandleImportStatus(models::ModelAdmin* model_admin, http::RequestContext&, const httplib::Request& req,
                          httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(model_admin));
  if (!req.has_param("job")) return Reply(admin->ImportJobs(), 200, res);
  return Reply(admin->ImportStatus(req.get_param_value("job")), 200, res);
}

Status HandleActivateModel(models::ModelAdmin* model_admin, http::RequestContext& ctx, const httplib::Request& req,
                           httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(model_admin));
  KIMI_ASSIGN_OR_RETURN(nlohmann::json body, Body(req));
  return ChangeReply(admin->Activate(body, ActorOf(ctx)), ctx, res);
}

Status HandleRollbackModel(models::ModelAdmin* model_admin, http::RequestContext& ctx, const httplib::Request& req,
                           httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(model_admin));
  KIMI_ASSIGN_OR_RETURN(nlohmann::json body, Body(req));
  return ChangeReply(admin->Rollback(body, ActorOf(ctx)), ctx, res);
}

Status HandleRemoveModel(models::ModelAdmin* model_admin, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(model_admin));
  return ChangeReply(admin->Remove(req.get_param_value("model"), req.get_param_value("digest"), ActorOf(ctx)), ctx, res);
}

void AddModelRoutes(http::RouteTable& table, models::ModelAdmin* admin) {
  using P = auth::Permission;
  const auto bind = [admin](auto handler) { return http::BindRoute(admin, handler); };
  table.Add({"GET", "/admin/v1/models", "admin_models_list", bind(&HandleListModels), false, P::kModelsInspect,
             /*body_has_password=*/false, /*status_read=*/true});
  table.Add({"DELETE", "/admin/v1/models", "admin_models_remove", bind(&HandleRemoveModel), false, P::kModelsManage});
  table.Add({"POST", "/admin/v1/models/import", "admin_models_import", bind(&HandleImportModel), false,
             P::kModelsManage});
  table.Add({"GET", "/admin/v1/models/import", "admin_models_import_status", bind(&HandleImportStatus), false,
             P::kModelsInspect});
  table.Add({"POST", "/admin/v1/models/activate", "admin_models_activate", bind(&HandleActivateModel), false,
             P::kModelsManage});
  table.Add({"POST", "/admin/v1/models/rollback", "admin_models_rollback", bind(&HandleRollbackModel), false,
             P::kModelsManage});
}

}  // namespace kimi::admin
