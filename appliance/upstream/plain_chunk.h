// ReadPlainChunk: reads the common chunk of a chat-completions stream (one choice whose delta
// carries text: content, reasoning_content or vLLM's reasoning, perhaps a finish_reason)
// straight from its JSON text, without building a JSON tree: nearly every frame of a stream
// is such a chunk, and building a tree per token cost the gateway an allocation per key.
//
// Anything else (tool calls, logprobs, usage, an error object, a whole message, a second
// choice, a value of an unexpected type, malformed JSON) is declined, and the caller reads
// the chunk in full (ChunkNormalizer::Consume), so each normalisation rule has one home.
//
// Thread safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace kimi::upstream {

struct PlainChunk {
  bool has_choice = false;  // false: a chunk with no choices (nothing to emit)
  std::string content;
  std::string reasoning_content;
  std::string reasoning;      // vLLM's name for reasoning_content
  std::string finish_reason;  // "" when null or absent
};

// True with *chunk filled when `data` is a plain chunk; false when it must be read in full.
bool ReadPlainChunk(std::string_view data, PlainChunk* chunk);

}  // namespace kimi::upstream
