// StreamDecoder: incremental detokenisation that never splits a UTF-8 character.
#include "kimi/tokenizer.h"
#include "kimi/tokenizer_utf8.h"

namespace kimi {

Status StreamDecoder::Push(int32_t id, std::string* text) {
  KIMI_ASSIGN_OR_RETURN(std::string_view bytes, tokenizer_.TokenBytes(id));
  if (tokenizer_.IsSpecial(id)) {
    Flush(text);
    text->append(bytes);
    return Status::OK();
  }
  pending_.append(bytes);
  size_t pos = 0;
  while (pos < pending_.size()) {
    const text::Utf8Step step = text::DecodeUtf8At(pending_, pos);
    if (step.kind == text::Utf8Kind::kTruncated) break;  // wait for the rest of the character
    if (step.kind == text::Utf8Kind::kComplete) {
      text->append(pending_, pos, step.length);
    } else {
      text->append("\xEF\xBF\xBD");
    }
    pos += step.length;
  }
  pending_.erase(0, pos);
  return Status::OK();
}

void StreamDecoder::Flush(std::string* text) {
  if (pending_.empty()) return;
  text->append(text::ReplaceInvalidUtf8(pending_));
  pending_.clear();
}

}  // namespace kimi
