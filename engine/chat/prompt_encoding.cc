#include "kimi/prompt_encoding.h"

#include <string_view>

namespace kimi {
namespace {

// The segments of text[begin, end): markup allows special tokens, the rest does not.
Result<std::vector<TextSegment>> Segments(const RenderedPrompt& prompt, size_t begin, size_t end) {
  std::vector<TextSegment> segments;
  const std::string_view text(prompt.text);
  size_t at = begin;
  for (const MarkupSpan& span : prompt.markup) {
    if (span.offset < at && span.offset + span.size > at) {
      return Status::Internal("prompt markup span straddles a segment boundary");
    }
    if (span.offset + span.size <= at) continue;
    if (span.offset >= end) break;
    if (span.offset + span.size > end || span.offset + span.size > text.size()) {
      return Status::Internal("prompt markup span outside the rendered text");
    }
    if (span.offset > at) segments.push_back({text.substr(at, span.offset - at), false});
    segments.push_back({text.substr(span.offset, span.size), true});
    at = span.offset + span.size;
  }
  if (at < end) segments.push_back({text.substr(at, end - at), false});
  return segments;
}

}  // namespace

Result<PromptIds> EncodePrompt(const Tokenizer& tokenizer, const RenderedPrompt& prompt) {
  // The stub is encoded on its own: it begins with a special token, so no BPE merge can cross
  // the boundary, and the count without it is exact.
  const size_t stub_begin = prompt.text.size() - prompt.generation_stub_size;
  KIMI_ASSIGN_OR_RETURN(std::vector<TextSegment> body, Segments(prompt, 0, stub_begin));
  KIMI_ASSIGN_OR_RETURN(std::vector<TextSegment> stub, Segments(prompt, stub_begin, prompt.text.size()));
  PromptIds out;
  KIMI_RETURN_IF_ERROR(tokenizer.EncodeSegmentsAppend(body, &out.ids));
  out.prompt_tokens = out.ids.size();
  KIMI_RETURN_IF_ERROR(tokenizer.EncodeSegmentsAppend(stub, &out.ids));
  return out;
}

}  // namespace kimi
