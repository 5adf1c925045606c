// The special-token table of a Kimi tokenizer (the search for its texts is
// kimi/special_token_text.h).
//
// The table has exactly 256 entries, ids num_base_tokens .. num_base_tokens+255. Names come
// from tokenizer_config.json's `added_tokens_decoder` ({"163587": {"content": "<|open|>",
// ...}}); ids the config does not name are "<|reserved_token_ID|>" as in tokenization_kimi.py.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"
#include "kimi/tokenizer.h"

namespace kimi::text {

// The 256-entry table named by a tokenizer_config.json. Errors: InvalidArgument when the
// JSON does not parse, an entry has no string content, an id is outside the special range,
// or two ids share a text.
Result<std::vector<SpecialToken>> ParseAddedTokensDecoder(std::string_view config_json,
                                                          int32_t num_base_tokens);

// The full 256-entry table: the named entries, and ReservedSpecialTokenName(id) for every id
// they leave out; ascending ids.
std::vector<SpecialToken> CompleteSpecialTable(std::vector<SpecialToken> named, int32_t num_base_tokens);

}  // namespace kimi::text
