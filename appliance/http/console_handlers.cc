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

Status HandleConsoleRedirect(const Services&, RequestContext&, const httplib::Request&, httplib::Response& res) {
  res.set_redirect("/console/", 302);
  AddConsoleHeaders(res);
  return Status::OK();
}

Status HandleConsoleAsset(const Services& services, RequestContext& ctx, const httplib::Request&,
                          httplib::Response& res) {
  if (services.console == nullptr) return Status::NotFound("the console is not served (console.assets_dir is empty)");
  auto param = ctx.path_params.find("path");
  std::string_view path = param == ctx.path_params.end() ? std::string_view() : std::string_view(param->second);
  KIMI_ASSIGN_OR_RETURN(ConsoleAsset asset, services.console->Read(path));
  res.status = 200;
  res.set_content(std::move(asset.body), asset.content_type);
  AddConsoleHeaders(res);
  return Status::OK();
}

}  // namespace kimi::http
