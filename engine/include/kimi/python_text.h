// Python-compatible text of JSON values, as the K3 chat template produces it under Jinja.
//
// The reference template runs in Python, so every byte it writes follows Python's rules:
// json.dumps (ensure_ascii=False, default ", " / ": " separators), Jinja's dictsort
// (case-insensitive, stable), str() of any value (True, None, 2.5, {'a': 1}), and
// str.strip()'s notion of whitespace. This module reproduces those rules on nlohmann's
// ordered_json so that the native renderer matches the reference byte for byte.
//
// Owns nothing. Thread safety: pure functions, callable from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kimi::chat {

using Json = nlohmann::ordered_json;

// The printers below recurse once per nesting level; requests nested deeper than this are
// refused before rendering (Python's own recursion limit would stop the template too).
inline constexpr size_t kMaxNesting = 200;
// True when no value in the tree is nested deeper than `limit` levels. Iterative.
bool NestingWithin(const Json& root, size_t limit);

// JSON string escaping without the quotes, as json.dumps(s, ensure_ascii=False) escapes:
// ", \, the named controls, other controls as \u00xx; every other byte is kept.
void AppendJsonEscaped(std::string_view s, std::string* out);
// json.dumps(s, ensure_ascii=False) for a string: the escaped text in quotes.
void AppendPythonJsonString(std::string_view s, std::string* out);

// repr(float) / json.dumps(float): shortest round-trip digits, exponent when exp < -4 or >= 16.
std::string PythonFloatRepr(double value);

// json.dumps(value, ensure_ascii=False): insertion order, ", " and ": " separators.
std::string PythonJsonDumps(const Json& value);

// The template's json_sorted macro: compact (",", ":"), mapping keys in dictsort order
// (case-insensitive by Python's str.lower(), stable), array order kept.
std::string SortedCompactJson(const Json& value);

// str(value): strings raw, True/False/None, ints, float repr, containers as Python repr.
std::string PythonStr(const Json& value);

// Python truthiness: null, false, 0, "", [] and {} are false.
bool PythonTruthy(const Json& value);

// str.strip() with no argument: removes leading and trailing Unicode whitespace.
std::string_view PythonStrip(std::string_view s);

// str.lower() (full Unicode case mapping). Invalid UTF-8 is returned unchanged.
std::string PythonLower(std::string_view s);

}  // namespace kimi::chat
