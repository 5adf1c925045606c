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
// Services::console null, or a directory without index.html: 404.
//
// Thread safety: each handler may run on many threads at once.
#pragma once

#include "http/routes.h"

namespace kimi::http {

// The Content-Security-Policy of every console page and file.
inline constexpr const char* kConsoleContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

Status HandleConsoleRedirect(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);
Status HandleConsoleAsset(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);

}  // namespace kimi::http
