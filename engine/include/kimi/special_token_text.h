// The texts of special tokens inside a text: the tokenizer turns them into their tokens where a
// caller allows it (Tokenizer::Encode with allow_special), and the appliance refuses them in a
// body bound for an upstream server, whose tokenizer would turn them into tokens unasked.
//
// Thread safety: a SpecialTextMatcher is immutable after construction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/tokenizer.h"

namespace kimi {

// The name tokenization_kimi.py gives a special id that tokenizer_config.json leaves unnamed:
// "<|reserved_token_ID|>", with the absolute id.
std::string ReservedSpecialTokenName(int32_t id);

struct SpecialTextMatch {
  size_t position;  // byte offset of the text found; npos when none
  size_t length;
  int32_t id;       // the table entry's id; -1 when none

  bool found() const { return position != std::string_view::npos; }
};

class SpecialTextMatcher {
 public:
  // Preconditions: no text is empty and no two entries share a text.
  explicit SpecialTextMatcher(const std::vector<SpecialToken>& table);

  // The leftmost entry's text inside `text` that starts in [from, until); at one position the
  // longest text wins, and it may end anywhere in `text`. A search walks a byte trie only from
  // bytes that begin some text, for at most the longest text's length.
  SpecialTextMatch FindNext(std::string_view text, size_t from = 0,
                            size_t until = std::string_view::npos) const;
  // The id of exactly this text, or -1.
  int32_t Find(std::string_view text) const;

 private:
  static constexpr int32_t kNone = -1;
  // The trie over byte classes: bytes that occur in no text are class 0, which leads nowhere.
  // State s's successor on class c is next_[s * classes_ + c]; state 0 is the empty prefix.
  uint8_t class_of_[256] = {};
  size_t classes_ = 1;
  std::vector<int32_t> next_;
  std::vector<int32_t> id_of_;  // per state: the id of the text it completes, or kNone
  bool starts_[256] = {};       // bytes that begin some text
};

}  // namespace kimi
