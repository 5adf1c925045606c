// Tokenizer: loading, encoding and decoding. See kimi/tokenizer.h for the contract and
// docs/tokenizer.md for the format and the pre-tokeniser.
#include "kimi/tokenizer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <filesystem>
#include <span>
#include <unordered_map>

#include "kimi/special_token_text.h"
#include "kimi/tokenizer_utf8.h"
#include "text/piece_cache.h"
#include "text/pretokenizer.h"
#include "text/pretokenizer_classes.h"
#include "text/tokenizer_bpe.h"
#include "core/whole_file.h"
#include "text/tokenizer_ranks.h"
#include "text/tokenizer_special.h"

namespace kimi {

struct Tokenizer::State {
  text::RankTable ranks;
  std::vector<SpecialToken> specials;
  SpecialTextMatcher matcher;
  uint64_t instance_id;
  std::unique_ptr<text::PieceCache> pieces = std::make_unique<text::PieceCache>();
};

namespace {

// tokenization_kimi.py hands tiktoken at most 400,000 code points at a time, and cuts
// inside a run of more than 25,000 whitespace (or non-whitespace) code points, Python's
// str.isspace() deciding which is which. The cuts change the pieces of such long inputs,
// so they are reproduced exactly.
constexpr size_t kMaxEncodeCodePoints = 400'000;
constexpr size_t kMaxConsecutiveRun = 25'000;

std::atomic<uint64_t> g_next_instance_id{1};

// The scan over code points; ForEachSlice skips it when the bytes show there is no cut.
template <typename F>
Status ForEachSliceExact(std::string_view text, F slice) {
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

// What a byte says about the Python-whitespace class of the code point it belongs to.
enum class ByteRunKind : uint8_t { kUnknown, kSpace, kOther };

// For each byte: kSpace (kOther) when every code point whose UTF-8 form starts with it is
// (is not) Python whitespace; kUnknown for continuation bytes, invalid bytes and lead bytes
// of planes beyond the class table's cheap range.
const std::array<ByteRunKind, 256>& ByteRunKinds() {
  static const std::array<ByteRunKind, 256> kinds = [] {
    const text::CharClasses& classes = text::CharClasses::Get();
    std::array<ByteRunKind, 256> out{};
    auto classify = [&classes](char32_t first, char32_t last) {
      bool any_space = false, any_other = false;
      for (char32_t c = first; c <= last; ++c) {
        ((classes.Of(c) & text::kClassPySpace) != 0 ? any_space : any_other) = true;
      }
      if (any_space != any_other) return any_space ? ByteRunKind::kSpace : ByteRunKind::kOther;
      return ByteRunKind::kUnknown;
    };
    for (char32_t b = 0; b < 0x80; ++b) out[b] = classify(b, b);
    for (char32_t b = 0xC2; b <= 0xDF; ++b) out[b] = classify((b & 0x1F) << 6, ((b & 0x1F) << 6) | 0x3F);
    for (char32_t b = 0xE0; b <= 0xEF; ++b) out[b] = classify((b & 0x0F) << 12, ((b & 0x0F) << 12) | 0xFFF);
    out[0xF0] = classify(0x10000, 0x3FFFF);
    return out;
  }();
  return kinds;
}

// True when ForEachSlice cannot cut text, decided from its bytes alone: text has at most
// kMaxEncodeCodePoints bytes, and no stretch of more than kMaxConsecutiveRun bytes lacks a
// byte of each kind. (A run of more than kMaxConsecutiveRun whitespace code points spans more
// bytes than that, none of them starting a non-whitespace code point; and the reverse.)
// False does not mean that there is a cut; the exact scan decides then.
bool NoSliceCutPossible(std::string_view text) {
  if (text.size() <= kMaxConsecutiveRun) return true;
  if (text.size() > kMaxEncodeCodePoints) return false;
  const std::array<ByteRunKind, 256>& kinds = ByteRunKinds();
  size_t since_space = 0;  // bytes since the last one that starts a whitespace code point
  size_t since_other = 0;  // ... a non-whitespace code point
  for (char c : text) {
    const ByteRunKind kind = kinds[static_cast<uint8_t>(c)];
    since_space = kind == ByteRunKind::kSpace ? 0 : since_space + 1;
    since_other = kind == ByteRunKind::kOther ? 0 : since_other + 1;
    if (std::max(since_space, since_other) > kMaxConsecutiveRun) return false;
  }
  return true;
}

// Calls slice(sub) for each slice of text cut the way tokenization_kimi.py cuts it.
// Precondition: text is valid UTF-8.
template <typename F>
Status ForEachSlice(std::string_view text, F slice) {
  if (NoSliceCutPossible(text)) return slice(text);
  return ForEachSliceExact(text, slice);
}

void EncodeOrdinary(const text::RankTable& ranks, text::PieceCache& cache, std::string_view text,
                    std::vector<int32_t>* ids) {
  thread_local std::vector<std::string_view> pieces;
  pieces.clear();
  text::PreTokenize(text, &pieces);
  for (std::string_view piece : pieces) {
    const int32_t whole = ranks.Find(piece);
    if (whole != text::RankTable::kAbsent) {
      ids->push_back(whole);
      continue;
    }
    if (cache.AppendCached(piece, ids)) continue;
    const size_t first = ids->size();
    text::BytePairEncode(ranks, piece, ids);
    cache.Insert(piece, std::span<const int32_t>(ids->data() + first, ids->size() - first));
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
  SpecialTextMatcher matcher(specials);
  auto state = std::make_shared<State>(State{std::move(ranks), std::move(specials), std::move(matcher),
                                             g_next_instance_id.fetch_add(1)});
  return Tokenizer(std::move(state));
}

Result<Tokenizer> Tokenizer::LoadFiles(const std::string& tiktoken_path, const std::string& config_path) {
  KIMI_ASSIGN_OR_RETURN(std::string ranks, ReadWholeFile(tiktoken_path));
  std::string config;
  if (!config_path.empty()) {
    KIMI_ASSIGN_OR_RETURN(config, ReadWholeFile(config_path));
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

// A byte range [begin, end) of the text being encoded.
struct ByteRange {
  size_t begin;
  size_t end;
};

// Encodes text, recognising special tokens only when a match lies wholly inside one of the
// `allowed` ranges (ascending, disjoint); the search looks only where such a match may start.
// Slices are cut first and searched one by one, as the reference tokenizer does, so a
// special-token text across a cut stays ordinary text.
Status EncodeWithSpecials(const text::RankTable& ranks, text::PieceCache& cache, const SpecialTextMatcher& matcher,
                          std::string_view text, std::span<const ByteRange> allowed, std::vector<int32_t>* ids) {
  KIMI_RETURN_IF_ERROR(text::ValidateUtf8(text));
  const size_t initial_size = ids->size();
  size_t range = 0;  // the first allowed range that ends after the search position
  Status status = ForEachSlice(text, [&](std::string_view slice) -> Status {
    const size_t slice_offset = static_cast<size_t>(slice.data() - text.data());
    // The leftmost allowed match starting at or after search, as a slice offset.
    auto next_allowed = [&](size_t search) -> SpecialTextMatch {
      while (search < slice.size()) {
        const size_t at = slice_offset + search;
        while (range < allowed.size() && allowed[range].end <= at) ++range;
        if (range == allowed.size()) break;
        const ByteRange& r = allowed[range];
        const size_t from = std::max(at, r.begin) - slice_offset;
        const size_t until = std::min(r.end - slice_offset, slice.size());
        if (from >= until) break;  // the range starts beyond this slice
        const SpecialTextMatch match = matcher.FindNext(slice, from, until);
        if (match.position == std::string_view::npos) {
          search = until;
        } else if (slice_offset + match.position + match.length <= r.end) {
          return match;
        } else {
          search = match.position + 1;  // runs past its range: ordinary text, look further
        }
      }
      return {std::string_view::npos, 0, -1};
    };
    size_t pos = 0;  // next byte of the slice to encode
    while (pos < slice.size()) {
      const SpecialTextMatch match = next_allowed(pos);
      const size_t ordinary_end = match.position == std::string_view::npos ? slice.size() : match.position;
      if (ordinary_end > pos) {
        EncodeOrdinary(ranks, cache, slice.substr(pos, ordinary_end - pos), ids);
      }
      if (match.position == std::string_view::npos) break;
      ids->push_back(match.id);
      pos = match.position + match.length;
    }
    return Status::OK();
  });
  if (!status.ok()) ids->resize(initial_size);
  return status;
}

}  // namespace

Status Tokenizer::EncodeAppend(std::string_view text, bool allow_special, std::vector<int32_t>* ids) const {
  const State& s = *state_;
  const ByteRange whole{0, text.size()};
  return EncodeWithSpecials(s.ranks, *s.pieces, s.matcher, text,
                            allow_special ? std::span<const ByteRange>(&whole, 1) : std::span<const ByteRange>(), ids);
}

Status Tokenizer::EncodeSegmentsAppend(std::span<const TextSegment> segments, std::vector<int32_t>* ids) const {
  // Segments cut from one string (a rendered prompt's are) are encoded where they lie;
  // others are joined into a copy first.
  bool contiguous = true;
  for (size_t i = 1; i < segments.size() && contiguous; ++i) {
    contiguous = segments[i].text.data() == segments[i - 1].text.data() + segments[i - 1].text.size();
  }
  std::string joined;
  std::vector<ByteRange> allowed_ranges;  // ascending
  size_t size = 0;
  for (const TextSegment& segment : segments) {
    if (segment.allow_special && !segment.text.empty()) {
      allowed_ranges.push_back({size, size + segment.text.size()});
    }
    if (!contiguous) joined.append(segment.text);
    size += segment.text.size();
  }
  std::string_view text = joined;
  if (contiguous && !segments.empty()) text = std::string_view(segments.front().text.data(), size);
  const State& s = *state_;
  return EncodeWithSpecials(s.ranks, *s.pieces, s.matcher, text, allowed_ranges, ids);
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

uint64_t Tokenizer::id() const { return state_->instance_id; }

}  // namespace kimi
