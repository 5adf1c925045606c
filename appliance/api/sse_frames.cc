#include "api/sse_frames.h"

#include "api/response_meta.h"

namespace kimi::api {

using Json = nlohmann::ordered_json;

namespace {

// The escape of the line break at text[at] that JSON may carry raw but that some readers split
// lines on (U+0085 C2 85, U+2028 E2 80 A8, U+2029 E2 80 A9), or "" when there is none there.
std::string_view LineBreakEscape(std::string_view text, size_t at) {
  if (text[at] == '\xC2') return at + 1 < text.size() && text[at + 1] == '\x85' ? "\\u0085" : "";
  if (at + 2 >= text.size() || text[at + 1] != '\x80') return "";
  if (text[at + 2] == '\xA8') return "\\u2028";
  if (text[at + 2] == '\xA9') return "\\u2029";
  return "";
}

}  // namespace

// Python's str.splitlines() (Moonshot's verifier reads SSE bodies with it) and other line
// readers also end a line at U+0085, U+2028 and U+2029, which JSON allows raw in strings; a
// frame that carried one would reach such a reader cut in two. Escaped, the JSON means the same
// and every frame stays one line. Outside strings JSON is ASCII, so every match is in a string.
void AppendEscapingLineBreaks(std::string_view json, std::string* out) {
  size_t copied = 0;
  for (size_t at = json.find_first_of("\xC2\xE2"); at != std::string_view::npos;
       at = json.find_first_of("\xC2\xE2", at + 1)) {
    const std::string_view escape = LineBreakEscape(json, at);
    if (escape.empty()) continue;
    out->append(json, copied, at - copied).append(escape);
    copied = at + (json[at] == '\xC2' ? 2 : 3);
  }
  out->append(json, copied, std::string_view::npos);
}

std::string SseFrame(const Json& payload) { return SseDataFrame(DumpJson(payload)); }

std::string SseDataFrame(std::string_view json) {
  std::string frame = "data: ";
  frame.reserve(json.size() + 8);
  AppendEscapingLineBreaks(json, &frame);
  frame += "\n\n";
  return frame;
}

void AppendStreamEnd(const Json& envelope, Json end_choice, const TokenUsage& usage, bool include_usage,
                     std::string* out) {
  end_choice["usage"] = UsageJson(usage);
  Json end = envelope;
  end["choices"] = Json::array({std::move(end_choice)});
  *out += SseFrame(end);
  if (include_usage) {
    Json frame = envelope;
    frame["choices"] = Json::array();
    frame["usage"] = UsageJson(usage);
    *out += SseFrame(frame);
  }
  *out += kSseDone;
}

}  // namespace kimi::api
