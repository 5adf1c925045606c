#include "io/json_guard.h"

#include <string>

namespace kimi {
namespace {

// Largest nesting depth of arrays and objects, ignoring brackets inside strings. Stops early
// once the limit is passed.
int NestingDepth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // skip the escaped character
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Status CheckJsonDepth(std::string_view text, std::string_view label) {
  if (NestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return Status::Corruption(std::string(label) + ": JSON nests deeper than " +
                              std::to_string(kMaxJsonDepth) + " levels");
  }
  return Status::OK();
}

Result<nlohmann::json> ParseUntrustedJson(std::string_view text, std::string_view label) {
  KIMI_RETURN_IF_ERROR(CheckJsonDepth(text, label));
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  } catch (const std::exception& e) {  // defensive: the parser is asked not to throw
    return Status::Corruption(std::string(label) + ": invalid JSON: " + e.what());
  }
  if (parsed.is_discarded()) return Status::Corruption(std::string(label) + ": invalid JSON");
  return parsed;
}

}  // namespace kimi
