// The special-token table of a Kimi tokenizer and the search for special-token texts.
//
// The table has exactly 256 entries, ids num_base_tokens .. num_base_tokens+255. Names come
// from tokenizer_config.json's `added_tokens_decoder` ({"163587": {"content": "<|open|>",
// ...}}); ids the config does not name are "<|reserved_token_ID|>" as in tokenization_kimi.py.
//
// Thread safety: SpecialMatcher is immutable after construction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kimi/status.h"
#include "kimi/tokenizer.h"

namespace kimi::text {

// The 256-entry table named by a tokenizer_config.json. Errors: InvalidArgument when the
// JSON does not parse, an entry has no string content, an id is outside the special range,
// or two ids share a text.
Result<std::vector<SpecialToken>> ParseAddedTokensDecoder(std::string_view config_json,
                                                          int32_t num_base_tokens);

// The full 256-entry table: the named entries, and "<|reserved_token_ID|>" for every id
// they leave out; ascending ids.
std::vector<SpecialToken> CompleteSpecialTable(std::vector<SpecialToken> named, int32_t num_base_tokens);

struct SpecialMatch {
  size_t position;  // byte offset of the special token's text; npos when none
  size_t length;
  int32_t id;
};

class SpecialMatcher {
 public:
  explicit SpecialMatcher(const std::vector<SpecialToken>& table);

  // The leftmost occurrence of a special-token text in text that starts in [from, until);
  // at one position the longest text wins (it may end anywhere in text).
  SpecialMatch FindNext(std::string_view text, size_t from, size_t until = std::string_view::npos) const;
  // The id of exactly this text, or -1.
  int32_t Find(std::string_view text) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> by_text_;
  std::vector<size_t> lengths_;  // distinct text lengths, longest first
  bool first_byte_[256] = {};
};

}  // namespace kimi::text
