// JSON text from outside the process, parsed only when it nests within a bound: what a peer
// sends (an upstream's events and answers, a request), a file anyone else may have written (a
// model's headers and signature, an audit export, a witness file) or a database row someone
// with write access to the data directory may have edited.
//
// nlohmann parses and frees iteratively, but dump(), copies, comparisons and most walks of a
// parsed value recurse once per level: an upstream event 200,000 levels deep parsed without
// harm, then crashed the daemon (SIGSEGV) when a tool call's arguments were dumped. So such
// text is measured from the text itself (kimi/json_depth.h) before any parser sees it.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kimi/json_depth.h"
#include "kimi/status.h"

namespace kimi {

// As deep as the API's request bodies may nest (http/body_checks.h), which is deeper than
// anything the appliance writes or reads back.
inline constexpr size_t kMaxUntrustedJsonNesting = 256;
// Files whose formats nest a few levels (safetensors headers, config.json, weight indexes,
// signatures, signed heads).
inline constexpr size_t kMaxFileJsonNesting = 64;

// Corruption "<what>: JSON nests deeper than N levels" when `text` does (for callers that parse
// with their own SAX handler).
Status CheckJsonNesting(std::string_view text, std::string_view what, size_t max_nesting);

// `text` parsed as JsonT (nlohmann::json, or ordered_json to keep members in their order).
// Corruption naming `what` when it nests deeper than `max_nesting` or is not JSON.
template <typename JsonT = nlohmann::json>
Result<JsonT> ParseUntrustedJson(std::string_view text, std::string_view what,
                                 size_t max_nesting = kMaxUntrustedJsonNesting) {
  KIMI_RETURN_IF_ERROR(CheckJsonNesting(text, what, max_nesting));
  JsonT parsed = JsonT::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status::Corruption(std::string(what) + ": not valid JSON");
  return parsed;
}

}  // namespace kimi
