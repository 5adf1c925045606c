#include "kimi/tokenizer_utf8.h"

namespace kimi::text {
Status ValidateUtf8(std::string_view text) {
  size_t pos = 0;
  const size_t n = text.size();
  while (pos < n) {
    // ASCII runs are the common case; skip them eight bytes at a time.
    while (pos + 8 <= n) {
      uint64_t word;
      __builtin_memcpy(&word, text.data() + pos, 8);
      if (word & 0x8080808080808080ull) break;
      pos += 8;
    }
    if (pos >= n) break;
    const Utf8Step step = DecodeUtf8At(text, pos);
    if (step.kind != Utf8Kind::kComplete) {
      return Status::InvalidArgument("text is not valid UTF-8: bad byte sequence at offset " +
                                     std::to_string(pos));
    }
    pos += step.length;
  }
  return Status::OK();
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string ReplaceInvalidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    const Utf8Step step = DecodeUtf8At(bytes, pos);
    if (step.kind == Utf8Kind::kComplete) {
      out.append(bytes.substr(pos, step.length));
    } else {
      out.append("\xEF\xBF\xBD");
    }
    pos += step.length;
  }
  return out;
}

}  // namespace kimi::text
