// A request as the server receives it: the head the server reads itself (http/request_head.h:
// ScanHead, then ParseRequestHead) and, when the head declares a chunked body, the strict
// check of its framing (upstream::ChunkedDecoder, as http/connection.cc runs it). The bytes of
// a connection arrive in arbitrary pieces, so the body is decoded twice, whole and in pieces
// whose sizes come from the input: both must give the same data, the same verdict and stop
// at the same byte.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_targets.h"
#include "http/request_head.h"
#include "upstream/chunked_decoder.h"

namespace kimi::fuzz {
namespace {

constexpr size_t kMaxHeadBytes = 16 * 1024;
constexpr int64_t kMaxBodyBytes = 1 << 20;

struct Decoded {
  bool ok = true;
  bool done = false;
  size_t consumed = 0;  // input bytes read up to the end of the trailer section (or the error)
  std::string data;
};

// Decodes `body` in pieces of 1 + piece_sizes[i] % 61 bytes (the whole body at once when
// `piece_sizes` is empty), as reads from a socket would hand it over.
Decoded DecodeChunked(std::string_view body, std::string_view piece_sizes) {
  upstream::ChunkedDecoder decoder(upstream::ChunkedDecoder::Framing::kStrict);
  Decoded result;
  size_t next_piece = 0;
  while (result.consumed < body.size() && !decoder.done()) {
    size_t piece = body.size() - result.consumed;
    if (!piece_sizes.empty()) {
      piece = std::min(piece, size_t{1} + static_cast<uint8_t>(piece_sizes[next_piece++ % piece_sizes.size()]) % 61);
    }
    std::string buffer(body.substr(result.consumed, piece));
    size_t size = buffer.size();
    size_t consumed = 0;
    Status status = decoder.Decode(buffer.data(), &size, &consumed);
    if (size > piece || consumed > piece) __builtin_trap();  // never writes past its piece
    result.data.append(buffer.data(), size);
    result.consumed += consumed;
    if (!status.ok()) {
      result.ok = false;
      break;
    }
    if (consumed < piece && !decoder.done()) __builtin_trap();  // stops early only at the end
  }
  result.done = decoder.done();
  return result;
}

}  // namespace

bool FuzzHttpRequestOnce(const uint8_t* data, size_t size) {
  std::string_view received(reinterpret_cast<const char*>(data), size);
  http::HeadScan scan = http::ScanHead(received, kMaxHeadBytes);
  if (scan.outcome != http::HeadScan::Outcome::kComplete) return false;
  if (scan.head_bytes == 0 || scan.head_bytes > received.size() || scan.head_bytes > kMaxHeadBytes) __builtin_trap();
  http::HeadParse parse = http::ParseRequestHead(received.substr(0, scan.head_bytes), kMaxBodyBytes, kMaxHeadBytes);
  if (parse.error) return false;
  const http::RequestHead& head = parse.head;
  if (head.method.empty() || head.target.empty()) __builtin_trap();
  if (head.framing == http::BodyFraming::kContentLength && head.content_length > uint64_t{kMaxBodyBytes}) {
    __builtin_trap();  // a declared body past the bound is refused from the head
  }
  if (head.framing != http::BodyFraming::kChunked) return true;

  std::string_view body = received.substr(scan.head_bytes);
  Decoded whole = DecodeChunked(body, {});
  Decoded pieces = DecodeChunked(body, received.substr(0, scan.head_bytes));
  if (whole.ok != pieces.ok || whole.done != pieces.done) __builtin_trap();
  if (whole.ok && (whole.data != pieces.data || whole.consumed != pieces.consumed)) __builtin_trap();
  if (whole.data.size() > body.size()) __builtin_trap();
  return whole.ok && whole.done;
}

}  // namespace kimi::fuzz
