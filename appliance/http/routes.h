// The route table: every endpoint of the daemon in one list of (method, path, name, handler),
// built once at start-up and immutable after.
//
// Handlers fill the response and return OK, or return an error Status that the server turns
// into OpenAI error JSON (error_response.h); they do not write error bodies themselves. Each
// handler is a named function given exactly the services it uses: a group of routes is added
// by one function that binds its handlers to their services (AddProbeRoutes in handlers.h,
// AddConsoleRoutes in console_handlers.h, AddOpenAiRoutes in openai_handlers.h,
// admin/admin_routes.h for /admin/v1); the daemon calls each with the services it owns. The
// name is the route's label in metrics and logs.
// Paths match segment by segment: a literal segment exactly, "{name}" any one non-empty
// segment, and a last segment "{name...}" the non-empty rest of the path, slashes included
// (model ids such as "moonshotai/Kimi-K3" have them). The values land in
// RequestContext::path_params. A known path with another method gets 405, anything else 404.
// Adding an endpoint: write its handler, and add one line to its group's Add function with the
// permission it requires (auth/roles.h).
// Authentication and the permission check happen in the dispatcher before the handler runs;
// a route that declares no permission is admin-only, and only kPublic routes are served to
// anonymous clients.
// Public header of http/: other folders include it.
// Thread safety: the table is filled before the server runs and only read after; handlers may
// run on many threads at once and must only use thread-safe services.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "auth/roles.h"
#include "http/request_context.h"
#include "kimi/status.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace kimi::http {

using Handler = std::function<Status(RequestContext&, const httplib::Request&, httplib::Response&)>;

struct Route {
  std::string_view method;
  std::string_view path;
  std::string_view name;
  Handler handler;
  // Liveness, readiness and metrics: polled by machines, carry no user data, and must keep
  // answering while the audit store fails, so they are not audited unless
  // audit.record_probes is set.
  bool probe = false;
  // What the caller must hold; see auth/roles.h. kPublic routes skip authentication.
  auth::Permission permission = auth::Permission::kAdminOnly;
  // The request body carries a password: its audit record gets no request_sha256, since a
  // hash of a low-entropy secret can be reversed by guessing.
  bool body_has_password = false;
  // A read-only view of the appliance's state that the console polls (model lists, who is
  // signed in, the metrics history): not audited when a console session reads it, nor when
  // it is asked with no credential at all; read with an API key it is audited like any call.
  // Only GET routes. docs/audit.md "Not recorded" says why.
  bool status_read = false;
};

class RouteTable {
 public:
  // Appends a route. Precondition: method, path and name are string literals (they are kept
  // as views).
  void Add(Route route) { routes_.push_back(std::move(route)); }

  std::span<const Route> routes() const { return routes_; }
  // The route for (method, path); HEAD finds the GET route. nullptr when there is none.
  const Route* Find(std::string_view method, std::string_view path) const;
  // "GET, HEAD" for a known path; "" when no route has this path.
  std::string AllowedMethods(std::string_view path) const;
  // True when every route of this path is public (so a wrong method there gets 405 without
  // credentials); false for unknown paths, which need authentication before they get 404.
  bool IsPublicPath(std::string_view path) const;

 private:
  std::vector<Route> routes_;
};

// `handler` bound to a copy of `services`: what a group of routes adds to the table. `Param` is
// how the handler takes them (a pointer, or a const reference to a small struct).
template <typename S, typename Param>
Handler BindRoute(S services, Status (*handler)(Param, RequestContext&, const httplib::Request&, httplib::Response&)) {
  return [services = std::move(services), handler](RequestContext& ctx, const httplib::Request& req,
                                                   httplib::Response& res) { return handler(services, ctx, req, res); };
}

// Whether `path` matches the route pattern; fills *params (may be null) on a match.
bool MatchRoutePath(std::string_view pattern, std::string_view path, std::map<std::string, std::string>* params);
// The regular expression the HTTP library routes `pattern` with (same language as above).
std::string RoutePathRegex(std::string_view pattern);

}  // namespace kimi::http
