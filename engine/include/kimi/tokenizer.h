// Kimi's tokenizer: tiktoken-format byte-level BPE ranks, Kimi's pre-tokeniser, and the table
// of 256 special tokens that follows the ranks. Text in, token ids out, and back.
//
// Encode(Decode(ids)) is not promised (several id sequences spell the same text), but
// Decode(Encode(text)) == text for every valid UTF-8 text. Invalid UTF-8 is an
// InvalidArgument error. Special tokens are recognised in text only when the caller allows
// it; otherwise "<|open|>" typed by a user is ordinary text.
//
// The special-token table is read from the model's tokenizer_config.json
// (`added_tokens_decoder`); ids it does not name are "<|reserved_token_ID|>", as Moonshot's
// tokenization_kimi.py names them. Without a config, K3's table is used (see k3:: below).
//
// Thread safety: a Tokenizer is immutable after loading; copies share the loaded state and
// every const method may be called from any number of threads. Encode keeps a small cache of
// recently encoded pieces per thread. A StreamDecoder is a per-stream object: one thread at
// a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi {

// The special tokens of Kimi K3, at these offsets from the number of ordinary tokens
// (163,584 with the real ranks: [BOS] is 163584, <|open|> 163587, [PAD] 163839).
namespace k3 {
inline constexpr std::string_view kBos = "[BOS]";
inline constexpr std::string_view kEos = "[EOS]";
inline constexpr std::string_view kEndOfMessage = "<|end_of_msg|>";
inline constexpr std::string_view kOpen = "<|open|>";
inline constexpr std::string_view kClose = "<|close|>";
inline constexpr std::string_view kSep = "<|sep|>";
inline constexpr std::string_view kUnk = "[UNK]";
inline constexpr std::string_view kPad = "[PAD]";
inline constexpr int32_t kBosOffset = 0, kEosOffset = 1, kEndOfMessageOffset = 2, kOpenOffset = 3,
                         kCloseOffset = 4, kSepOffset = 5, kUnkOffset = 254, kPadOffset = 255;
}  // namespace k3

struct SpecialToken {
  int32_t id;
  std::string text;
};

// A part of a text to encode, and whether special-token texts inside it are special.
struct TextSegment {
  std::string_view text;
  bool allow_special;
};

class Tokenizer {
 public:
  static constexpr int32_t kNumSpecialTokens = 256;

  // dir/tiktoken.model, with dir/tokenizer_config.json when the directory has one.
  static Result<Tokenizer> LoadDirectory(const std::string& dir);
  // config_path may be empty: K3's table is used.
  static Result<Tokenizer> LoadFiles(const std::string& tiktoken_path, const std::string& config_path);
  // The same from file contents; config_json may be empty.
  static Result<Tokenizer> FromContents(std::string_view tiktoken_text, std::string_view config_json);

  // K3's table for a vocabulary of num_base_tokens ordinary tokens: all 256 entries.
  static std::vector<SpecialToken> K3SpecialTokens(int32_t num_base_tokens);

  // Token ids of text. With allow_special, exact occurrences of special-token texts become
  // their ids; without, they are encoded as the ordinary text they are.
  // Errors: InvalidArgument when text is not valid UTF-8.
  Result<std::vector<int32_t>> Encode(std::string_view text, bool allow_special) const;
  // As Encode, appending to *ids. On error *ids is unchanged.
  Status EncodeAppend(std::string_view text, bool allow_special, std::vector<int32_t>* ids) const;

  // Encodes the concatenation of the segments as one text (pieces and merges run across
  // segment boundaries, exactly as Encode of the joined text), but recognises special tokens
  // only inside segments that allow them: a rendered prompt passes its markup with
  // allow_special and the users' content without, so typed "<|open|>" stays text. When no
  // disallowed segment contains a special-token text, the ids equal
  // Encode(joined, /*allow_special=*/true). Errors: as Encode.
  Result<std::vector<int32_t>> EncodeSegments(std::span<const TextSegment> segments) const;
  Status EncodeSegmentsAppend(std::span<const TextSegment> segments, std::vector<int32_t>* ids) const;

  // The bytes the ids spell; special tokens as their text. The result is valid UTF-8 when the
  // ids came from Encode; an arbitrary id sequence may end inside a character (use
  // StreamDecoder to show text). Errors: InvalidArgument for an id outside the vocabulary.
  Result<std::string> Decode(std::span<const int32_t> ids) const;

  // The bytes of one ordinary token, or the text of a special one.
  Result<std::string_view> TokenBytes(int32_t id) const;

  int32_t num_base_tokens() const;                        // ordinary tokens (ranks)
  int32_t vocab_size() const;                             // num_base_tokens() + 256
  bool IsSpecial(int32_t id) const;
  std::optional<int32_t> SpecialTokenId(std::string_view text) const;
  const std::vector<SpecialToken>& special_tokens() const;  // ascending ids, all 256
  // Names the loaded vocabulary: copies of a Tokenizer share it, two loads never do (not
  // even of the same files), so ids made by one can be recognised as its own.
  uint64_t id() const;

 private:
  struct State;
  explicit Tokenizer(std::shared_ptr<const State> state) : state_(std::move(state)) {}

  std::shared_ptr<const State> state_;
};

// Turns generated token ids into text one token at a time without ever emitting part of a
// UTF-8 character: bytes of an unfinished character wait for the next token. Bytes that can
// never form a character become U+FFFD (one per maximal invalid subpart).
class StreamDecoder {
 public:
  explicit StreamDecoder(Tokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}

  // Appends to *text whatever is complete after id. A special token first flushes pending
  // bytes (they can no longer complete), then appends its text.
  // Errors: InvalidArgument for an id outside the vocabulary (nothing is appended).
  Status Push(int32_t id, std::string* text);
  // Appends pending bytes as U+FFFD; call at the end of the stream.
  void Flush(std::string* text);
  size_t pending_bytes() const { return pending_.size(); }

 private:
  Tokenizer tokenizer_;
  std::string pending_;
};

}  // namespace kimi
