// The dispatcher's authentication step: reads the credentials of a request (Authorization:
// Bearer, x-api-key, the session cookie and X-CSRF-Token), asks the Authenticator who sent
// it, and checks the route's permission. On success the principal is stored in the request
// context (and so reaches the audit record); on failure the context says why, without the
// presented secret, and the Status is Unauthenticated (401) or PermissionDenied (403). Last,
// the key's rate limit: ResourceExhausted (429) with ctx.retry_after_s set.
// Public header of http/: other folders include it.
// Thread safety: pure functions of their arguments; the Authenticator is thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "auth/principal.h"
#include "auth/roles.h"
#include "http/request_context.h"
#include "http/routes.h"
#include "kimi/status.h"

namespace kimi::auth {
class Authenticator;
}  // namespace kimi::auth

namespace kimi::http {

inline constexpr std::string_view kSessionCookie = "kimi_session";

// Credentials as found in the headers; views into `req`.
auth::Credentials CredentialsOf(const httplib::Request& req);

// The value of cookie `name` in a Cookie header, or "".
std::string_view CookieValue(std::string_view cookie_header, std::string_view name);

// What authentication uses: the dispatcher's, and GET /readyz's for its detail. The
// Authenticator is owned by the daemon and outlives the server.
struct RequestAuthentication {
  // null: every non-public route answers 503 (the daemon always wires one)
  auth::Authenticator* authenticator = nullptr;
  // Mutual TLS on the admin API: /admin/ requests need ctx.client_certificate_verified.
  bool admin_requires_client_certificate = false;
  // The listener speaks plain HTTP (loopback only): a request whose Host is not an address or
  // localhost is a DNS-rebinding page's, refused on every route (kimi/loopback_host.h).
  bool refuse_rebound_hosts = false;
  std::vector<std::string> plain_http_hosts;  // server.plain_http_hosts: names also taken then
};

// Authenticates (unless `permission` is kPublic) and authorises the request; see above. With
// refuse_rebound_hosts, any request first needs one Host that IsLoopbackSafeHost takes (403
// otherwise, public routes included); with admin_requires_client_certificate, an /admin/
// request first needs a verified TLS client certificate (403 otherwise).
Status AuthenticateRequest(const RequestAuthentication& services, const httplib::Request& req,
                           auth::Permission permission, RequestContext& ctx);

// For a public route that shows more to some callers (GET /readyz): false when the request
// carries no credential; otherwise the credential is authenticated as for any route (a wrong
// one is refused with 401 and audited, so a public route is no unaudited key oracle) and the
// answer is whether its principal holds `permission`.
Result<bool> CallerHolds(const RequestAuthentication& services, const httplib::Request& req,
                         auth::Permission permission, RequestContext& ctx);

// The Set-Cookie value of a session, and of its removal at logout.
std::string SessionCookie(std::string_view session_id, int64_t max_age_s);
std::string ExpiredSessionCookie();

}  // namespace kimi::http
