#include "http/request_head.h"

#include <charconv>

#include "kimi/ascii_text.h"
#include "kimi/hex.h"

namespace kimi::http {
namespace {

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

bool HexDigitsAt(std::string_view s, size_t from, size_t count) {
  if (from + count > s.size()) return false;
  for (size_t i = from; i < from + count; ++i) {
    if (HexDigitValue(s[i]) < 0) return false;
  }
  return true;
}

// Whether the library would decode part of `value`: its decode_url turns "%XX" and "%uXXXX"
// into the bytes they name, in every header value.
bool HasLibraryEscape(std::string_view value) {
  for (size_t i = value.find('%'); i != std::string_view::npos; i = value.find('%', i + 1)) {
    if (HexDigitsAt(value, i + 1, 2) || (i + 1 < value.size() && value[i + 1] == 'u' && HexDigitsAt(value, i + 2, 4))) {
      return true;
    }
  }
  return false;
}

bool IsUnreserved(char c) {  // RFC 3986: never needs an escape
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

// Why the library would route `target` to another path than its bytes name, or "".
std::string_view TargetReadOtherwise(std::string_view target) {
  if (target.front() != '/') return "the target must be a path starting with '/'";
  if (target.find('#') != std::string_view::npos) return "the target has a fragment ('#')";
  const size_t query = target.find('?');
  for (size_t i = target.find('%'); i != std::string_view::npos; i = target.find('%', i + 1)) {
    if (!HexDigitsAt(target, i + 1, 2)) return "a '%' in the target is not followed by two hex digits";
    if (i < query && IsUnreserved(static_cast<char>(HexDigitValue(target[i + 1]) * 16 + HexDigitValue(target[i + 2])))) {
      return "the path percent-encodes a letter, a digit or one of -._~ (send it as itself)";
    }
  }
  return {};
}

// The pairs of a Cookie value that carry no escape, joined as a browser joins them.
std::string CookiesWithoutEscapes(std::string_view value) {
  std::string kept;
  while (!value.empty()) {
    const size_t semi = value.find(';');
    const std::string_view pair = TrimSpacesAndTabs(value.substr(0, semi));
    value = semi == std::string_view::npos ? std::string_view() : value.substr(semi + 1);
    if (pair.empty() || HasLibraryEscape(pair)) continue;
    if (!kept.empty()) kept += "; ";
    kept += pair;
  }
  return kept;
}

}  // namespace

HeadScan ScanHead(std::string_view received, size_t max_head_bytes) {
  HeadScan scan;
  size_t line_start = 0;
  for (size_t i = 0; i < received.size(); ++i) {
    if (i >= max_head_bytes) {
      scan.outcome = HeadScan::Outcome::kTooLarge;
      return scan;
    }
    if (received[i] != '\n') continue;
    if (i == 0 || received[i - 1] != '\r') {
      scan.outcome = HeadScan::Outcome::kBareLineFeed;
      return scan;
    }
    if (i - line_start == 1 && line_start > 0) {  // "\r\n" alone after the request line
      scan.outcome = HeadScan::Outcome::kComplete;
      scan.head_bytes = i + 1;
      return scan;
    }
    line_start = i + 1;
  }
  if (received.size() > max_head_bytes) scan.outcome = HeadScan::Outcome::kTooLarge;
  return scan;
}

HeadParse ParseRequestHead(std::string_view head, int64_t max_body_bytes, int64_t max_head_bytes) {
  HeadParse out;
  auto fail = [&out](ApiError e) {
    out.error = std::move(e);
    return out;
  };
  size_t eol = head.find("\r\n");
  if (eol == std::string_view::npos) return fail(MalformedRequest("no request line"));
  std::string_view request_line = head.substr(0, eol);
  if (request_line.size() > kLibraryMaxLineBytes) return fail(UriTooLong());
  size_t sp1 = request_line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || request_line.find(' ', sp2 + 1) != std::string_view::npos) {
    return fail(MalformedRequest("the request line is not METHOD TARGET VERSION"));
  }
  std::string_view method = request_line.substr(0, sp1);
  std::string_view target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = request_line.substr(sp2 + 1);
  if (method.empty() || target.empty()) return fail(MalformedRequest("empty method or target"));
  for (char c : method) {
    if (!IsTokenChar(c)) return fail(MalformedRequest("invalid method"));
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return fail(MalformedRequest("unsupported HTTP version"));
  // A target is visible ASCII (RFC 9112: anything else is percent-encoded). The library read
  // "/healthz\0" as a bad request and kept the connection, parsing what followed as another
  // request: the two parsers must not disagree on where a request ends.
  for (char c : target) {
    if (c <= ' ' || c >= 0x7F) return fail(MalformedRequest("the target has a control, space or non-ASCII byte"));
  }
  if (std::string_view why = TargetReadOtherwise(target); !why.empty()) return fail(MalformedRequest(why));
  out.head.method = std::string(method);
  out.head.target = std::string(target);

  bool has_length = false;
  bool chunked = false;
  // The library's head, built only once a line is left out or changed: head[0, copied) is in it.
  bool rewritten = false;
  size_t copied = 0;
  auto replace_line = [&](size_t line_start, size_t next_line, std::string_view with) {
    out.head.library_head.append(head.substr(copied, line_start - copied)).append(with);
    copied = next_line;
    rewritten = true;
  };
  size_t pos = eol + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos || end == pos) break;  // the blank line ends the head
    std::string_view line = head.substr(pos, end - pos);
    const size_t line_start = pos;
    pos = end + 2;
    if (line.size() > kLibraryMaxLineBytes) return fail(HeadersTooLarge(max_head_bytes));
    if (line.front() == ' ' || line.front() == '\t') {
      return fail(MalformedRequest("folded header lines are not accepted"));
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return fail(MalformedRequest("a header line has no name"));
    std::string_view name = line.substr(0, colon);
    for (char c : name) {
      if (!IsTokenChar(c)) return fail(MalformedRequest("invalid header name"));
    }
    std::string_view value = TrimSpacesAndTabs(line.substr(colon + 1));
    for (char c : value) {  // RFC 9110 field values: visible bytes, spaces and tabs
      if ((c >= 0 && c < ' ' && c != '\t') || c == 0x7F) return fail(MalformedRequest("a header value has a control byte"));
    }
    if (EqualsIgnoringAsciiCase(name, "Cookie")) {  // others' cookies may be escaped: left out, not refused
      if (HasLibraryEscape(value)) {
        const std::string kept = CookiesWithoutEscapes(value);
        replace_line(line_start, pos, kept.empty() ? std::string() : std::string(name) + ": " + kept + "\r\n");
      }
      continue;
    }
    if (HasLibraryEscape(value)) {
      return fail(MalformedRequest("the " + std::string(name.substr(0, 64)) +
                                   " header has a percent escape (%XX), which would be decoded: send the value as itself"));
    }
    if (EqualsIgnoringAsciiCase(name, "Range") || EqualsIgnoringAsciiCase(name, "If-Range")) {
      replace_line(line_start, pos, {});  // no route serves partial content: every answer is whole
    } else if (EqualsIgnoringAsciiCase(name, "Content-Length")) {
      uint64_t n = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || p != value.data() + value.size()) {
        return fail(MalformedRequest("invalid Content-Length"));
      }
      if (has_length && n != out.head.content_length) return fail(MalformedRequest("conflicting Content-Length headers"));
      has_length = true;
      out.head.content_length = n;
    } else if (EqualsIgnoringAsciiCase(name, "Transfer-Encoding")) {
      if (!EqualsIgnoringAsciiCase(value, "chunked") || chunked) {
        return fail(MalformedRequest("only a single \"Transfer-Encoding: chunked\" is accepted"));
      }
      chunked = true;
    } else if (EqualsIgnoringAsciiCase(name, "Content-Encoding")) {
      if (!EqualsIgnoringAsciiCase(value, "identity")) return fail(UnsupportedContentEncoding(value));
    } else if (EqualsIgnoringAsciiCase(name, "Content-Type")) {
      // The library parses multipart bodies itself, boundary and parts, before any route sees
      // them (a parser that other servers shipped denial-of-service bugs in); no route reads one.
      if (value.size() >= 10 && EqualsIgnoringAsciiCase(value.substr(0, 10), "multipart/")) {
        return fail(UnsupportedMediaType("application/json", value.substr(0, 64)));
      }
    } else if (EqualsIgnoringAsciiCase(name, "X-Request-Id")) {
      out.head.request_id = std::string(value);
    }
  }
  if (rewritten) out.head.library_head.append(head.substr(copied));
  if (has_length && chunked) return fail(MalformedRequest("both Content-Length and Transfer-Encoding"));
  if (chunked) {
    out.head.framing = BodyFraming::kChunked;
  } else if (has_length) {
    out.head.framing = BodyFraming::kContentLength;
    if (out.head.content_length > static_cast<uint64_t>(max_body_bytes)) return fail(PayloadTooLarge(max_body_bytes));
  }
  return out;
}

}  // namespace kimi::http
