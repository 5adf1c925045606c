#include "upstream/chunked_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kimi::upstream {
namespace {

// Decodes `wire` fed in the given pieces; returns the data, or "ERROR: ..." on failure.
// *rest receives what follows the body.
std::string DecodeInPieces(const std::string& wire, const std::vector<size_t>& cuts, std::string* rest = nullptr) {
  ChunkedDecoder decoder;
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

}  // namespace
}  // namespace kimi::upstream
