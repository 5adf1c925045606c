// UTF-8 scanning for the tokenizer: strict validation, one-code-point decoding and the
// "maximal subpart" replacement rule used when bytes that are not UTF-8 must be shown as text.
//
// Strict means: no overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
// These are pure functions over caller-owned bytes; they are safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi::text {

// What the bytes at one position hold.
enum class Utf8Kind {
  kComplete,   // a whole, valid code point of `length` bytes
  kTruncated,  // the input ends inside a sequence that is valid so far (`length` bytes of it)
  kInvalid,    // `length` bytes (>= 1) that can never be part of a valid sequence
};

struct Utf8Step {
  Utf8Kind kind;
  int length;
  char32_t code_point;  // meaningful for kComplete only
};

// Decodes the sequence that starts at text[pos]. Precondition: pos < text.size().
// Inline: the tokenizer calls it once per non-ASCII code point.
inline Utf8Step DecodeUtf8At(std::string_view text, size_t pos) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data()) + pos;
  const size_t avail = text.size() - pos;
  const uint8_t b0 = p[0];
  if (b0 < 0x80) return {Utf8Kind::kComplete, 1, b0};

  int need;
  char32_t cp;
  // The allowed range of the second byte excludes overlongs, surrogates and > U+10FFFF
  // (Unicode Table 3-7, "Well-Formed UTF-8 Byte Sequences").
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {Utf8Kind::kInvalid, 1, 0};
  }

  for (int i = 1; i < need; ++i) {
    if (static_cast<size_t>(i) >= avail) return {Utf8Kind::kTruncated, i, 0};
    const uint8_t b = p[i];
    const bool ok = (i == 1) ? (b >= lo && b <= hi) : (b & 0xC0) == 0x80;
    if (!ok) return {Utf8Kind::kInvalid, i, 0};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {Utf8Kind::kComplete, need, cp};
}

// True for a byte that continues a multi-byte sequence (10xxxxxx): never where a character
// starts, so a cut of the text before such a byte splits a character.
inline bool IsUtf8Continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

// The number of code points of valid UTF-8 (what JSON Schema's string lengths count): the bytes
// that start a character.
inline size_t CountCodePoints(std::string_view text) {
  size_t n = 0;
  for (char byte : text) n += !IsUtf8Continuation(byte);
  return n;
}

// OK when text is strictly valid UTF-8; otherwise InvalidArgument naming the first bad offset.
Status ValidateUtf8(std::string_view text);

// Appends code point cp (precondition: a Unicode scalar value) as UTF-8.
void AppendUtf8(char32_t cp, std::string* out);

// The text of bytes with every invalid or truncated sequence replaced by U+FFFD, one per
// maximal subpart (the Unicode recommendation, and what Python's errors="replace" does).
std::string ReplaceInvalidUtf8(std::string_view bytes);

}  // namespace kimi::text
