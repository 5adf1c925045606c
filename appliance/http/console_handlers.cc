#include "http/console_handlers.h"

#include <httplib.h>

#include "http/console_assets.h"
#include "http/security_headers.h"

namespace kimi::http {
namespace {

void AddConsoleHeaders(httplib::Response& res) {
  // Revalidated on every load, so an upgraded console is never mixed with cached old files.
  SetBrowserSecurityHeaders(res, kConsoleContentSecurityPolicy, "no-cache");
}

}  // namespace

Status HandleConsoleRedirect(RequestContext&, const httplib::Request&, httplib::Response& res) {
  res.set_redirect("/console/", 302);
  AddConsoleHeaders(res);
  return Status::OK();
}

Status HandleConsoleAsset(const ConsoleAssets* console, RequestContext& ctx, const httplib::Request&,
                          httplib::Response& res) {
  if (console == nullptr) return Status::NotFound("the console is not served (console.assets_dir is empty)");
  auto param = ctx.path_params.find("path");
  std::string_view path = param == ctx.path_params.end() ? std::string_view() : std::string_view(param->second);
  KIMI_ASSIGN_OR_RETURN(ConsoleAsset asset, console->Read(path));
  res.status = 200;
  res.set_content(std::move(asset.body), asset.content_type);
  AddConsoleHeaders(res);
  return Status::OK();
}

void AddConsoleRoutes(RouteTable& table, const ConsoleAssets* console) {
  // Public and unaudited like the probes (see the header).
  using P = auth::Permission;
  table.Add({"GET", "/", "console_root", &HandleConsoleRedirect, /*probe=*/true, P::kPublic});
  table.Add({"GET", "/console", "console_redirect", &HandleConsoleRedirect, /*probe=*/true, P::kPublic});
  table.Add({"GET", "/console/", "console_index", BindRoute(console, &HandleConsoleAsset), /*probe=*/true, P::kPublic});
  table.Add({"GET", "/console/{path...}", "console_asset", BindRoute(console, &HandleConsoleAsset), /*probe=*/true,
             P::kPublic});
}

}  // namespace kimi::http
