#include "admin/tls_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "admin/reply.h"

namespace kimi::admin {
namespace {

Status HandleTlsReload(const ReloadTls& reload, http::RequestContext& ctx, const httplib::Request&,
                       httplib::Response& res) {
  if (!reload) return Status::FailedPrecondition("this daemon does not serve TLS (server.tls is not set)");
  Result<std::string> loaded = reload(CallerOf(ctx));
  if (!loaded.ok()) return loaded.status();
  ReplyJson(res, 200, nlohmann::json{{"reloaded", true}, {"certificate", *loaded}});
  return Status::OK();
}

}  // namespace

void AddTlsRoutes(http::RouteTable& table, ReloadTls reload) {
  using P = auth::Permission;
  table.Add({"POST", "/admin/v1/tls/reload", "admin_tls_reload",
             http::BindRoute(std::move(reload), &HandleTlsReload), false, P::kAdminOnly});
}

}  // namespace kimi::admin
