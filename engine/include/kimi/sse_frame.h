// Server-Sent Events framing of JSON payloads, shared by every stream the product writes: the
// appliance's OpenAI stream encoders and the engine's worker protocol (`kimi-engine serve`).
// A frame is "data: <json>\n\n" with U+0085, U+2028 and U+2029 written as \u escapes: JSON may
// carry them raw inside strings, but Python's str.splitlines() (Moonshot's verifier reads SSE
// bodies with it) and other line readers end a line at them, which would cut a frame in two.
// Escaped, the JSON means the same. Outside strings JSON is ASCII, so every match is in a
// string.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace kimi {

inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// Appends serialised JSON text with those three line breaks escaped.
void AppendEscapingSseLineBreaks(std::string_view json, std::string* out);

// "data: <json>\n\n" for serialised JSON text, escaped as above.
std::string SseDataFrame(std::string_view json);

}  // namespace kimi
