// The admin API's model endpoints: HTTP handlers over models::ModelAdmin (model_admin.h
// documents the JSON of each).
//
//   GET    /admin/v1/models                      list versions and states
//   POST   /admin/v1/models/import               start an import job        -> 202
//   GET    /admin/v1/models/import?job=ID        poll its progress
//   GET    /admin/v1/models/import               every import job kept, newest first
//   POST   /admin/v1/models/activate             {"model","digest","force"}
//   POST   /admin/v1/models/rollback             {"model"}
//   DELETE /admin/v1/models?model=M&digest=D     remove a version that is not active
//
// The acts are audited by the model store (model.import, model.activate, ...) with the request
// id, the client address and the authenticated principal (key id or user, and role); the
// route table gives the permissions (models.inspect, models.manage). Without a ModelAdmin
// (null), or after it closed, they answer 503.
//
// Thread safety: handlers may run on many threads at once; ModelAdmin is thread-safe.
#pragma once

#include <span>

#include "http/routes.h"
#include "models/model_admin.h"
#include "models/model_store.h"

namespace kimi::admin {

// Who model and trust store acts name: http::AuditActorOf(ctx), as the model store takes it.
models::Actor ActorOf(const http::RequestContext& ctx);

Status HandleListModels(models::ModelAdmin* admin, http::RequestContext& ctx, const httplib::Request& req,
                        httplib::Response& res);
Status HandleImportModel(models::ModelAdmin* admin, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);
Status HandleImportStatus(models::ModelAdmin* admin, http::RequestContext& ctx, const httplib::Request& req,
                          httplib::Response& res);
Status HandleActivateModel(models::ModelAdmin* admin, http::RequestContext& ctx, const httplib::Request& req,
                           httplib::Response& res);
Status HandleRollbackModel(models::ModelAdmin* admin, http::RequestContext& ctx, const httplib::Request& req,
                           httplib::Response& res);
Status HandleRemoveModel(models::ModelAdmin* admin, http::RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res);

// The six routes, bound to `admin` (outlives the table; may be null).
void AddModelRoutes(http::RouteTable& table, models::ModelAdmin* admin);

}  // namespace kimi::admin
