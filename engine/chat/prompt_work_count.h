// Raises the process-wide prompt work counts (kimi/prompt_work.h); called only where the
// work is done: the renderer and the chat service's prompt encoding.
//
// Thread safety: atomic increments, any thread.
#pragma once

namespace kimi::chat {

void CountPromptRender();
void CountPromptTokenization();

}  // namespace kimi::chat
