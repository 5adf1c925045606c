// Tokenizer: loading, encoding and decoding. See kimi/tokenizer.h for the contract and
// docs/tokenizer.md for the format and the pre-tokeniser.
#include "kimi/tokenizer.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <filesystem>
#include <unordered_map>

#include "text/pretokenizer.h"
#include "text/pretokenizer_classes.h"
#include "text/tokenizer_bpe.h"
#include "text/tokenizer_files.h"
#include "text/tokenizer_ranks.h"
#include "text/tokenizer_special.h"
#include "text/tokenizer_utf8.h"

namespace kimi {

struct Tokenizer::State {
  text::RankTable ranks;
  std::vector<SpecialToken> specials;
  text::SpecialMatcher matcher;
  uint64_t instance_id;  // tells the per-thread piece caches of two tokenizers apart
};

namespace {

// tokenization_kimi.py hands tiktoken at most 400,000 code points at a time, and cuts
// inside a run of more than 25,000 whitespace (or non-whitespace) code points, Python's
// str.isspace() deciding which is which. The cuts change the pieces of such long inputs,
// so they are reproduced exactly.
constexpr size_t kMaxEncodeCodePoints = 400'000;
constexpr size_t kMaxConsecutiveRun = 25'000;

std::atomic<uint64_t> g_next_instance_id{1};

// Calls slice(sub) for each slice of text cut the way tokenization_kimi.py cuts it.
// Precondition: text is valid UTF-8.
template <typename F>
Status ForEachSlice(std::string_view text, F slice) {
  // Fewer bytes than the smaller limit means fewer code points too: no cut is possible.
  if (text.size() <= kMaxConsecutiveRun) return slice(text);
  const text::CharClasses& classes = text::CharClasses::Get();
  size_t chunk_start = 0;     // byte offset of the current 400k-code-point chunk
  size_t chunk_count = 0;     // code points in it so far
  size_t slice_start = 0;
  size_t run_length = 0;
  bool run_is_space = false;
  size_t pos = 0;
  while (pos < text.size()) {
    if (chunk_count == kMaxEncodeCodePoints) {
      KIMI_RETURN_IF_ERROR(slice(text.substr(slice_start, pos - slice_start)));
      chunk_start = slice_start = pos;
      chunk_count = 0;
    }
    const auto byte = static_cast<uint8_t>(text[pos]);
    bool is_space;
    int length = 1;
    if (byte < 0x80) {
      is_space = (classes.Of(byte) & text::kClassPySpace) != 0;
    } else {
      const text::Utf8Step step = text::DecodeUtf8At(text, pos);
      is_space = (classes.Of(step.code_point) & text::kClassPySpace) != 0;
      length = step.length;
    }
    if (pos == chunk_start) {
      run_is_space = is_space;
      run_length = 1;
    } else if (is_space != run_is_space) {
      run_is_space = is_space;
      run_length = 1;
    } else if (++run_length > kMaxConsecutiveRun) {
      KIMI_RETURN_IF_ERROR(slice(text.substr(slice_start, pos - slice_start)));
      slice_start = pos;
      run_length = 1;
    }
    ++chunk_count;
    pos += length;
  }
  return slice(text.substr(slice_start));
}

// Recently encoded multi-token pieces, per thread, for the tokenizer that used it last.
struct PieceCache {
  static constexpr size_t kMaxEntries = 1 << 15;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  uint64_t owner = 0;
  std::unordered_map<std::string, std::vector<int32_t>, Hash, std::equal_to<>> entries;
};

void EncodeOrdinary(const text::RankTable& ranks, uint64_t instance_id, std::string_view text,
                    std::vector<int32_t>* ids) {
  thread_local std::vector<std::string_view> pieces;
  thread_local PieceCache cache;
  if (cache.owner != instance_id) {
    cache.entries.clear();
    cache.owner = instance_id;
  }
  pieces.clear();
  text::PreTokenize(text, &pieces);
  for (std::string_view piece : pieces) {
    const int32_t whole = ranks.Find(piece);
    if (whole != text::RankTable::kAbsent) {
      ids->push_back(whole);
      continue;
    }
    auto hit = cache.entries.find(piece);
    if (hit != cache.entries.end()) {
      ids->insert(ids->end(), hit->second.begin(), hit->second.end());
      continue;
    }
    const size_t first = ids->size();
    text::BytePairEncode(ranks, piece, ids);
    if (cache.entries.size() >= PieceCache::kMaxEntries) cache.entries.clear();
    cache.entries.emplace(std::string(piece), std::vector<int32_t>(ids->begin() + first, ids->end()));
  }
}

}  // namespace

Result<Tokenizer> Tokenizer::FromContents(std::string_view tiktoken_text, std::string_view config_json) {
  KIMI_ASSIGN_OR_RETURN(text::RankTable ranks, text::RankTable::ParseTiktoken(tiktoken_text));
  std::vector<SpecialToken> specials;
  if (config_json.empty()) {
    specials = K3SpecialTokens(ranks.size());
  } else {
    KIMI_ASSIGN_OR_RETURN(specials, text::ParseAddedTokensDecoder(config_json, ranks.size()));
  }
  text::SpecialMatcher matcher(specials);
  auto state = std::make_shared<State>(State{std::move(ranks), std::move(specials), std::move(matcher),
                                             g_next_instance_id.fetch_add(1)});
  return Tokenizer(std::move(state));
}

Result<Tokenizer> Tokenizer::LoadFiles(const std::string& tiktoken_path, const std::string& config_path) {
  KIMI_ASSIGN_OR_RETURN(std::string ranks, text::ReadWholeFile(tiktoken_path));
  std::string config;
  if (!config_path.empty()) {
    KIMI_ASSIGN_OR_RETURN(config, text::ReadWholeFile(config_path));
  }
  auto tokenizer = FromContents(ranks, config);
  if (!tokenizer.ok()) return tokenizer.status().WithContext(tiktoken_path);
  return tokenizer;
}

Result<Tokenizer> Tokenizer::LoadDirectory(const std::string& dir) {
  const std::filesystem::path base(dir);
  const std::filesystem::path config = base / "tokenizer_config.json";
  std::error_code ec;
  const bool has_config = std::filesystem::is_regular_file(config, ec);
  return LoadFiles((base / "tiktoken.model").string(), has_config ? config.string() : std::string());
}

std::vector<SpecialToken> Tokenizer::K3SpecialTokens(int32_t num_base_tokens) {
  const int32_t b = num_base_tokens;
  return text::CompleteSpecialTable({{b + k3::kBosOffset, std::string(k3::kBos)},
                                     {b + k3::kEosOffset, std::string(k3::kEos)},
                                     {b + k3::kEndOfMessageOffset, std::string(k3::kEndOfMessage)},
                                     {b + k3::kOpenOffset, std::string(k3::kOpen)},
                                     {b + k3::kCloseOffset, std::string(k3::kClose)},
                                     {b + k3::kSepOffset, std::string(k3::kSep)},
                                     {b + k3::kUnkOffset, std::string(k3::kUnk)},
                                     {b + k3::kPadOffset, std::string(k3::kPad)}},
                                    num_base_tokens);
}

namespace {

// Encodes text, recognising special tokens only where allowed(begin, end) says a match may
// lie (byte offsets into text). Slices are cut first and searched one by one, as the
// reference tokenizer does, so a special-token text across a cut stays ordinary text.
template <typename AllowedAt>
Status EncodeWithSpecials(const text::RankTable& ranks, uint64_t instance_id, const text::SpecialMatcher& matcher,
                          std::string_view text, AllowedAt allowed, std::vector<int32_t>* ids) {
  KIMI_RETURN_IF_ERROR(text::ValidateUtf8(text));
  const size_t initial_size = ids->size();
  Status status = ForEachSlice(text, [&](std::string_view slice) -> Status {
    const size_t slice_offset = static_cast<size_t>(slice.data() - text.data());
    size_t pos = 0;       // next byte of the slice to encode
    size_t search = 0;    // where to look for the next special-token text
    while (pos < slice.size()) {
      text::SpecialMatch match{std::string_view::npos, 0, -1};
      while (search < slice.size()) {
        match = matcher.FindNext(slice, search);
        if (match.position == std::string_view::npos) break;
        if (allowed(slice_offset + match.position, slice_offset + match.position + match.length)) break;
        search = match.position + 1;  // not allowed here: ordinary text, look further
        match.position = std::string_view::npos;
      }
      const size_t ordinary_end = match.position == std::string_view::npos ? slice.size() : match.position;
      if (ordinary_end > pos) {
        EncodeOrdinary(ranks, instance_id, slice.substr(pos, ordinary_end - pos), ids);
      }
      if (match.position == std::string_view::npos) break;
      ids->push_back(match.id);
      pos = search = match.position + match.length;
    }
    return Status::OK();
  });
  if (!status.ok()) ids->resize(initial_size);
  return status;
}

}  // namespace

Status Tokenizer::EncodeAppend(std::string_view text, bool allow_special, std::vector<int32_t>* ids) const {
  const State& s = *state_;
  return EncodeWithSpecials(s.ranks, s.instance_id, s.matcher, text,
                            [allow_special](size_t, size_t) { return allow_special; }, ids);
}

Status Tokenizer::EncodeSegmentsAppend(std::span<const TextSegment> segments, std::vector<int32_t>* ids) const {
  std::string joined;
  std::vector<std::pair<size_t, size_t>> allowed_ranges;  // [begin, end), ascending
  for (const TextSegment& segment : segments) {
    if (segment.allow_special && !segment.text.empty()) {
      allowed_ranges.emplace_back(joined.size(), joined.size() + segment.text.size());
    }
    joined.append(segment.text);
  }
  auto allowed = [&allowed_ranges](size_t begin, size_t end) {
    auto it = std::upper_bound(allowed_ranges.begin(), allowed_ranges.end(), std::make_pair(begin, SIZE_MAX));
    if (it == allowed_ranges.begin()) return false;
    --it;
    return begin >= it->first && end <= it->second;
  };
  const State& s = *state_;
  return EncodeWithSpecials(s.ranks, s.instance_id, s.matcher, joined, allowed, ids);
}

Result<std::vector<int32_t>> Tokenizer::EncodeSegments(std::span<const TextSegment> segments) const {
  std::vector<int32_t> ids;
  KIMI_RETURN_IF_ERROR(EncodeSegmentsAppend(segments, &ids));
  return ids;
}

Result<std::vector<int32_t>> Tokenizer::Encode(std::string_view text, bool allow_special) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  KIMI_RETURN_IF_ERROR(EncodeAppend(text, allow_special, &ids));
  return ids;
}

Result<std::string_view> Tokenizer::TokenBytes(int32_t id) const {
  const State& state = *state_;
  const int32_t base = state.ranks.size();
  if (id >= 0 && id < base) return state.ranks.Bytes(id);
  if (id >= base && id < base + kNumSpecialTokens) return std::string_view(state.specials[id - base].text);
  return Status::InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary of " +
                                 std::to_string(base + kNumSpecialTokens));
}

Result<std::string> Tokenizer::Decode(std::span<const int32_t> ids) const {
  const State& state = *state_;
  const int32_t base = state.ranks.size();
  std::string out;
  out.reserve(ids.size() * 4);
  for (int32_t id : ids) {
    if (id >= 0 && id < base) {
      out.append(state.ranks.Bytes(id));
    } else {
      KIMI_ASSIGN_OR_RETURN(std::string_view bytes, TokenBytes(id));  // special, or the error
      out.append(bytes);
    }
  }
  return out;
}

int32_t Tokenizer::num_base_tokens() const { return state_->ranks.size(); }
int32_t Tokenizer::vocab_size() const { return state_->ranks.size() + kNumSpecialTokens; }

bool Tokenizer::IsSpecial(int32_t id) const {
  return id >= num_base_tokens() && id < vocab_size();
}

std::optional<int32_t> Tokenizer::SpecialTokenId(std::string_view text) const {
  const int32_t id = state_->matcher.Find(text);
  if (id < 0) return std::nullopt;
  return id;
}

const std::vector<SpecialToken>& Tokenizer::special_tokens() const { return state_->specials; }

}  // namespace kimi
