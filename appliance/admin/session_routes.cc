#include "admin/session_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "admin/identity_fields.h"
#include "admin/reply.h"
#include "http/admin_body.h"
#include "http/request_auth.h"
#include "kimi/utc_time.h"

namespace kimi::admin {
namespace {

using http::RequestContext;
using nlohmann::json;

// A required password field, at most auth::kMaxPasswordBytes, with the field named.
Result<std::string> PasswordField(const json& body, const char* key, RequestContext& ctx) {
  return http::CheckedPassword(body, key, &ctx.error_param);
}

// For a session, idle_timeout_s too: the console signs out by itself once that long passes
// without a request, as the daemon then refuses the session anyway.
json PrincipalJson(const auth::Principal& p, const auth::Authenticator& auth) {
  const bool session = p.kind == auth::Principal::Kind::kSession;
  json out{{"id", p.id},
           {"kind", session ? "session" : "api_key"},
           {"role", auth::RoleName(p.role)},
           {"owner", p.owner},
           {"must_change_password", p.must_change_password}};
  if (session) out["idle_timeout_s"] = auth.options().session_idle_timeout_ms / 1000;
  return out;
}

Status HandleSessionLogin(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request& req,
                          httplib::Response& res) {
  if (auth == nullptr) return Status::Unavailable("authentication is not configured");
  if (RefuseUnfitCredentials(req, res)) return Status::OK();
  KIMI_ASSIGN_OR_RETURN(http::LoginBody login, http::ParseLoginBody(req.body, &ctx.error_param));
  const std::string& username = login.username;
  Result<auth::Session> session = auth->Login(username, login.password, ctx.remote_addr, &ctx.retry_after_s);
  DrainAuthEvents(*auth, ctx);
  if (!session.ok()) {
    ctx.auth_failure = "login failed for " + username;
    return session.status();
  }
  ctx.principal = session->principal;
  int64_t max_age_s = auth->options().session_absolute_timeout_ms / 1000;
  res.set_header("Set-Cookie", http::SessionCookie(session->session_id, max_age_s));
  json out = PrincipalJson(session->principal, *auth);
  out["csrf_token"] = session->csrf_token;
  out["expires_at"] = FormatUtcMillis(session->expires_ms);
  ReplyJson(res, 200, out);
  return Status::OK();
}

Status HandleSessionGet(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request&,
                        httplib::Response& res) {
  ReplyJson(res, 200, PrincipalJson(*ctx.principal, *auth));
  return Status::OK();
}

Status HandleSessionLogout(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request&,
                           httplib::Response& res) {
  Status s = auth->Logout(*ctx.principal, ctx.remote_addr);
  DrainAuthEvents(*auth, ctx);
  KIMI_RETURN_IF_ERROR(s);
  res.set_header("Set-Cookie", http::ExpiredSessionCookie());
  ReplyJson(res, 200, json{{"status", "logged_out"}});
  return Status::OK();
}

Status HandleSessionPassword(auth::Authenticator* auth, RequestContext& ctx, const httplib::Request& req,
                             httplib::Response& res) {
  if (RefuseUnfitCredentials(req, res)) return Status::OK();
  KIMI_ASSIGN_OR_RETURN(
      json body, http::ParseBody(req.body, {"old_password", "new_password"}, {}, {}, &ctx.error_param));
  KIMI_ASSIGN_OR_RETURN(std::string old_password, PasswordField(body, "old_password", ctx));
  KIMI_ASSIGN_OR_RETURN(std::string new_password, PasswordField(body, "new_password", ctx));
  Result<auth::Session> successor =
      auth->ChangePassword(*ctx.principal, old_password, new_password, ctx.remote_addr);
  DrainAuthEvents(*auth, ctx);
  KIMI_RETURN_IF_ERROR(successor.status());
  // Every session of the user ended, this one too: the caller carries on with a new id and token.
  const int64_t max_age_s = auth->options().session_absolute_timeout_ms / 1000;
  res.set_header("Set-Cookie", http::SessionCookie(successor->session_id, max_age_s));
  ReplyJson(res, 200, json{{"status", "password_changed"},
                           {"csrf_token", successor->csrf_token},
                           {"expires_at", FormatUtcMillis(successor->expires_ms)}});
  return Status::OK();
}

}  // namespace

void AddSessionRoutes(http::RouteTable& table, auth::Authenticator* auth) {
  using P = auth::Permission;
  const auto bind = [auth](auto handler) { return http::BindRoute(auth, handler); };
  // The login form's POST is public by nature: it is how a person authenticates.
  table.Add({"POST", "/admin/v1/session", "admin_session_login", bind(&HandleSessionLogin), false, P::kPublic,
             /*body_has_password=*/true});
  // Who is signed in: the console asks on every load, the sign-in page before anyone has.
  table.Add({"GET", "/admin/v1/session", "admin_session_get", bind(&HandleSessionGet), false, P::kSessionSelf,
             /*body_has_password=*/false, /*status_read=*/true});
  table.Add({"DELETE", "/admin/v1/session", "admin_session_logout", bind(&HandleSessionLogout), false,
             P::kSessionSelf});
  table.Add({"POST", "/admin/v1/session/password", "admin_session_password", bind(&HandleSessionPassword),
             false, P::kSessionSelf, /*body_has_password=*/true});
}

}  // namespace kimi::admin
