// Parses untrusted JSON text (file headers, config.json, index files) without letting it crash
// the process: the nesting depth is checked before the recursive parser sees the text, and
// parse errors come back as a Status instead of an exception.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "kimi/status.h"

namespace kimi {

inline constexpr int kMaxJsonDepth = 64;

// Parses `text`; `label` names the file in errors. Fails with Corruption when the text is not
// JSON or nests deeper than kMaxJsonDepth.
Result<nlohmann::json> ParseUntrustedJson(std::string_view text, std::string_view label);

// Fails with Corruption when `text` nests arrays/objects deeper than kMaxJsonDepth (for callers
// that parse with their own SAX handler).
Status CheckJsonDepth(std::string_view text, std::string_view label);

}  // namespace kimi
