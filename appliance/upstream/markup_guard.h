// The markup guard: keeps the chat format's control tokens, typed as text by an API caller,
// from reaching an upstream server.
//
// The embedded engine encodes a caller's text as ordinary text: "<|im_end|>" in a message stays
// those ten characters (kimi/prompt_encoding.h). An upstream server (vLLM, a `kimi-engine
// serve` worker) renders its chat template and tokenises the result itself, and Kimi's
// tokenizer, like Hugging Face tokenizers generally, turns the text of a special token found
// anywhere in it into that token. A caller could close its own message and open a system or
// tool message, or write a tool call that its policy rule forbids, as text. So a body bound
// for an upstream is refused when a text in it contains such a token's text.
//
// The texts (KimiControlTokenTexts): K3's special-token table at the real vocabulary
// ([BOS], <|end_of_msg|>, <|open|>, ..., and <|reserved_token_N|> for every special id), the
// table of the tokenizer_config.json that ships with Kimi's ranks (data/kimi-k3/, K2.6 names:
// <|im_end|>, <|im_user|>, <|tool_call_begin|>, <think>, ...), and the markup the K3 chat
// format writes besides its tokens (<|kimi_image_placeholder|>, which a multimodal server
// replaces with an image).
//
// The texts of a body searched (CheckNoControlTokens): every object key and every string at any
// depth; the decoded keys and values of a tool call's `arguments` text (a server may parse them
// and print them again); and the text parts of a content array joined (a template may write them
// back to back). Each text is read once: only at a byte that starts some token's text is a trie
// walked, for at most the longest text's length, and Kimi's texts hold their first byte (`<` or
// `[`) nowhere else, so two walks never cover the same byte: a multi-megabyte prompt costs about
// two reads of its bytes.
//
// The search is the tokenizer's own (kimi/special_token_text.h).
//
// Thread safety: KimiControlTokens() is built once, on first use, and shared by every thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/special_token_text.h"
#include "kimi/status.h"

namespace kimi::upstream {

// Every text listed above, each once.
std::vector<std::string> KimiControlTokenTexts();
// A matcher of KimiControlTokenTexts(), each text's id its index there; built on first use.
const SpecialTextMatcher& KimiControlTokens();

// OK, or InvalidArgument naming the first text of `body` (a request body as an upstream receives
// it) that contains a token's text, with the field's path first, as the request rules name
// fields: "messages[1].content contains '<|im_end|>', a control token of the model's chat
// format; an upstream server would read it as markup". InvalidArgument also for `arguments`
// nested deeper than chat::kMaxNesting, which cannot be searched as a server would decode them.
Status CheckNoControlTokens(const nlohmann::ordered_json& body, const SpecialTextMatcher& tokens);

}  // namespace kimi::upstream
