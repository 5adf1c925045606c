#include "admin/model_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "models/model_admin.h"

namespace kimi::admin {
namespace {

Result<models::ModelAdmin*> Admin(const http::Services& services) {
  if (services.model_admin == nullptr) return Status::Unavailable("the model store is not enabled in this daemon");
  return services.model_admin;
}

Result<nlohmann::json> Body(const httplib::Request& req) {
  nlohmann::json body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) return Status::InvalidArgument("the request body must be a JSON object");
  return body;
}

Status Reply(Result<nlohmann::json> reply, int status, httplib::Response& res) {
  if (!reply.ok()) return reply.status();
  res.status = status;
  res.set_content(reply->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
  return Status::OK();
}

}  // namespace

models::Actor ActorOf(const http::RequestContext& ctx) {
  models::Actor actor;
  actor.name = ctx.principal ? ctx.principal->id : "admin-api";
  actor.role = ctx.principal ? std::string(auth::RoleName(ctx.principal->role)) : "admin";
  actor.source = ctx.remote_addr;
  actor.request_id = ctx.request_id;
  return actor;
}

Status HandleListModels(const http::Services& services, http::RequestContext&, const httplib::Request&,
                        httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(services));
  return Reply(admin->List(), 200, res);
}

Status HandleImportModel(const http::Services& services, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(services));
  KIMI_ASSIGN_OR_RETURN(nlohmann::json body, Body(req));
  return Reply(admin->StartImport(body, ActorOf(ctx)), 202, res);
}

Status HandleImportStatus(const http::Services& services, http::RequestContext&, const httplib::Request& req,
                          httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(services));
  if (!req.has_param("job")) return Reply(admin->ImportJobs(), 200, res);
  return Reply(admin->ImportStatus(req.get_param_value("job")), 200, res);
}

Status HandleActivateModel(const http::Services& services, http::RequestContext& ctx, const httplib::Request& req,
                           httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(services));
  KIMI_ASSIGN_OR_RETURN(nlohmann::json body, Body(req));
  return Reply(admin->Activate(body, ActorOf(ctx)), 200, res);
}

Status HandleRollbackModel(const http::Services& services, http::RequestContext& ctx, const httplib::Request& req,
                           httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(services));
  KIMI_ASSIGN_OR_RETURN(nlohmann::json body, Body(req));
  return Reply(admin->Rollback(body, ActorOf(ctx)), 200, res);
}

Status HandleRemoveModel(const http::Services& services, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(models::ModelAdmin * admin, Admin(services));
  return Reply(admin->Remove(req.get_param_value("model"), req.get_param_value("digest"), ActorOf(ctx)), 200, res);
}

}  // namespace kimi::admin
