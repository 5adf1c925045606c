#include "kimi/special_token_text.h"

#include <algorithm>

namespace kimi {

std::string ReservedSpecialTokenName(int32_t id) { return "<|reserved_token_" + std::to_string(id) + "|>"; }

SpecialTextMatcher::SpecialTextMatcher(const std::vector<SpecialToken>& table) {
  for (const SpecialToken& token : table) {
    for (unsigned char byte : token.text) {
      if (class_of_[byte] == 0) class_of_[byte] = static_cast<uint8_t>(classes_++);
    }
  }
  next_.assign(classes_, kNone);
  id_of_.assign(1, kNone);
  for (const SpecialToken& token : table) {
    size_t state = 0;
    for (unsigned char byte : token.text) {
      const size_t edge = state * classes_ + class_of_[byte];
      if (next_[edge] == kNone) {
        next_[edge] = static_cast<int32_t>(id_of_.size());
        id_of_.push_back(kNone);
        next_.resize(next_.size() + classes_, kNone);
      }
      state = static_cast<size_t>(next_[edge]);
    }
    id_of_[state] = token.id;
    if (!token.text.empty()) starts_[static_cast<unsigned char>(token.text[0])] = true;
  }
}

int32_t SpecialTextMatcher::Find(std::string_view text) const {
  size_t state = 0;
  for (unsigned char byte : text) {
    const int32_t successor = next_[state * classes_ + class_of_[byte]];
    if (successor == kNone) return -1;
    state = static_cast<size_t>(successor);
  }
  return id_of_[state] == kNone ? -1 : id_of_[state];
}

SpecialTextMatch SpecialTextMatcher::FindNext(std::string_view text, size_t from, size_t until) const {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const size_t last = std::min(until, text.size());
  for (size_t position = from; position < last; ++position) {
    if (!starts_[bytes[position]]) continue;
    SpecialTextMatch longest{std::string_view::npos, 0, -1};
    size_t state = 0;
    for (size_t end = position; end < text.size(); ++end) {
      const int32_t successor = next_[state * classes_ + class_of_[bytes[end]]];
      if (successor == kNone) break;
      state = static_cast<size_t>(successor);
      if (id_of_[state] != kNone) longest = {position, end + 1 - position, id_of_[state]};
    }
    if (longest.found()) return longest;
  }
  return {std::string_view::npos, 0, -1};
}

}  // namespace kimi
