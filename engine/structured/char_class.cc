#include "structured/char_class.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace kimi::structured {
namespace {

constexpr char32_t kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF, kMaxCodePoint = 0x10FFFF;

int Utf8Length(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

void EncodeUtf8(char32_t c, uint8_t out[4]) {
  const int n = Utf8Length(c);
  if (n == 1) {
    out[0] = static_cast<uint8_t>(c);
    return;
  }
  static constexpr uint8_t kLead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
  for (int i = n - 1; i > 0; --i) {
    out[i] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    c >>= 6;
  }
  out[0] = static_cast<uint8_t>(kLead[n] | c);
}

// Adds the byte-range sequences that spell exactly the code points lo..hi. The range is split
// until every code point in a piece has the same length and the pieces differ only in trailing
// bytes that cover whole continuation ranges, so each piece is one sequence of byte ranges.
void AddUtf8Range(GrammarBuilder* builder, int32_t from, char32_t lo, char32_t hi, int32_t to) {
  if (lo > hi) return;
  static constexpr char32_t kLengthEnds[3] = {0x7F, 0x7FF, 0xFFFF};
  for (char32_t end : kLengthEnds) {
    if (lo <= end && hi > end) {
      AddUtf8Range(builder, from, lo, end, to);
      AddUtf8Range(builder, from, end + 1, hi, to);
      return;
    }
  }
  const int n = Utf8Length(lo);
  for (int i = 1; i < n; ++i) {
    const char32_t m = (char32_t(1) << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        AddUtf8Range(builder, from, lo, lo | m, to);
        AddUtf8Range(builder, from, (lo | m) + 1, hi, to);
        return;
      }
      if ((hi & m) != m) {
        AddUtf8Range(builder, from, lo, (hi & ~m) - 1, to);
        AddUtf8Range(builder, from, hi & ~m, hi, to);
        return;
      }
    }
  }
  uint8_t a[4], b[4];
  EncodeUtf8(lo, a);
  EncodeUtf8(hi, b);
  int32_t at = from;
  for (int i = 0; i < n; ++i) {
    const int32_t next = i + 1 == n ? to : builder->NewState(builder->RuleOf(from));
    ByteSet bytes;
    bytes.AddRange(a[i], b[i]);
    builder->AddBytes(at, bytes, next);
    at = next;
  }
}

}  // namespace

CharClass CharClass::Of(char32_t lo, char32_t hi) {
  CharClass c;
  c.Add(lo, hi);
  return c;
}

CharClass CharClass::AnyChar() { return Of(0, kMaxCodePoint); }

void CharClass::Add(char32_t lo, char32_t hi) {
  if (hi > kMaxCodePoint) hi = kMaxCodePoint;
  if (lo > hi) return;
  if (lo <= kSurrogateHi && hi >= kSurrogateLo) {  // cut the surrogates out
    if (lo < kSurrogateLo) Add(lo, kSurrogateLo - 1);
    if (hi > kSurrogateHi) Add(kSurrogateHi + 1, hi);
    return;
  }
  ranges_.push_back({lo, hi});
  std::sort(ranges_.begin(), ranges_.end(), [](const CodePointRange& x, const CodePointRange& y) { return x.lo < y.lo; });
  std::vector<CodePointRange> merged;
  for (const CodePointRange& r : ranges_) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  ranges_ = std::move(merged);
}

void CharClass::Add(const CharClass& other) {
  for (const CodePointRange& r : other.ranges_) Add(r.lo, r.hi);
}

CharClass CharClass::ComplementWithin(const CharClass& universe) const {
  CharClass out;
  for (const CodePointRange& u : universe.ranges_) {
    char32_t next = u.lo;
    bool covered_to_end = false;
    for (const CodePointRange& r : ranges_) {
      if (r.hi < next) continue;
      if (r.lo > u.hi) break;
      if (r.lo > next) out.Add(next, r.lo - 1);
      if (r.hi >= u.hi) {
        covered_to_end = true;
        break;
      }
      next = r.hi + 1;
    }
    if (!covered_to_end) out.Add(next, u.hi);
  }
  return out;
}

bool CharClass::Contains(char32_t c) const {
  for (const CodePointRange& r : ranges_) {
    if (c >= r.lo && c <= r.hi) return true;
  }
  return false;
}

void AddUtf8Char(GrammarBuilder* builder, int32_t from, const CharClass& chars, int32_t to) {
  for (const CodePointRange& r : chars.ranges()) AddUtf8Range(builder, from, r.lo, r.hi, to);
}

void AddJsonStringChar(GrammarBuilder* builder, int32_t from, const CharClass& chars, int32_t to) {
  CharClass raw;
  for (const CodePointRange& r : chars.ranges()) {
    for (char32_t c = r.lo; c <= std::min<char32_t>(r.hi, 0x5C); ++c) {
      if (c >= 0x20 && c != '"' && c != '\\') {
        raw.Add(c, c);
        continue;
      }
      std::string escaped;
      switch (c) {
        case '"': escaped = "\\\""; break;
        case '\\': escaped = "\\\\"; break;
        case '\n': escaped = "\\n"; break;
        case '\r': escaped = "\\r"; break;
        case '\t': escaped = "\\t"; break;
        case '\b': escaped = "\\b"; break;
        case '\f': escaped = "\\f"; break;
        default: {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          escaped = buf;
        }
      }
      builder->AddLiteral(from, escaped, to);
    }
    if (r.hi > 0x5C) raw.Add(std::max<char32_t>(r.lo, 0x5D), r.hi);
  }
  AddUtf8Char(builder, from, raw, to);
}

}  // namespace kimi::structured
