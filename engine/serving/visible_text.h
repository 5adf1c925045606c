// The detokeniser the chat service gives its Runtime: ordinary tokens become their text in
// whole UTF-8 characters (a character split across tokens waits for its last byte); special
// tokens become no text, because the output parser recognises them by id; and bytes that can
// never form a character are dropped rather than shown as U+FFFD, so a client never sees a
// replacement character (a model that spells U+FFFD itself loses it too: the two cannot be
// told apart after decoding).
//
// Thread safety: the Detokenizer is shared (const); each stream belongs to one request.
#pragma once

#include <memory>

#include "kimi/runtime.h"
#include "kimi/tokenizer.h"

namespace kimi::serving {

std::shared_ptr<Detokenizer> VisibleTextDetokenizer(const Tokenizer& tokenizer);

}  // namespace kimi::serving
