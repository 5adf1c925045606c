// Character tests shared by the built-in detectors (internal to appliance/policy). ASCII
// only: every other byte is a boundary.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kimi::policy::text {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
inline bool IsAlpha(char c) { return IsUpper(c) || IsLower(c); }
inline bool IsAlnum(char c) { return IsDigit(c) || IsAlpha(c); }
inline bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// True when text[i] does not exist or is not an ASCII letter or digit.
inline bool BoundaryAt(std::string_view text, size_t i) { return i >= text.size() || !IsAlnum(text[i]); }
// True when position `begin` starts a token: nothing before it, or a non-alphanumeric byte.
inline bool StartsToken(std::string_view text, size_t begin) { return begin == 0 || !IsAlnum(text[begin - 1]); }

// For numbers a letter does not hide ("x4111111111111111", "a123-45-6789" are still a card and
// an SSN): true when text[i] does not exist or is not a digit, and when a number may start at
// `begin` (nothing before it, or no digit).
inline bool NoDigitAt(std::string_view text, size_t i) { return i >= text.size() || !IsDigit(text[i]); }
inline bool StartsNumber(std::string_view text, size_t begin) { return begin == 0 || !IsDigit(text[begin - 1]); }

// Digits separated by single separators from `separators`, starting at text[begin] (a digit).
// Sets *end past the last digit and returns the digits alone.
std::string DigitsWithSeparators(std::string_view text, size_t begin, std::string_view separators, size_t* end);

// The same run as groups of digits: [begin, end) of each group in text.
struct DigitGroup {
  size_t begin, end;
};
std::vector<DigitGroup> DigitGroups(std::string_view text, size_t begin, std::string_view separators);

}  // namespace kimi::policy::text
