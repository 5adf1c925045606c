// POST /admin/v1/tls/reload (admin only): re-reads server.tls's certificate and key for new
// connections; the old ones keep serving when the new ones do not load. The reload and its
// audit record are the daemon's (http/tls_reloader.h ReloadTlsAudited).
//
// Thread safety: the handler may run on many threads at once; `reload` must allow it.
#pragma once

#include <functional>
#include <string>

#include "auth/authenticator.h"
#include "http/routes.h"

namespace kimi::admin {

// Reloads as done by the actor: the new certificate's summary, or why the old one keeps serving.
using ReloadTls = std::function<Result<std::string>(const auth::Actor&)>;

// The route, bound to `reload` (empty: this daemon serves no TLS, and the route answers 400).
void AddTlsRoutes(http::RouteTable& table, ReloadTls reload);

}  // namespace kimi::admin
