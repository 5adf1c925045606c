#include "http/request_auth.h"

#include <httplib.h>

#include <string>
#include <vector>

#include "auth/authenticator.h"
#include "kimi/ascii_text.h"
#include "kimi/loopback_host.h"

namespace kimi::http {
namespace {

std::string_view Header(const httplib::Request& req, const char* name) {
  auto it = req.headers.find(name);  // the library's header map compares names without case
  return it == req.headers.end() ? std::string_view() : std::string_view(it->second);
}

// A credential header the request carries more than once, or nullptr. httplib keeps every copy
// and Header() reads the first, while a proxy in front may read another: the request is refused
// rather than resolved one way here and another way there.
const char* RepeatedCredentialHeader(const httplib::Request& req) {
  for (const char* name : {"Authorization", "x-api-key", "Cookie", "X-CSRF-Token"}) {
    if (req.get_header_value_count(name) > 1) return name;
  }
  return nullptr;
}

// The values of cookie `name` in a Cookie header, in order.
std::vector<std::string_view> CookieValues(std::string_view header, std::string_view name) {
  std::vector<std::string_view> values;
  while (!header.empty()) {
    size_t semi = header.find(';');
    std::string_view pair = TrimSpacesAndTabs(header.substr(0, semi));
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && TrimSpacesAndTabs(pair.substr(0, eq)) == name) values.push_back(TrimSpacesAndTabs(pair.substr(eq + 1)));
  }
  return values;
}

// Why the request's credentials cannot be read one way only, or "": an Authorization header
// without the Bearer scheme (a bare key was taken as one, where a proxy or a log scrubber that
// knows the scheme sees none), or the session cookie twice (the first was taken; a proxy may
// read the last).
std::string AmbiguousCredential(const httplib::Request& req) {
  const std::string_view authorization = Header(req, "Authorization");
  if (!authorization.empty() && !StartsWithIgnoringAsciiCase(authorization, "Bearer ")) {
    return "the Authorization header must be \"Bearer <key>\"";
  }
  if (CookieValues(Header(req, "Cookie"), kSessionCookie).size() > 1) {
    return "the request carries more than one " + std::string(kSessionCookie) + " cookie";
  }
  return "";
}

// Whether a plain-HTTP request names a host a DNS-rebinding page would (kimi/loopback_host.h),
// or two hosts (the first read here, a proxy in front may read the other).
bool NamesAForeignHost(const RequestAuthentication& services, const httplib::Request& req) {
  return req.get_header_value_count("Host") > 1 ||
         !IsLoopbackSafeHost(TrimSpacesAndTabs(Header(req, "Host")), services.plain_http_hosts);
}

}  // namespace

std::string_view CookieValue(std::string_view header, std::string_view name) {
  const std::vector<std::string_view> values = CookieValues(header, name);
  return values.empty() ? std::string_view() : values.front();
}

auth::Credentials CredentialsOf(const httplib::Request& req) {
  auth::Credentials c;
  std::string_view authorization = Header(req, "Authorization");
  if (!authorization.empty()) {
    // Any other scheme is refused by AuthenticateRequest before the token is looked at.
    c.bearer = StartsWithIgnoringAsciiCase(authorization, "Bearer ") ? TrimSpacesAndTabs(authorization.substr(7)) : authorization;
  }
  c.api_key = TrimSpacesAndTabs(Header(req, "x-api-key"));
  c.session_id = CookieValue(Header(req, "Cookie"), kSessionCookie);
  c.csrf_token = TrimSpacesAndTabs(Header(req, "X-CSRF-Token"));
  c.state_changing = !(req.method == "GET" || req.method == "HEAD" || req.method == "OPTIONS");
  return c;
}

Status AuthenticateRequest(const RequestAuthentication& services, const httplib::Request& req,
                           auth::Permission permission, RequestContext& ctx) {
  if (services.refuse_rebound_hosts && NamesAForeignHost(services, req)) {
    ctx.auth_failure = "forbidden: a Host that is not an address or localhost over plain HTTP";
    return Status::PermissionDenied(
        "over plain HTTP the appliance answers only requests addressed to an IP address, localhost or a name "
        "of server.plain_http_hosts (the Host header), so that no other site's page can reach it by DNS "
        "rebinding");
  }
  if (services.admin_requires_client_certificate && req.path.starts_with("/admin/") &&
      !ctx.client_certificate_verified) {
    ctx.auth_failure = "forbidden: no verified client certificate for the admin API";
    return Status::PermissionDenied(
        "the admin API requires a TLS client certificate issued by the CA of server.tls.admin_client_ca_file");
  }
  if (permission == auth::Permission::kPublic) return Status::OK();
  if (const char* repeated = RepeatedCredentialHeader(req)) {
    ctx.auth_failure = std::string("authentication failed: more than one ") + repeated + " header";
    return Status::Unauthenticated(std::string("the request carries more than one ") + repeated + " header");
  }
  if (const std::string ambiguous = AmbiguousCredential(req); !ambiguous.empty()) {
    ctx.auth_failure = "authentication failed: " + ambiguous;
    return Status::Unauthenticated(ambiguous);
  }
  if (services.authenticator == nullptr) return Status::Unavailable("authentication is not configured");
  if (!ctx.principal) {
    const auth::Credentials credentials = CredentialsOf(req);
    Result<auth::Principal> principal = services.authenticator->Authenticate(credentials);
    if (!principal.ok()) {
      ctx.no_credentials = credentials.bearer.empty() && credentials.api_key.empty() && credentials.session_id.empty();
      ctx.auth_failure = "authentication failed: " + principal.status().message();
      return principal.status();
    }
    ctx.principal = *std::move(principal);
  }
  Status allowed = auth::Authenticator::Authorize(*ctx.principal, permission);
  if (!allowed.ok()) {
    ctx.auth_failure = "forbidden: " + allowed.message();
    return allowed;
  }
  Status admitted = services.authenticator->Admit(*ctx.principal, &ctx.retry_after_s);
  if (!admitted.ok()) ctx.auth_failure = "rate limited: " + admitted.message();
  return admitted;
}

Result<bool> CallerHolds(const RequestAuthentication& services, const httplib::Request& req,
                         auth::Permission permission, RequestContext& ctx) {
  const auth::Credentials c = CredentialsOf(req);
  if (c.bearer.empty() && c.api_key.empty() && c.session_id.empty()) return false;
  KIMI_RETURN_IF_ERROR(AuthenticateRequest(services, req, auth::Permission::kSessionSelf, ctx));
  return auth::RoleAllows(ctx.principal->role, permission);
}

std::string SessionCookie(std::string_view session_id, int64_t max_age_s) {
  return std::string(kSessionCookie) + "=" + std::string(session_id) + "; Path=/; Max-Age=" +
         std::to_string(max_age_s) + "; HttpOnly; Secure; SameSite=Strict";
}

std::string ExpiredSessionCookie() {
  return std::string(kSessionCookie) + "=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict";
}

}  // namespace kimi::http
