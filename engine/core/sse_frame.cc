#include "kimi/sse_frame.h"

namespace kimi {
namespace {

// The escape of the line break at text[at] (U+0085 C2 85, U+2028 E2 80 A8, U+2029 E2 80 A9),
// or "" when there is none there.
std::string_view LineBreakEscape(std::string_view text, size_t at) {
  if (text[at] == '\xC2') return at + 1 < text.size() && text[at + 1] == '\x85' ? "\\u0085" : "";
  if (at + 2 >= text.size() || text[at + 1] != '\x80') return "";
  if (text[at + 2] == '\xA8') return "\\u2028";
  if (text[at + 2] == '\xA9') return "\\u2029";
  return "";
}

}  // namespace

void AppendEscapingSseLineBreaks(std::string_view json, std::string* out) {
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

std::string SseDataFrame(std::string_view json) {
  std::string frame = "data: ";
  frame.reserve(json.size() + 8);
  AppendEscapingSseLineBreaks(json, &frame);
  frame += "\n\n";
  return frame;
}

}  // namespace kimi
