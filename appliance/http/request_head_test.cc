#include "http/request_head.h"

#include <gtest/gtest.h>

namespace kimi::http {
namespace {

using Outcome = HeadScan::Outcome;

TEST(ScanHeadTest, FindsTheEndOfTheHead) {
  std::string req = "GET / HTTP/1.1\r\nHost: x\r\n\r\nNEXT";
  HeadScan s = ScanHead(req, 1024);
  EXPECT_EQ(s.outcome, Outcome::kComplete);
  EXPECT_EQ(s.head_bytes, req.size() - 4);
  EXPECT_EQ(ScanHead("GET / HTTP/1.1\r\nHost: x\r\n", 1024).outcome, Outcome::kNeedMore);
  EXPECT_EQ(ScanHead("GET / HTTP/1.1\r\n\r\n", 1024).outcome, Outcome::kComplete);
  EXPECT_EQ(ScanHead("", 1024).outcome, Outcome::kNeedMore);
}

TEST(ScanHeadTest, CapsTheHeadBeforeItEnds) {
  std::string big = "GET / HTTP/1.1\r\nX: " + std::string(2000, 'a');
  EXPECT_EQ(ScanHead(big, 1024).outcome, Outcome::kTooLarge);
  std::string exact = "GET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(ScanHead(exact, exact.size()).outcome, Outcome::kComplete);
  EXPECT_EQ(ScanHead(exact, exact.size() - 1).outcome, Outcome::kTooLarge);
}

TEST(ScanHeadTest, RejectsBareLineFeeds) {
  EXPECT_EQ(ScanHead("GET / HTTP/1.1\nHost: x\n\n", 1024).outcome, Outcome::kBareLineFeed);
}

HeadParse Parse(const std::string& head, int64_t max_body = 1000) { return ParseRequestHead(head, max_body, 16384); }

TEST(ParseRequestHeadTest, ReadsMethodTargetFramingAndRequestId) {
  HeadParse p = Parse("POST /v1/chat?x=1 HTTP/1.1\r\nContent-Length: 12\r\nx-request-id: abc\r\n\r\n");
  ASSERT_FALSE(p.error) << p.error->message;
  EXPECT_EQ(p.head.method, "POST");
  EXPECT_EQ(p.head.target, "/v1/chat?x=1");
  EXPECT_EQ(p.head.framing, BodyFraming::kContentLength);
  EXPECT_EQ(p.head.content_length, 12u);
  EXPECT_EQ(p.head.request_id, "abc");
  p = Parse("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n");
  ASSERT_FALSE(p.error);
  EXPECT_EQ(p.head.framing, BodyFraming::kChunked);
  p = Parse("POST / HTTP/1.0\r\n\r\n");
  ASSERT_FALSE(p.error);
  EXPECT_EQ(p.head.framing, BodyFraming::kNone);
  EXPECT_FALSE(Parse("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n").error);
}

int ErrorStatus(const std::string& head, int64_t max_body = 1000) {
  HeadParse p = Parse(head, max_body);
  return p.error ? p.error->http_status : 0;
}

TEST(ParseRequestHeadTest, RefusesWhatTheLibraryWouldMishandle) {
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n"), 413);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n"), 0);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Encoding: gzip\r\n\r\n"), 415);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Encoding: identity\r\n\r\n"), 0);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=x\r\n\r\n"), 415);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Type: Multipart/Mixed\r\n\r\n"), 415);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nContent-Type: application/json; charset=utf-8\r\n\r\n"), 0);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n"), 431);
  EXPECT_EQ(ErrorStatus("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n"), 414);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/2.0\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET /\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("G(T / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("\r\nGET / HTTP/1.1\r\n\r\n"), 400);
}

// Bytes the library refuses on its own, where it answered 400 and kept reading the connection
// as a next request: refused here, before it, so the connection closes.
TEST(ParseRequestHeadTest, RefusesControlBytesInTheTargetAndHeaderValues) {
  EXPECT_EQ(ErrorStatus(std::string("GET /healthz\0 HTTP/1.1\r\n\r\n", 26)), 400);
  EXPECT_EQ(ErrorStatus("GET /a\x7f HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET /caf%C3%A9?q=a%20b HTTP/1.1\r\n\r\n"), 0);
  EXPECT_EQ(ErrorStatus(std::string("GET / HTTP/1.1\r\nX-Request-Id: a\0b\r\n\r\n", 37)), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nX-Request-Id: a\x1b[31m\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nUser-Agent: a\tb caf\xc3\xa9\r\n\r\n"), 0);
}

// The library decodes "%XX" and "%uXXXX" in every header value after these checks: a bearer
// token written "Bearer%20sk-kimi-..." authenticated (401 with a space missing), an escaped key
// in x-api-key too, and "multipart%2Fform-data" reached the multipart parser past the 415.
TEST(ParseRequestHeadTest, RefusesPercentEscapesInHeaderValuesNamingTheHeader) {
  for (const char* line : {"Authorization: Bearer%20sk-kimi-0123", "x-api-key: sk-kimi-%43%32",
                           "Content-Type: multipart%2Fform-data; boundary=abc", "Content-Type: application%2fjson",
                           "X-Request-Id: run%2D7", "Expect: 100%2Dcontinue", "X-Csrf-Token: %u0061bc"}) {
    const std::string name(line, std::string_view(line).find(':'));
    HeadParse p = Parse("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + std::string(line) + "\r\n\r\n");
    ASSERT_TRUE(p.error) << line;
    EXPECT_EQ(p.error->http_status, 400) << line;
    EXPECT_NE(p.error->message.find("the " + name + " header"), std::string::npos) << p.error->message;
  }
  // A '%' the library leaves as it is passes.
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nUser-Agent: 100% sure, %zz, %u12, %4\r\n\r\n"), 0);
}

// Other applications on the appliance's host name may set percent-encoded cookies, which the
// browser sends here too: they stay out of the head the library decodes, so no decoded cookie
// ("x=a%3B%20kimi_session%3D..." is "x=a; kimi_session=...") reaches the session lookup.
TEST(ParseRequestHeadTest, CookiesWithPercentEscapesStayOutOfTheLibrarysHead) {
  HeadParse p = Parse("GET /admin/v1/keys HTTP/1.1\r\nCookie: sid=s%3Aab.c; kimi_session=0a1b; x=a%3B%20kimi_session%3D99\r\n"
                      "Host: x\r\n\r\n");
  ASSERT_FALSE(p.error) << p.error->message;
  EXPECT_EQ(p.head.library_head, "GET /admin/v1/keys HTTP/1.1\r\nCookie: kimi_session=0a1b\r\nHost: x\r\n\r\n");
  p = Parse("GET / HTTP/1.1\r\ncookie: a=%41\r\nHost: x\r\n\r\n");
  ASSERT_FALSE(p.error);
  EXPECT_EQ(p.head.library_head, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  p = Parse("GET / HTTP/1.1\r\nCookie: kimi_session=0a1b; theme=dark\r\n\r\n");
  ASSERT_FALSE(p.error);
  EXPECT_EQ(p.head.library_head, "") << "an unchanged head goes as received";
}

// The library answered "Range: bytes=0-,0-,..." (2,725 ranges, 8 KB, no credential) on a 16 KB
// console file with a 40 MB multipart reply built in memory; no route serves partial content.
TEST(ParseRequestHeadTest, RangeAndIfRangeStayOutOfTheLibrarysHead) {
  std::string ranges = "bytes=0-";
  for (int i = 0; i < 2000; ++i) ranges += ",0-";
  HeadParse p = Parse("GET /console/css/console.css HTTP/1.1\r\nHost: x\r\nRange: " + ranges +
                      "\r\nIf-Range: \"e1\"\r\nrange: bytes=x\r\nAccept: */*\r\n\r\n");
  ASSERT_FALSE(p.error) << p.error->message;
  EXPECT_EQ(p.head.library_head, "GET /console/css/console.css HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
}

// The library routes on the decoded path, after dropping a fragment and the empty piece before
// a leading '?': "POST /admin/v1/sessio%6E" and "POST ?/admin/v1/session" reached the sign-in
// while the raw target named no route.
TEST(ParseRequestHeadTest, RefusesTargetsTheLibraryWouldReadAsAnotherPath) {
  for (const char* target : {"/admin/v1/sessio%6E", "/admin/v1/sessio%6e", "?/admin/v1/session", "?\?/healthz",
                             "/healthz#/admin/v1/session", "/%7Econsole", "/v1%2Dx", "/sessio%u006E", "/a%4", "/a%",
                             "/a?q=%u0061", "/a?q=100%", "*", "http://x/healthz", "healthz"}) {
    EXPECT_EQ(ErrorStatus("POST " + std::string(target) + " HTTP/1.1\r\n\r\n"), 400) << target;
  }
  // Escapes a path needs, and escapes of anything in the query, mean what the client meant.
  for (const char* target : {"/v1/models/moonshotai%2FKimi-K3", "/caf%C3%A9", "/a%20b%25", "/a?user=%61b&q=a+b", "/?"}) {
    EXPECT_EQ(ErrorStatus("GET " + std::string(target) + " HTTP/1.1\r\n\r\n"), 0) << target;
  }
}

}  // namespace
}  // namespace kimi::http
