#include "text/pretokenizer.h"

#include <array>
#include <cstdint>

#include "kimi/tokenizer_utf8.h"
#include "text/pretokenizer_classes.h"

namespace kimi::text {
namespace {

// The text decoded once into code points, their class flags and byte offsets, so that the
// branches can look ahead and back up over code points as the regex engine would.
struct DecodedText {
  std::vector<char32_t> cp;
  std::vector<uint8_t> cls;
  std::vector<uint32_t> offset;  // offset[i] = byte offset of cp[i]; offset[n] = text size
  size_t n = 0;

  void Decode(std::string_view text) {
    // Sized for the worst case (all ASCII) up front, so the loop only stores. The arrays only
    // grow: a short text after a long one must not cost a refill of the long one's size.
    if (cp.size() < text.size() + 1) {
      cp.resize(text.size() + 1);
      cls.resize(text.size() + 1);
      offset.resize(text.size() + 1);
    }
    const CharClasses& classes = CharClasses::Get();
    // Raw pointers and a local copy of the ASCII classes: the class stores are bytes, which
    // may alias anything, and would otherwise make the compiler reload every vector's data
    // pointer on each code point.
    std::array<uint8_t, 128> ascii;
    for (char32_t c = 0; c < 128; ++c) ascii[c] = classes.Of(c);
    char32_t* const out_cp = cp.data();
    uint8_t* const out_cls = cls.data();
    uint32_t* const out_offset = offset.data();
    const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
    const size_t size = text.size();
    size_t pos = 0;
    size_t i = 0;
    while (pos < size) {
      const uint8_t b = bytes[pos];
      if (b < 0x80) {
        out_cp[i] = b;
        out_cls[i] = ascii[b];
        out_offset[i] = static_cast<uint32_t>(pos);
        ++i;
        ++pos;
        continue;
      }
      const Utf8Step step = DecodeUtf8At(text, pos);
      // Precondition says valid UTF-8; a stray byte is still given a piece of its own
      // (as U+FFFD's classes) rather than read out of bounds.
      const char32_t c = step.kind == Utf8Kind::kComplete ? step.code_point : 0xFFFD;
      out_cp[i] = c;
      out_cls[i] = classes.Of(c);
      out_offset[i] = static_cast<uint32_t>(pos);
      ++i;
      pos += step.length;
    }
    offset[i] = static_cast<uint32_t>(text.size());
    n = i;
  }
};

// Each Match* function returns the end (a code-point index) of its branch's match starting
// at index p, or kNoMatch. They implement the branches of docs/tokenizer.md, in order.
constexpr size_t kNoMatch = static_cast<size_t>(-1);

class Scanner {
 public:
  explicit Scanner(const DecodedText& t) : t_(t) {}

  // The leftmost-first alternative that matches at p (p < n); every code point is matched
  // by some branch, so this always advances.
  size_t MatchAt(size_t p, PatternBranch* branch) const {
    size_t end;
    if (Has(p, kClassHan)) {
      *branch = PatternBranch::kHan;
      return RunEnd(p, kClassHan);
    }
    if ((end = MatchWithOptionalPrefix(p, &Scanner::LettersBody)) != kNoMatch) {
      *branch = PatternBranch::kLetters;
      return end;
    }
    if ((end = MatchWithOptionalPrefix(p, &Scanner::CapitalisedBody)) != kNoMatch) {
      *branch = PatternBranch::kCapitalised;
      return end;
    }
    if (Has(p, kClassNumber)) {
      *branch = PatternBranch::kDigits;
      end = p + 1;
      while (end < t_.n && end < p + 3 && Has(end, kClassNumber)) ++end;
      return end;
    }
    if ((end = MatchPunctuation(p)) != kNoMatch) {
      *branch = PatternBranch::kPunctuation;
      return end;
    }
    return MatchWhitespace(p, branch);
  }

 private:
  bool Has(size_t i, uint8_t flag) const { return (t_.cls[i] & flag) != 0; }
  bool IsLineBreak(size_t i) const { return t_.cp[i] == '\r' || t_.cp[i] == '\n'; }

  size_t RunEnd(size_t i, uint8_t flag) const {
    while (i < t_.n && Has(i, flag)) ++i;
    return i;
  }

  // [^\r\n\p{L}\p{N}]
  bool IsLetterPrefix(size_t i) const {
    return !IsLineBreak(i) && !Has(i, kClassLetter | kClassNumber);
  }

  // [^\s\p{L}\p{N}]
  bool IsPunctuation(size_t i) const {
    return !Has(i, kClassSpace | kClassLetter | kClassNumber);
  }

  // The optional prefix is greedy: the body is tried after it first, then without it.
  size_t MatchWithOptionalPrefix(size_t p, size_t (Scanner::*body)(size_t) const) const {
    if (IsLetterPrefix(p) && p + 1 < t_.n) {
      const size_t end = (this->*body)(p + 1);
      if (end != kNoMatch) return end;
    }
    return (this->*body)(p);
  }

  // [Upperish]*[Lowerish]+ then the optional contraction. Upperish* is greedy and gives
  // code points back one at a time until Lowerish+ can start; nothing after Lowerish+ can
  // fail, so the first start found decides the match.
  size_t LettersBody(size_t s) const {
    const size_t upper_end = RunEnd(s, kClassUpperish);
    for (size_t j = upper_end + 1; j-- > s;) {
      if (j < t_.n && Has(j, kClassLowerish)) return ContractionEnd(RunEnd(j, kClassLowerish));
    }
    return kNoMatch;
  }

  // [Upperish]+[Lowerish]* then the optional contraction.
  size_t CapitalisedBody(size_t s) const {
    if (s >= t_.n || !Has(s, kClassUpperish)) return kNoMatch;
    return ContractionEnd(RunEnd(RunEnd(s, kClassUpperish), kClassLowerish));
  }

  // (?i:'s|'t|'re|'ve|'m|'ll|'d)? at index e. Case-insensitive matching uses Unicode simple
  // case folding, under which U+017F LATIN SMALL LETTER LONG S is also an 's'.
  size_t ContractionEnd(size_t e) const {
    if (e + 1 >= t_.n || t_.cp[e] != '\'') return e;
    const char32_t a = t_.cp[e + 1];
    switch (a) {
      case 's': case 'S': case 0x17F:
      case 't': case 'T':
      case 'm': case 'M':
      case 'd': case 'D':
        return e + 2;
      default:
        break;
    }
    if (e + 2 >= t_.n) return e;
    const char32_t b = t_.cp[e + 2];
    const bool re = (a == 'r' || a == 'R') && (b == 'e' || b == 'E');
    const bool ve = (a == 'v' || a == 'V') && (b == 'e' || b == 'E');
    const bool ll = (a == 'l' || a == 'L') && (b == 'l' || b == 'L');
    return (re || ve || ll) ? e + 3 : e;
  }

  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  size_t MatchPunctuation(size_t p) const {
    size_t s = p;
    if (t_.cp[p] == ' ' && p + 1 < t_.n && IsPunctuation(p + 1)) {
      s = p + 1;
    } else if (!IsPunctuation(p)) {
      return kNoMatch;
    }
    size_t end = s;
    while (end < t_.n && IsPunctuation(end)) ++end;
    while (end < t_.n && IsLineBreak(end)) ++end;
    return end;
  }

  // \s*[\r\n]+ | \s+(?!\S) | \s+ — every code point left over at this point is White_Space.
  size_t MatchWhitespace(size_t p, PatternBranch* branch) const {
    const size_t run_end = RunEnd(p, kClassSpace);
    // \s* backs off to the last line break of the run; [\r\n]+ then takes it and stops,
    // because whatever follows it is not a line break (or it would have been the last one).
    for (size_t j = run_end; j-- > p;) {
      if (IsLineBreak(j)) {
        *branch = PatternBranch::kNewlines;
        return j + 1;
      }
    }
    if (run_end == t_.n) {
      *branch = PatternBranch::kTrailingSpace;
      return run_end;
    }
    if (run_end - p >= 2) {
      // Leave the last space for the next piece, which will start with it.
      *branch = PatternBranch::kTrailingSpace;
      return run_end - 1;
    }
    *branch = PatternBranch::kSpace;
    return run_end == p ? p + 1 : run_end;
  }

  const DecodedText& t_;
};

template <typename Emit>
void Scan(std::string_view text, Emit emit) {
  thread_local DecodedText decoded;
  decoded.Decode(text);
  const Scanner scanner(decoded);
  size_t p = 0;
  while (p < decoded.n) {
    PatternBranch branch;
    const size_t end = scanner.MatchAt(p, &branch);
    const uint32_t begin_byte = decoded.offset[p];
    emit(text.substr(begin_byte, decoded.offset[end] - begin_byte), branch);
    p = end;
  }
}

}  // namespace

void PreTokenize(std::string_view text, std::vector<std::string_view>* pieces) {
  Scan(text, [pieces](std::string_view piece, PatternBranch) { pieces->push_back(piece); });
}

std::vector<PreToken> PreTokenizeWithBranches(std::string_view text) {
  std::vector<PreToken> out;
  Scan(text, [&out](std::string_view piece, PatternBranch branch) {
    out.push_back({piece, branch});
  });
  return out;
}

}  // namespace kimi::text
