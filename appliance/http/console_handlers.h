// Handlers that serve the web console (admin-ui/) from the configured assets directory
// (console_assets.h):
//
//   GET /               302 to /console/
//   GET /console        302 to /console/
//   GET /console/       index.html
//   GET /console/{path...}  one static file, with its content type
//
// The routes are public (the sign-in page must load before anyone has signed in; the files
// hold no secrets) and, like the probes, are not audited: they carry no user data and the
// console must still load, to show the reason, while the audit store fails. Every response
// carries a Content-Security-Policy that allows scripts, styles and images from the daemon
// only, no inline script or style, no framing, and API calls to the daemon only.
// No ConsoleAssets (console.assets_dir empty), or a directory without index.html: 404.
// Public header of http/: other folders include it.
// Thread safety: each handler may run on many threads at once.
#pragma once

#include "http/routes.h"

namespace kimi::http {

// The Content-Security-Policy of every console page and file.
inline constexpr const char* kConsoleContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

class ConsoleAssets;

Status HandleConsoleRedirect(RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleConsoleAsset(const ConsoleAssets* console, RequestContext&, const httplib::Request&, httplib::Response&);

// The four console routes; `console` (null: the files answer 404) outlives the table.
void AddConsoleRoutes(RouteTable& table, const ConsoleAssets* console);

}  // namespace kimi::http
