#include "http/console_handlers.h"

#include <httplib.h>

#include "http/console_assets.h"

namespace kimi::http {
namespace {

void AddConsoleHeaders(httplib::Response& res) {
  res.set_header("Content-Security-Policy", kConsoleContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cross-Origin-Opener-Policy", "same-origin");
  res.set_header("Cross-Origin-Resource-Policy", "same-origin");
  // Revalidated on every load, so an upgraded console is never mixed with cached old files.
  res.set_header("Cache-Control", "no-cache");
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
