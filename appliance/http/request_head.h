// Request heads, checked before the HTTP library parses them.
//
// The Debian build of cpp-httplib (0.11.4, a shared library) has its limits compiled in:
// it caps one header line at 8192 bytes but not the number of header lines, reads a body
// without Content-Length until the peer closes, does not cap chunked bodies and inflates
// compressed bodies without a limit. So the server reads each request head itself, up to
// limits.max_header_bytes, and checks it here; only a head that passes goes to the library.
//
// The library also reads some heads otherwise than their bytes say, so those are refused or
// rewritten here too. It percent-decodes every header value ("%XX" and "%uXXXX"), so
// "Authorization: Bearer%20<key>" authenticated and "multipart%2Fform-data" ran its multipart
// parser past the check below: a header value with an escape is refused, naming the header.
// Cookies are the exception: other applications on the appliance's host name may set
// percent-encoded cookies, which the browser sends here too (the appliance's own is hex); the
// pairs with an escape are left out of the head the library reads, since the server reads none
// of them. It answers `Range` with an in-memory multipart reply of every range asked (2,725
// ranges of a 16 KB file, 40 MB for an 8 KB anonymous request), while no route serves partial
// content: `Range` and `If-Range` are left out of its head too, and every answer is whole. It
// routes on the target's decoded path after dropping a fragment and empty pieces before the
// '?' ("?/admin/v1/session" is that path): a target is refused unless it starts with '/', has no
// '#', writes every '%' as an escape of two hex digits, and escapes no letter, digit or -._~ in
// its path (a proxy in front would route "/admin/v1/sessio%6E" apart from "/admin/v1/session").
//
// ScanHead() finds where a head ends in the bytes received so far; ParseRequestHead() parses
// a complete head and decides the body framing. Both are pure functions.
//
// Thread safety: pure functions on values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http/error_response.h"

namespace kimi::http {

// The library's compiled-in cap on one request or header line.
inline constexpr size_t kLibraryMaxLineBytes = 8192;

struct HeadScan {
  enum class Outcome { kNeedMore, kComplete, kTooLarge, kBareLineFeed } outcome = Outcome::kNeedMore;
  size_t head_bytes = 0;  // kComplete: bytes up to and including the blank line
};

// Scans `received` (the bytes of one request from its first byte). A head longer than
// `max_head_bytes` is kTooLarge even before its end arrives.
HeadScan ScanHead(std::string_view received, size_t max_head_bytes);

enum class BodyFraming { kNone, kContentLength, kChunked };

struct RequestHead {
  std::string method;
  std::string target;
  BodyFraming framing = BodyFraming::kNone;
  uint64_t content_length = 0;  // kContentLength only
  std::string request_id;       // the X-Request-Id header as sent, "" when absent
  // The head to hand to the library when it is not the head as received (see above: without
  // Range, If-Range and percent-encoded cookies); "" when the head goes as received.
  std::string library_head;
};

struct HeadParse {
  RequestHead head;
  std::optional<ApiError> error;  // set when the request must be refused before routing
};

// Parses a complete head (as delimited by ScanHead) and applies the transport rules:
// malformed request line or header line -> 400; a line over kLibraryMaxLineBytes -> 431
// (414 for the request line); Content-Length with Transfer-Encoding, several different
// Content-Lengths, or a Transfer-Encoding other than chunked -> 400; a body declared larger
// than `max_body_bytes` -> 413; a Content-Encoding other than identity, or a multipart
// Content-Type (the library would parse its parts; no route reads any) -> 415; a target or a
// header value the library would read otherwise (above) -> 400.
HeadParse ParseRequestHead(std::string_view head, int64_t max_body_bytes, int64_t max_head_bytes);

}  // namespace kimi::http
