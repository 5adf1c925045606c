#include "http/error_response.h"

#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kimi::http {
namespace {

TEST(ErrorResponseTest, StatusCodesMapToHttpAndOpenAiTypes) {
  struct Case {
    Status status;
    int http;
    const char* type;
  } cases[] = {
      {Status::InvalidArgument("bad"), 400, "invalid_request_error"},
      {Status::FailedPrecondition("state"), 400, "invalid_request_error"},
      {Status::Unauthenticated("who"), 401, "authentication_error"},
      {Status::PermissionDenied("no"), 403, "permission_error"},
      {Status::NotFound("gone"), 404, "not_found_error"},
      {Status::AlreadyExists("dup"), 409, "invalid_request_error"},
      {Status::ResourceExhausted("quota"), 429, "rate_limit_error"},
      {Status::Unimplemented("later"), 501, "invalid_request_error"},
      {Status::Unavailable("busy"), 503, "server_error"},
      {Status::DeadlineExceeded("slow"), 504, "server_error"},
      {Status::Internal("bug"), 500, "server_error"},
      {Status::IOError("disk"), 500, "server_error"},
      {Status::Corruption("forged"), 500, "server_error"},
  };
  for (const Case& c : cases) {
    ApiError e = FromStatus(c.status, "req_1");
    EXPECT_EQ(e.http_status, c.http) << c.status.ToString();
    EXPECT_EQ(e.type, c.type) << c.status.ToString();
    EXPECT_FALSE(e.code.empty());
  }
}

TEST(ErrorResponseTest, ClientErrorsKeepTheMessageServerErrorsHideIt) {
  EXPECT_EQ(FromStatus(Status::InvalidArgument("temperature must be <= 2"), "r").message, "temperature must be <= 2");
  ApiError hidden = FromStatus(Status::IOError("/var/lib/x: disk full"), "req_abc");
  EXPECT_EQ(hidden.message.find("disk full"), std::string::npos);
  EXPECT_NE(hidden.message.find("req_abc"), std::string::npos);
}

TEST(ErrorResponseTest, BodyHasExactlyTheOpenAiShape) {
  ApiError e = PayloadTooLarge(1024);
  e.param = "messages";
  nlohmann::json j = nlohmann::json::parse(RenderErrorBody(e));
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j.size(), 1u);
  const nlohmann::json& inner = j.at("error");
  ASSERT_EQ(inner.size(), 4u);
  EXPECT_EQ(inner.at("message"), "request body exceeds the limit of 1024 bytes");
  EXPECT_EQ(inner.at("type"), "invalid_request_error");
  EXPECT_EQ(inner.at("param"), "messages");
  EXPECT_EQ(inner.at("code"), "request_too_large");
  EXPECT_TRUE(nlohmann::json::parse(RenderErrorBody(RouteNotFound("GET", "/x")))["error"]["param"].is_null());
}

TEST(ErrorResponseTest, AnErrorFrameStaysOneLineWhateverItsMessageHolds) {
  // A client error keeps its message, which may quote what the client or an upstream sent.
  const ApiError e = FromStatus(Status::InvalidArgument("bad value a\u2028b\u0085c"), "req_1");
  const std::string frame = RenderErrorFrame(e);
  ASSERT_EQ(frame.rfind("data: ", 0), 0u);
  ASSERT_EQ(frame.substr(frame.size() - 2), "\n\n");
  for (const char* raw : {"\u2028", "\u0085", "\n"}) {
    EXPECT_EQ(frame.substr(0, frame.size() - 2).find(raw), std::string::npos) << frame;
  }
  const nlohmann::json j = nlohmann::json::parse(frame.substr(6, frame.size() - 8));
  EXPECT_EQ(j["error"]["message"], "bad value a\u2028b\u0085c");
}

TEST(ErrorResponseTest, TransportErrorsHaveTheirStatuses) {
  EXPECT_EQ(RouteNotFound("GET", "/nope").http_status, 404);
  EXPECT_EQ(MethodNotAllowed("POST", "/healthz", "GET, HEAD").http_status, 405);
  EXPECT_EQ(PayloadTooLarge(1).http_status, 413);
  EXPECT_EQ(HeadersTooLarge(1).http_status, 431);
  EXPECT_EQ(UriTooLong().http_status, 414);
  EXPECT_EQ(UnsupportedContentEncoding("gzip").http_status, 415);
  EXPECT_EQ(Overloaded().http_status, 503);
  EXPECT_EQ(RequestTimeout().http_status, 408);
  EXPECT_EQ(FromLibraryStatus(404, "GET", "/a").code, "unknown_route");
  EXPECT_EQ(FromLibraryStatus(400, "", "").http_status, 400);
}

TEST(ErrorResponseTest, WriteErrorFillsTheResponse) {
  httplib::Response res;
  WriteError(FromStatus(Status::PermissionDenied("admins only"), "r"), res);
  EXPECT_EQ(res.status, 403);
  EXPECT_EQ(res.get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(nlohmann::json::parse(res.body)["error"]["message"], "admins only");
}

TEST(ErrorResponseTest, RawResponseIsCompleteHttp) {
  std::string raw = RenderRawErrorResponse(HeadersTooLarge(16384), "req_x");
  ASSERT_EQ(raw.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0), 0u) << raw;
  size_t split = raw.find("\r\n\r\n");
  ASSERT_NE(split, std::string::npos);
  std::string head = raw.substr(0, split);
  std::string body = raw.substr(split + 4);
  EXPECT_NE(head.find("Content-Length: " + std::to_string(body.size())), std::string::npos);
  EXPECT_NE(head.find("Connection: close"), std::string::npos);
  EXPECT_NE(head.find("X-Request-Id: req_x"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(body)["error"]["code"], "request_header_fields_too_large");
}

}  // namespace
}  // namespace kimi::http
