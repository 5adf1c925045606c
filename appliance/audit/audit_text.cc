#include "audit/audit_text.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

#include "audit/canonical_json.h"
#include "audit/hash.h"
#include "kimi/tokenizer_utf8.h"

namespace kimi::audit {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026

// The code point of the well-formed sequence of n bytes at s[0].
uint32_t Decode(std::string_view s, size_t n) {
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(s[k])); };
  if (n == 1) return b(0);
  if (n == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (n == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

size_t SequenceLength(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  return 2;
}

bool BreaksOrDisguisesALine(uint32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x2028 || c == 0x2029 || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

std::string EscapeLineBreakingCharacters(std::string_view in) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size();) {
    const size_t n = std::min(SequenceLength(static_cast<uint8_t>(in[i])), in.size() - i);
    const uint32_t c = Decode(in.substr(i), n);
    if (BreaksOrDisguisesALine(c)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(c >> shift) & 0xF];
    } else {
      out.append(in.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string ShownText(std::string_view in) {
  return EscapeLineBreakingCharacters(IsValidUtf8(in) ? std::string(in) : SanitizeUtf8(in));
}

std::string AuditText(std::string_view in, size_t max_bytes) {
  assert(max_bytes >= 128);
  std::string text = ShownText(in);
  if (text.size() <= max_bytes) return text;
  const std::string marker = std::string(kEllipsis) + "[truncated, " + std::to_string(text.size()) +
                             " bytes, sha256:" + ToHex(Sha256(text)) + "]";
  size_t keep = max_bytes - marker.size();
  // Back up to the start of a character so that the kept part stays valid UTF-8.
  while (keep > 0 && kimi::text::IsUtf8Continuation(text[keep])) --keep;
  text.resize(keep);
  return text + marker;
}

}  // namespace kimi::audit
