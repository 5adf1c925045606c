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

}  // namespace
}  // namespace kimi::http
