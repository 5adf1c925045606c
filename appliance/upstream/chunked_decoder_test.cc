#include "upstream/chunked_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kimi::upstream {
namespace {

// Decodes `wire` fed in the given pieces; returns the data, or "ERROR: ..." on failure.
// *rest receives what follows the body.
std::string DecodeInPieces(const std::string& wire, const std::vector<size_t>& cuts, std::string* rest = nullptr,
                           ChunkedDecoder::Framing framing = ChunkedDecoder::Framing::kLenient) {
  ChunkedDecoder decoder(framing);
  std::string data;
  size_t from = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(wire.size());
  for (size_t end : ends) {
    std::string piece = wire.substr(from, end - from);
    from = end;
    while (!piece.empty() && !decoder.done()) {
      size_t size = piece.size(), consumed = 0;
      Status s = decoder.Decode(piece.data(), &size, &consumed);
      if (!s.ok()) return "ERROR: " + s.message();
      data.append(piece.data(), size);
      piece.erase(0, consumed);
      if (consumed == 0) break;
    }
    if (decoder.done()) {
      if (rest != nullptr) *rest = piece + wire.substr(from);
      return data;
    }
  }
  return data + " (unfinished)";
}

const char kWire[] =
    "18\r\ndata: {\"content\":\"Hi\"}\n\n\r\n"
    "5;name=value\r\nhello\r\n"
    "A\r\n0123456789\r\n"
    "0\r\n\r\n";
const char kData[] = "data: {\"content\":\"Hi\"}\n\nhello0123456789";

TEST(ChunkedDecoderTest, DecodesAWholeBodyAtOnce) {
  std::string rest = "x";
  EXPECT_EQ(DecodeInPieces(kWire, {}, &rest), kData);
  EXPECT_EQ(rest, "");
}

TEST(ChunkedDecoderTest, EverySplitPointGivesTheSameData) {
  const std::string wire = kWire;
  for (size_t cut = 1; cut < wire.size(); ++cut) {
    EXPECT_EQ(DecodeInPieces(wire, {cut}), kData) << "split at byte " << cut;
  }
}

TEST(ChunkedDecoderTest, ByteAtATimeGivesTheSameData) {
  const std::string wire = kWire;
  std::vector<size_t> cuts;
  for (size_t i = 1; i < wire.size(); ++i) cuts.push_back(i);
  EXPECT_EQ(DecodeInPieces(wire, cuts), kData);
}

TEST(ChunkedDecoderTest, TrailerFieldsAreSkippedAndTheNextResponseIsLeft) {
  std::string rest;
  EXPECT_EQ(DecodeInPieces("3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\nHTTP/1.1 200", {}, &rest), "abc");
  EXPECT_EQ(rest, "HTTP/1.1 200");
  const std::string wire = "3\r\nabc\r\n0\r\nX-Checksum: 1\r\n\r\n";
  for (size_t cut = 1; cut < wire.size(); ++cut) EXPECT_EQ(DecodeInPieces(wire, {cut}), "abc") << cut;
}

TEST(ChunkedDecoderTest, UppercaseHexAndBareLineFeedsAreRead) {
  EXPECT_EQ(DecodeInPieces("B\nhello world\n0\n\n", {}), "hello world");
}

TEST(ChunkedDecoderTest, AnUnfinishedBodyIsNotDone) {
  EXPECT_EQ(DecodeInPieces("5\r\nhel", {}), "hel (unfinished)");
}

TEST(ChunkedDecoderTest, MalformedFramingIsAnError) {
  EXPECT_EQ(DecodeInPieces("zz\r\nhello\r\n", {}).rfind("ERROR", 0), 0u);
  EXPECT_EQ(DecodeInPieces("3\r\nabcX\r\n", {}).rfind("ERROR", 0), 0u);           // no CRLF after data
  EXPECT_EQ(DecodeInPieces("1000000000000000\r\n", {}).rfind("ERROR", 0), 0u);  // 2^60: too large
  EXPECT_EQ(DecodeInPieces("3\rX", {}).rfind("ERROR", 0), 0u);
  EXPECT_EQ(DecodeInPieces("3;" + std::string(10000, 'x') + "\r\n", {}).rfind("ERROR", 0), 0u);
}

// Request bodies: the RFC forms are read to their end, whatever the pieces, and the bytes after
// the body are left for the next request.
TEST(ChunkedDecoderTest, StrictFramingReadsTheRfcForms) {
  const std::string next = "GET /healthz HTTP/1.1\r\n\r\n";
  for (const std::string& body : {std::string("5\r\nhello\r\n0\r\n\r\n"), std::string("5;name=\"v w\"\r\nhello\r\n0\r\n\r\n"),
                                  std::string("A\r\n0123456789\r\n1\r\nx\r\n0\r\nX-Trailer: 1\r\n\r\n"),
                                  std::string("000000000000005\r\nhello\r\n0\r\n\r\n"), std::string("0\r\n\r\n")}) {
    for (size_t cut = 0; cut <= body.size(); ++cut) {
      std::string rest;
      const std::string data = DecodeInPieces(body + next, {cut}, &rest, ChunkedDecoder::Framing::kStrict);
      EXPECT_EQ(data.rfind("ERROR", 0), std::string::npos) << body << " cut at " << cut << ": " << data;
      EXPECT_EQ(rest, next) << body << " cut at " << cut;
    }
  }
}

// The HTTP library's decoder reads a size with strtoul: "0x30", "+30", " 30" and a bare LF
// were served, where a proxy in front reading by the RFC ends the body elsewhere (smuggling).
TEST(ChunkedDecoderTest, StrictFramingRefusesWhatAnotherReaderWouldReadOtherwise) {
  for (const std::string& body : {std::string("0x5\r\nhello\r\n0\r\n\r\n"), std::string("+5\r\nhello\r\n0\r\n\r\n"),
                                  std::string(" 5\r\nhello\r\n0\r\n\r\n"), std::string("5 \r\nhello\r\n0\r\n\r\n"),
                                  std::string("-0\r\n\r\n"), std::string("5\nhello\r\n0\r\n\r\n"),
                                  std::string("5\r\nhello\n0\r\n\r\n"), std::string("5\r\nhelloX\r\n0\r\n\r\n"),
                                  std::string("\r\nhello\r\n"), std::string("0000000000000005\r\nhello\r\n0\r\n\r\n"),
                                  std::string("0\r\n\n"), std::string("0\r\nX: \x01\r\n\r\n"), std::string("0\r\nX: 1\n\r\n"),
                                  std::string("5;\x7f\r\nhello\r\n0\r\n\r\n"), std::string("5;" + std::string(9000, 'a') + "\r\n")}) {
    for (const std::vector<size_t>& cuts : {std::vector<size_t>{}, std::vector<size_t>{1, 2, 3, 4, 5, 6}}) {
      const std::string data = DecodeInPieces(body, cuts, nullptr, ChunkedDecoder::Framing::kStrict);
      EXPECT_EQ(data.rfind("ERROR", 0), 0u) << body << ": " << data;
    }
  }
  // The lenient reader of upstream responses still takes a bare LF.
  EXPECT_EQ(DecodeInPieces("5\nhello\n0\n\n", {}), "hello");
}

}  // namespace
}  // namespace kimi::upstream
