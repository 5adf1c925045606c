#include "text/tokenizer_ranks.h"

#include <charconv>
#include <cstring>

namespace kimi::text {
namespace {

// The n bytes at p as a little-endian word, zero-padded; the first 8 when n >= 8.
uint64_t LoadPadded(const char* p, size_t n) {
  if (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  // Two overlapping loads agree on the bytes they share, so OR-ing them in place gives the n
  // bytes zero-padded, without a variable-length memcpy.
  if (n >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    return uint64_t{lo} | (uint64_t{hi} << ((n - 4) * 8));
  }
  if (n == 0) return 0;
  const auto* b = reinterpret_cast<const uint8_t*>(p);
  return uint64_t{b[0]} | (uint64_t{b[n / 2]} << (n / 2 * 8)) | (uint64_t{b[n - 1]} << ((n - 1) * 8));
}

uint64_t HashBytes(std::string_view s) {
  // A multiply-rotate hash over 8-byte words: pieces are short, so speed matters more than
  // resistance to crafted collisions (the table is fixed; inputs only probe it).
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0x243F6A8885A308D3ull ^ (s.size() * kMul);
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    h = (h ^ LoadPadded(s.data() + i, 8)) * kMul;
    h ^= h >> 29;
  }
  if (i < s.size()) {
    h = (h ^ LoadPadded(s.data() + i, s.size() - i)) * kMul;
    h ^= h >> 29;
  }
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return h;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest == 1) {
    const uint32_t v = uint8_t(bytes[i]) << 16;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (rest == 2) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return Status::InvalidArgument("base64 length is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return Status::InvalidArgument("base64 padding in the middle");
      v[k] = Base64Value(c);
      if (v[k] < 0) return Status::InvalidArgument("bad base64 character");
    }
    const uint32_t w = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>(w >> 16);
    if (pad < 2) out += static_cast<char>((w >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(w & 0xFF);
  }
  return out;
}

Result<RankTable> RankTable::ParseTiktoken(std::string_view text) {
  std::vector<std::string> tokens;
  std::vector<bool> seen;
  size_t line_start = 0;
  int line_number = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    ++line_number;

    size_t a = 0;
    while (a < line.size() && IsSpace(line[a])) ++a;
    if (a == line.size()) continue;  // blank lines are skipped, as tiktoken does
    size_t b = a;
    while (b < line.size() && !IsSpace(line[b])) ++b;
    size_t c = b;
    while (c < line.size() && IsSpace(line[c])) ++c;
    size_t d = c;
    while (d < line.size() && !IsSpace(line[d])) ++d;
    size_t e = d;
    while (e < line.size() && IsSpace(line[e])) ++e;
    const std::string where = "tiktoken line " + std::to_string(line_number);
    if (c == b || d == c || e != line.size()) {
      return Status::Corruption(where + ": expected \"base64 rank\"");
    }

    auto bytes = Base64Decode(line.substr(a, b - a));
    if (!bytes.ok()) return bytes.status().WithContext(where);
    if (bytes->empty()) return Status::Corruption(where + ": empty token");
    int64_t rank = -1;
    const auto [ptr, ec] = std::from_chars(line.data() + c, line.data() + d, rank);
    if (ec != std::errc() || ptr != line.data() + d || rank < 0 || rank >= (1 << 30)) {
      return Status::Corruption(where + ": bad rank");
    }
    if (static_cast<size_t>(rank) >= tokens.size()) {
      tokens.resize(rank + 1);
      seen.resize(rank + 1, false);
    }
    if (seen[rank]) return Status::Corruption(where + ": rank " + std::to_string(rank) + " repeated");
    seen[rank] = true;
    tokens[rank] = std::move(bytes).value();
  }
  for (size_t r = 0; r < seen.size(); ++r) {
    if (!seen[r]) return Status::Corruption("tiktoken ranks are not contiguous: rank " + std::to_string(r) + " missing");
  }
  return FromTokens(std::move(tokens));
}

Result<RankTable> RankTable::FromTokens(std::vector<std::string> tokens) {
  RankTable table;
  size_t total = 0;
  for (const auto& t : tokens) total += t.size();
  if (total >= (1ull << 32)) return Status::InvalidArgument("rank table too large");
  table.arena_.reserve(total);
  table.offsets_.reserve(tokens.size() + 1);
  for (const auto& t : tokens) {
    table.offsets_.push_back(static_cast<uint32_t>(table.arena_.size()));
    table.arena_ += t;
  }
  table.offsets_.push_back(static_cast<uint32_t>(table.arena_.size()));
  KIMI_RETURN_IF_ERROR(table.Build());
  return table;
}

Status RankTable::Build() {
  const int32_t n = size();
  // Load factor at most 3/4: short probe runs without doubling the memory a probe walks.
  size_t capacity = 16;
  while (capacity * 3 < static_cast<size_t>(n) * 4) capacity <<= 1;
  slots_.assign(capacity, Slot{0, kAbsent, 0, 0});
  mask_ = capacity - 1;
  for (int32_t rank = 0; rank < n; ++rank) {
    const std::string_view bytes = Bytes(rank);
    if (bytes.empty()) return Status::Corruption("empty token at rank " + std::to_string(rank));
    const int32_t other = Find(bytes);
    if (other != kAbsent) {
      return Status::Corruption("token bytes repeated at ranks " + std::to_string(other) + " and " +
                                std::to_string(rank));
    }
    if (bytes.size() > kMaxTokenBytes) {
      return Status::Corruption("token at rank " + std::to_string(rank) + " is longer than " +
                                std::to_string(kMaxTokenBytes) + " bytes");
    }
    const uint64_t h = HashBytes(bytes);
    uint64_t i = h & mask_;
    while (slots_[i].rank != kAbsent) i = (i + 1) & mask_;
    slots_[i] = Slot{LoadPadded(bytes.data(), bytes.size()), rank, static_cast<uint16_t>(h >> 48),
                     static_cast<uint16_t>(bytes.size())};
  }
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    byte_rank_[b] = Find(std::string_view(&c, 1));
    if (byte_rank_[b] == kAbsent) {
      return Status::Corruption("byte-level BPE needs every single byte; byte " + std::to_string(b) +
                                " has no rank");
    }
  }
  two_byte_rank_.assign(65536, kAbsent);
  for (int32_t rank = 0; rank < n; ++rank) {
    const std::string_view bytes = Bytes(rank);
    if (bytes.size() == 2) two_byte_rank_[(uint8_t(bytes[0]) << 8) | uint8_t(bytes[1])] = rank;
  }
  return Status::OK();
}

int32_t RankTable::Find(std::string_view bytes) const {
  if (bytes.size() > kMaxTokenBytes) return kAbsent;
  const uint64_t h = HashBytes(bytes);
  const auto tag = static_cast<uint16_t>(h >> 48);
  const auto length = static_cast<uint16_t>(bytes.size());
  const uint64_t head = LoadPadded(bytes.data(), bytes.size());
  for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.rank == kAbsent) return kAbsent;
    if (slot.head == head && slot.tag == tag && slot.length == length &&
        (length <= 8 || std::memcmp(arena_.data() + offsets_[slot.rank] + 8, bytes.data() + 8, length - 8) == 0)) {
      return slot.rank;
    }
  }
}

std::string RankTable::ToTiktoken() const {
  std::string out;
  for (int32_t rank = 0; rank < size(); ++rank) {
    out += Base64Encode(Bytes(rank));
    out += ' ';
    out += std::to_string(rank);
    out += '\n';
  }
  return out;
}

}  // namespace kimi::text
