// Process-wide counts of the work done on request prompts: renders in the K3 chat format
// (ChatFormat::Render) and tokenisations of a request's prompt (the chat service's prompt
// encoding), raised where that work is done. A daemon shows them on /metrics so that one
// render and one tokenisation per request can be checked from outside.
//
// Thread safety: the counts are atomics; any thread may raise or read them.
#pragma once

#include <cstdint>

namespace kimi {

struct PromptWorkCounts {
  uint64_t renders = 0;        // ChatFormat::Render calls that rendered a prompt
  uint64_t tokenizations = 0;  // request prompts tokenised by the chat service's encoding
};

// The counts since the process started.
PromptWorkCounts PromptWork();

}  // namespace kimi
