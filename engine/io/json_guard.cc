#include "io/json_guard.h"

#include <string>

#include "kimi/json_depth.h"

namespace kimi {

Status CheckJsonDepth(std::string_view text, std::string_view label) {
  if (const size_t limit = kMaxJsonDepth; JsonNestingDepth(text, limit) > limit) {
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
