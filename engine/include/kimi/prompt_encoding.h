// Turns a rendered K3 prompt into token ids: the one path the CLI, the runtime and the server
// use, so that every part of the product counts and tokenises prompts alike.
//
// Special tokens are recognised only inside the markup the template wrote
// (RenderedPrompt::markup); text that came from the request (content, tool names, schemas) is
// tokenised as ordinary text even when it spells "<|open|>".
//
// Thread safety: pure functions over const objects.
#pragma once

#include <cstdint>
#include <vector>

#include "kimi/chat_format.h"
#include "kimi/status.h"
#include "kimi/tokenizer.h"

namespace kimi {

struct PromptIds {
  std::vector<int32_t> ids;   // the whole prompt, generation stub included
  size_t prompt_tokens = 0;   // what usage.prompt_tokens reports: ids without the stub
};

// Errors: as Tokenizer::EncodeSegments (invalid UTF-8); Internal when markup spans are out of
// order or outside the text.
Result<PromptIds> EncodePrompt(const Tokenizer& tokenizer, const RenderedPrompt& prompt);

}  // namespace kimi
