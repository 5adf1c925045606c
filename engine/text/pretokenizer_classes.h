// The Unicode character classes that Kimi's pre-tokeniser pattern is written in, taken from
// ICU's character database rather than approximated by code-point ranges.
//
// Each code point gets a byte of flags. The table for planes 0..3 (where Han, Latin, Cyrillic,
// emoji and the CJK extensions live) is built once, on first use; other planes ask ICU each
// time. docs/tokenizer.md maps every flag to the regex class it stands for.
//
// Thread safety: Get() builds the table under C++'s static-initialisation guarantee; after
// that the object is immutable and shared by all threads.
#pragma once

#include <cstdint>
#include <vector>

namespace kimi::text {

enum CharClass : uint8_t {
  kClassHan = 1 << 0,        // \p{Han}: Script=Han (not Script_Extensions)
  kClassLetter = 1 << 1,     // \p{L}
  kClassNumber = 1 << 2,     // \p{N}
  kClassUpperish = 1 << 3,   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]
  kClassLowerish = 1 << 4,   // [\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]
  kClassSpace = 1 << 5,      // \s: the White_Space property
  kClassPySpace = 1 << 6,    // Python's str.isspace(): category Zs, or bidi class WS, B or S
};

class CharClasses {
 public:
  static const CharClasses& Get();

  uint8_t Of(char32_t cp) const { return cp < kTableLimit ? table_[cp] : Compute(cp); }

  // The flags straight from ICU, without the table. Precondition: cp <= 0x10FFFF.
  static uint8_t Compute(char32_t cp);

 private:
  static constexpr char32_t kTableLimit = 0x40000;
  CharClasses();

  std::vector<uint8_t> table_;
};

}  // namespace kimi::text
