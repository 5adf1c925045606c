#include "http/chunked_framing.h"

#include <gtest/gtest.h>

#include <string>

namespace kimi::http {
namespace {

// Feeds `body` in pieces of `piece` bytes; the result of the whole.
ChunkedFraming::Fed FeedInPieces(std::string_view body, size_t piece) {
  ChunkedFraming framing;
  ChunkedFraming::Fed total;
  for (size_t at = 0; at < body.size(); at += piece) {
    const ChunkedFraming::Fed fed = framing.Feed(body.substr(at, piece));
    total.accepted += fed.accepted;
    if (fed.malformed) return {total.accepted, false, true};
    if (fed.ended) return {total.accepted, true, false};
  }
  return total;
}

TEST(ChunkedFraming, TheRfcFormsEndWhereTheBodyEnds) {
  const std::string next = "GET /healthz HTTP/1.1\r\n\r\n";
  for (const std::string& body : {std::string("5\r\nhello\r\n0\r\n\r\n"), std::string("5;name=\"v\"\r\nhello\r\n0\r\n\r\n"),
                                 std::string("A\r\n0123456789\r\n1\r\nx\r\n0\r\nX-Trailer: 1\r\n\r\n"),
                                 std::string("0000000000000005\r\nhello\r\n0\r\n\r\n"), std::string("0\r\n\r\n")}) {
    for (size_t piece : {size_t(1), size_t(3), size_t(1000)}) {
      const ChunkedFraming::Fed fed = FeedInPieces(body + next, piece);
      EXPECT_TRUE(fed.ended) << body << " in pieces of " << piece;
      EXPECT_FALSE(fed.malformed) << body;
      EXPECT_EQ(fed.accepted, body.size()) << body << " in pieces of " << piece;
    }
  }
}

TEST(ChunkedFraming, SizeLinesTheLibraryWouldReadOtherwiseAreMalformed) {
  for (const std::string& body : {std::string("0x5\r\nhello\r\n0\r\n\r\n"), std::string("+5\r\nhello\r\n0\r\n\r\n"),
                                 std::string(" 5\r\nhello\r\n0\r\n\r\n"), std::string("5 \r\nhello\r\n0\r\n\r\n"),
                                 std::string("-0\r\n\r\n"), std::string("5\nhello\r\n0\r\n\r\n"),
                                 std::string("5\r\nhello\n0\r\n\r\n"), std::string("5\r\nhelloX\r\n0\r\n\r\n"),
                                 std::string("\r\nhello\r\n"), std::string("00000000000000005\r\nhello\r\n0\r\n\r\n"),
                                 std::string("0\r\n\n"), std::string("0\r\nX: \x01\r\n\r\n"),
                                 std::string("5;\x7f\r\nhello\r\n0\r\n\r\n")}) {
    for (size_t piece : {size_t(1), size_t(1000)}) {
      const ChunkedFraming::Fed fed = FeedInPieces(body, piece);
      EXPECT_TRUE(fed.malformed) << body;
      EXPECT_FALSE(fed.ended) << body;
    }
  }
}

TEST(ChunkedFraming, ExtensionsAndTrailersAreBounded) {
  EXPECT_FALSE(FeedInPieces("5;" + std::string(1024, 'a') + "\r\nhello\r\n0\r\n\r\n", 100).malformed);
  EXPECT_TRUE(FeedInPieces("5;" + std::string(1025, 'a') + "\r\nhello\r\n0\r\n\r\n", 100).malformed);
  std::string trailers;
  for (int i = 0; i < 1000; ++i) trailers += "X-A: 1234567\r\n";
  EXPECT_TRUE(FeedInPieces("0\r\n" + trailers + "\r\n", 100).malformed);
}

TEST(ChunkedFraming, NothingIsTakenAfterTheEnd) {
  ChunkedFraming framing;
  EXPECT_TRUE(framing.Feed("0\r\n\r\n").ended);
  const ChunkedFraming::Fed after = framing.Feed("5\r\nhello");
  EXPECT_EQ(after.accepted, 0u);
  EXPECT_TRUE(after.ended);
}

}  // namespace
}  // namespace kimi::http
