// The route table: every endpoint of the daemon in one list of (method, path, name, handler).
//
// Handlers are named functions (handlers.h) that fill the response and return OK, or return
// an error Status that the server turns into OpenAI error JSON (error_response.h); they do
// not write error bodies themselves. The name is the route's label in metrics and logs.
// Paths match segment by segment: a literal segment exactly, "{name}" any one non-empty
// segment, and a last segment "{name...}" the non-empty rest of the path, slashes included
// (model ids such as "moonshotai/Kimi-K3" have them). The values land in
// RequestContext::path_params. A known path with another method gets 405, anything else 404.
// Adding an endpoint: write its handler, add one line to kRoutes in routes.cc, and add the
// services it needs to Services, with the
// permission it requires (auth/roles.h).
// Authentication and the permission check happen in the dispatcher before the handler runs;
// a route that declares no permission is admin-only, and only kPublic routes are served to
// anonymous clients.
//
// Thread safety: the table is immutable; handlers may run on many threads at once and must
// only use thread-safe services.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "auth/roles.h"
#include "http/readiness.h"
#include "http/request_context.h"
#include "kimi/status.h"
#include "metrics/metrics.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace kimi::api {
class Backend;
class ModelRulesTable;
}
namespace kimi::models {
class ModelAdmin;
class TrustDirectory;
}  // namespace kimi::models
namespace kimi::auth {
class Authenticator;
struct Actor;
}  // namespace kimi::auth
namespace kimi::policy {
class PolicyService;
}  // namespace kimi::policy

namespace kimi::http {

// What handlers may use. Pointers are owned by main() and outlive the server.
class RequestAuditor;
class ConsoleAssets;

// What /v1/models says of a served model besides its id: the version the engine serves.
struct ServedModelDetails {
  std::string digest;       // OMS subject digest of the weights, hex
  int64_t version = 0;      // the model store's version number; 0 when not from the store
  int64_t created = 0;      // when it began serving, Unix seconds
};
struct AuditAccess;

struct Services {
  metrics::Registry* metrics = nullptr;
  Readiness* readiness = nullptr;
  const RequestAuditor* auditor = nullptr;  // null: requests are not audited
  api::Backend* backend = nullptr;          // null: the generation endpoints answer 503
  size_t stream_argument_chunk_bytes = 64;  // a tool call's arguments per streamed frame
  // Per-model request rules; null: K3's for every model.
  const api::ModelRulesTable* request_rules = nullptr;
  // Called before /metrics renders, to refresh gauges that mirror other components.
  std::function<void()> before_metrics_render;
  models::ModelAdmin* model_admin = nullptr;  // null: /admin/v1/models answers 503
  models::TrustDirectory* trust = nullptr;    // null: /admin/v1/trust answers 503
  // Details of a served model for /v1/models (a request's audit record takes its model
  // digest from the backend that served it instead); may be empty, and may return nothing.
  std::function<std::optional<ServedModelDetails>(const std::string& model)> describe_model;
  // null: every non-public route answers 503 (the daemon always wires one)
  auth::Authenticator* authenticator = nullptr;
  const ConsoleAssets* console = nullptr;  // null: the console routes answer 404
  // null: /admin/v1/policies answers 503 and API requests pass without a policy step
  policy::PolicyService* policy = nullptr;
  const AuditAccess* audit_access = nullptr;      // null: /admin/v1/audit answers 503
  // Mutual TLS on the admin API: /admin/ requests need ctx.client_certificate_verified.
  bool admin_requires_client_certificate = false;
  // Re-reads the TLS certificate and key for new connections, audited as done by the actor:
  // the new certificate's summary, or why the old one keeps serving. Empty: no TLS.
  std::function<Result<std::string>(const auth::Actor&)> reload_tls;
};

using Handler = Status (*)(const Services&, RequestContext&, const httplib::Request&, httplib::Response&);

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
};

std::span<const Route> Routes();
// The route for (method, path); HEAD finds the GET route. nullptr when there is none.
const Route* FindRoute(std::string_view method, std::string_view path);
// Whether `path` matches the route pattern; fills *params (may be null) on a match.
bool MatchRoutePath(std::string_view pattern, std::string_view path, std::map<std::string, std::string>* params);
// The regular expression the HTTP library routes `pattern` with (same language as above).
std::string RoutePathRegex(std::string_view pattern);
// "GET, HEAD" for a known path; "" when no route has this path.
std::string AllowedMethods(std::string_view path);
// True when every route of this path is public (so a wrong method there gets 405 without
// credentials); false for unknown paths, which need authentication before they get 404.
bool IsPublicPath(std::string_view path);

}  // namespace kimi::http
