#include "http/request_auth.h"

#include <httplib.h>

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace kimi::http {
namespace {

TEST(RequestAuthTest, CookieValueFindsTheNamedCookie) {
  EXPECT_EQ(CookieValue("a=1; kimi_session=abc; b=2", "kimi_session"), "abc");
  EXPECT_EQ(CookieValue("kimi_session=abc", "kimi_session"), "abc");
  EXPECT_EQ(CookieValue("xkimi_session=abc; kimi_session_old=1", "kimi_session"), "");
  EXPECT_EQ(CookieValue("", "kimi_session"), "");
}

TEST(RequestAuthTest, CredentialsFromHeaders) {
  httplib::Request req;
  req.method = "POST";
  req.headers.emplace("authorization", "bearer sk-kimi-x");
  req.headers.emplace("X-Api-Key", " sk-kimi-y ");
  req.headers.emplace("Cookie", "kimi_session=s1");
  req.headers.emplace("X-CSRF-Token", "t1");
  auth::Credentials c = CredentialsOf(req);
  EXPECT_EQ(c.bearer, "sk-kimi-x");
  EXPECT_EQ(c.api_key, "sk-kimi-y");
  EXPECT_EQ(c.session_id, "s1");
  EXPECT_EQ(c.csrf_token, "t1");
  EXPECT_TRUE(c.state_changing);
  req.method = "GET";
  EXPECT_FALSE(CredentialsOf(req).state_changing);
}

TEST(RequestAuthTest, OtherSchemesArePassedOnWhole) {
  httplib::Request req;
  req.method = "GET";
  req.headers.emplace("Authorization", "Basic YWRtaW4=");
  EXPECT_EQ(CredentialsOf(req).bearer, "Basic YWRtaW4=");
}

TEST(RequestAuthTest, PublicRoutesNeedNothingAndOthersNeedAnAuthenticator) {
  httplib::Request req;
  RequestContext ctx;
  RequestAuthentication none;
  EXPECT_TRUE(AuthenticateRequest(none, req, auth::Permission::kPublic, ctx).ok());
  EXPECT_EQ(AuthenticateRequest(none, req, auth::Permission::kMetricsRead, ctx).code(), Status::Code::kUnavailable);
}

// Two copies of a credential header: the daemon read the first, a proxy may read the other, so
// the request is refused whichever copies they are (a valid key first got 200 before).
TEST(RequestAuthTest, ARepeatedCredentialHeaderIsRefused) {
  for (const char* name : {"Authorization", "x-api-key", "Cookie", "X-CSRF-Token"}) {
    httplib::Request req;
    req.method = "GET";
    req.headers.emplace(name, "a");
    req.headers.emplace(name, "b");
    RequestContext ctx;
    const Status s = AuthenticateRequest(RequestAuthentication{}, req, auth::Permission::kMetricsRead, ctx);
    EXPECT_EQ(s.code(), Status::Code::kUnauthenticated) << name;
    EXPECT_NE(s.message().find(std::string("more than one ") + name), std::string::npos) << s.ToString();
    EXPECT_NE(ctx.auth_failure.find("more than one"), std::string::npos) << ctx.auth_failure;
    RequestContext public_ctx;
    EXPECT_TRUE(AuthenticateRequest(RequestAuthentication{}, req, auth::Permission::kPublic, public_ctx).ok());
  }
}

// A bare key without the Bearer scheme was accepted (a proxy or a log scrubber that knows the
// scheme sees no credential in it), and of two session cookies the first was taken.
TEST(RequestAuthTest, CredentialsThatReadTwoWaysAreRefused) {
  for (const auto& [name, value] : std::vector<std::pair<const char*, const char*>>{
           {"Authorization", "sk-kimi-abc"}, {"Authorization", "Basic YWRtaW4="}, {"Authorization", "Bearer"},
           {"Cookie", "kimi_session=a; kimi_session=b"}, {"Cookie", "kimi_session=a;x=1;kimi_session=a"}}) {
    httplib::Request req;
    req.method = "GET";
    req.headers.emplace(name, value);
    RequestContext ctx;
    const Status s = AuthenticateRequest(RequestAuthentication{}, req, auth::Permission::kMetricsRead, ctx);
    EXPECT_EQ(s.code(), Status::Code::kUnauthenticated) << value;
    EXPECT_NE(ctx.auth_failure.find("authentication failed"), std::string::npos) << ctx.auth_failure;
  }
}

// A DNS-rebinding page reached the plain-HTTP daemon under its own name: a key was made with a
// session cookie and its token (201), and its wrong passwords locked the account.
TEST(RequestAuthTest, OverPlainHttpARequestForAnotherHostIsRefusedOnEveryRoute) {
  RequestAuthentication plain;
  plain.refuse_rebound_hosts = true;
  for (auth::Permission permission : {auth::Permission::kPublic, auth::Permission::kSessionSelf}) {
    for (const std::vector<const char*>& hosts : std::vector<std::vector<const char*>>{
             {"evil.example:8080"}, {"127.0.0.1", "evil.example"}, {"evil.example", "127.0.0.1"}}) {
      httplib::Request req;
      req.method = "POST";
      for (const char* host : hosts) req.headers.emplace("Host", host);
      RequestContext ctx;
      EXPECT_EQ(AuthenticateRequest(plain, req, permission, ctx).code(), Status::Code::kPermissionDenied) << hosts[0];
      EXPECT_NE(ctx.auth_failure.find("forbidden: a Host"), std::string::npos) << ctx.auth_failure;
      EXPECT_TRUE(AuthenticateRequest(RequestAuthentication{}, req, auth::Permission::kPublic, ctx).ok())
          << "over HTTPS the certificate binds the name";
    }
  }
  httplib::Request local;
  local.headers.emplace("Host", "127.0.0.1:8080");
  RequestContext ctx;
  EXPECT_TRUE(AuthenticateRequest(plain, local, auth::Permission::kPublic, ctx).ok());
  // A reverse proxy on the machine forwards its own name: the operator lists it.
  httplib::Request proxied;
  proxied.headers.emplace("Host", "appliance.example");
  EXPECT_EQ(AuthenticateRequest(plain, proxied, auth::Permission::kPublic, ctx).code(),
            Status::Code::kPermissionDenied);
  plain.plain_http_hosts = {"appliance.example"};
  EXPECT_TRUE(AuthenticateRequest(plain, proxied, auth::Permission::kPublic, ctx).ok());
}

TEST(RequestAuthTest, CookiesCarryEveryFlag) {
  std::string c = SessionCookie("abc", 60);
  for (const char* flag : {"kimi_session=abc", "Path=/", "Max-Age=60", "HttpOnly", "Secure", "SameSite=Strict"}) {
    EXPECT_NE(c.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(ExpiredSessionCookie().find("Max-Age=0"), std::string::npos);
}

}  // namespace
}  // namespace kimi::http
