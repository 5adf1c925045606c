#include "structured/char_class.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

namespace kimi::structured {
namespace {

constexpr char32_t kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF, kMaxCodePoint = 0x10FFFF;

int Utf8Length(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

void EncodeUtf8(char32_t c, uint8_t out[4]) {
  const int n = Utf8Length(c);
  if (n == 1) {
    out[0] = static_cast<uint8_t>(c);
    return;
  }
  static constexpr uint8_t kLead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
  for (int i = n - 1; i > 0; --i) {
    out[i] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    c >>= 6;
  }
  out[0] = static_cast<uint8_t>(kLead[n] | c);
}

// Clips a range to the scalar values and hands out the pieces on either side of the surrogates.
template <typename Out>
void ForScalarPieces(char32_t lo, char32_t hi, Out out) {
  if (hi > kMaxCodePoint) hi = kMaxCodePoint;
  if (lo > hi) return;
  if (lo <= kSurrogateHi && hi >= kSurrogateLo) {
    if (lo < kSurrogateLo) out(lo, kSurrogateLo - 1);
    if (hi > kSurrogateHi) out(kSurrogateHi + 1, hi);
    return;
  }
  out(lo, hi);
}

// Sorted by lo (overlaps allowed) -> sorted, disjoint, non-adjacent, in place.
void Coalesce(std::vector<CodePointRange>* ranges) {
  size_t kept = 0;
  for (size_t i = 0; i < ranges->size(); ++i) {
    const CodePointRange r = (*ranges)[i];
    if (kept > 0 && r.lo <= (*ranges)[kept - 1].hi + 1) {
      (*ranges)[kept - 1].hi = std::max((*ranges)[kept - 1].hi, r.hi);
    } else {
      (*ranges)[kept++] = r;
    }
  }
  ranges->resize(kept);
}

// A sequence of byte ranges, one per byte of a character's spelling.
struct ByteRun {
  uint8_t lo[6], hi[6];
  int length = 0;
  void Push(uint8_t l, uint8_t h) {
    lo[length] = l;
    hi[length] = h;
    ++length;
  }
};

// The byte-range sequences that spell exactly the code points lo..hi. The range is split until
// every code point in a piece has the same length and the pieces differ only in trailing bytes
// that cover whole continuation ranges, so each piece is one sequence: equal single bytes, then
// at most one range, then whole continuation ranges. Pieces of disjoint code points therefore
// either share a byte or have disjoint ranges where they first differ.
void Utf8Runs(char32_t lo, char32_t hi, std::vector<ByteRun>* out) {
  if (lo > hi) return;
  static constexpr char32_t kLengthEnds[3] = {0x7F, 0x7FF, 0xFFFF};
  for (char32_t end : kLengthEnds) {
    if (lo <= end && hi > end) {
      Utf8Runs(lo, end, out);
      Utf8Runs(end + 1, hi, out);
      return;
    }
  }
  const int n = Utf8Length(lo);
  for (int i = 1; i < n; ++i) {
    const char32_t m = (char32_t(1) << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        Utf8Runs(lo, lo | m, out);
        Utf8Runs((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        Utf8Runs(lo, (hi & ~m) - 1, out);
        Utf8Runs(hi & ~m, hi, out);
        return;
      }
    }
  }
  uint8_t a[4], b[4];
  EncodeUtf8(lo, a);
  EncodeUtf8(hi, b);
  ByteRun run;
  for (int i = 0; i < n; ++i) run.Push(a[i], b[i]);
  out->push_back(run);
}

ByteRun LiteralRun(std::string_view text) {
  ByteRun run;
  for (char c : text) run.Push(static_cast<uint8_t>(c), static_cast<uint8_t>(c));
  return run;
}

// The runs as a trie (a run's first differing byte range starts a new branch; equal single
// bytes share one), then its nodes merged bottom-up when they lead the same ways (byte sets to
// the same merged nodes): the minimal automaton of a finite language whose words all end at
// the same node.
CharBytes BuildCharBytes(const std::vector<ByteRun>& runs) {
  struct TrieEdge {
    uint8_t lo, hi;
    int32_t child;  // kEnd for the last byte
  };
  constexpr int32_t kEnd = -1;
  std::vector<std::vector<TrieEdge>> trie(1);  // node 0: the start
  for (const ByteRun& run : runs) {
    int32_t at = 0;
    for (int i = 0; i < run.length; ++i) {
      if (i + 1 == run.length) {
        trie[size_t(at)].push_back({run.lo[i], run.hi[i], kEnd});
        break;
      }
      int32_t next = -1;
      if (run.lo[i] == run.hi[i]) {
        for (const TrieEdge& e : trie[size_t(at)]) {
          if (e.child != kEnd && e.lo == run.lo[i] && e.hi == run.hi[i]) next = e.child;
        }
      }
      if (next < 0) {
        next = int32_t(trie.size());
        trie[size_t(at)].push_back({run.lo[i], run.hi[i], next});
        trie.emplace_back();
      }
      at = next;
    }
  }
  // Children are created after their parents: merge from the last node back. Merged ids:
  // 0 the start, 1 the end, 2.. the inner nodes.
  using Signature = std::vector<std::pair<int32_t, ByteSet>>;  // (merged child, bytes), by child
  auto signature = [&](const std::vector<TrieEdge>& edges, const std::vector<int32_t>& merged) {
    std::map<int32_t, ByteSet> by_child;
    for (const TrieEdge& e : edges) by_child[e.child == kEnd ? 1 : merged[size_t(e.child)]].AddRange(e.lo, e.hi);
    return Signature(by_child.begin(), by_child.end());
  };
  std::vector<int32_t> merged(trie.size(), -1);
  std::map<Signature, int32_t> ids;
  CharBytes out;
  for (size_t n = trie.size(); n-- > 1;) {
    Signature sig = signature(trie[n], merged);
    auto [it, fresh] = ids.try_emplace(sig, 2 + out.inner);
    if (fresh) {
      ++out.inner;
      for (const auto& [child, bytes] : sig) out.edges.push_back({it->second, bytes, child});
    }
    merged[n] = it->second;
  }
  for (const auto& [child, bytes] : signature(trie[0], merged)) out.edges.push_back({0, bytes, child});
  return out;
}

}  // namespace

CharClass CharClass::Of(char32_t lo, char32_t hi) {
  CharClass c;
  c.Add(lo, hi);
  return c;
}

CharClass CharClass::AnyChar() { return Of(0, kMaxCodePoint); }

CharClass CharClass::FromRanges(std::vector<CodePointRange> ranges) {
  CharClass c;
  c.ranges_.reserve(ranges.size() + 1);
  for (const CodePointRange& r : ranges) {
    ForScalarPieces(r.lo, r.hi, [&](char32_t lo, char32_t hi) { c.ranges_.push_back({lo, hi}); });
  }
  std::sort(c.ranges_.begin(), c.ranges_.end());
  Coalesce(&c.ranges_);
  return c;
}

void CharClass::Add(char32_t lo, char32_t hi) {
  ForScalarPieces(lo, hi, [this](char32_t l, char32_t h) {
    if (ranges_.empty() || l > ranges_.back().hi + 1) {  // past every range: appended
      ranges_.push_back({l, h});
      return;
    }
    // The first range that touches or follows [l, h], and the ranges it absorbs.
    auto first = std::lower_bound(ranges_.begin(), ranges_.end(), l,
                                  [](const CodePointRange& r, char32_t v) { return r.hi + 1 < v; });
    auto last = first;
    while (last != ranges_.end() && last->lo <= h + 1) ++last;
    if (first == last) {
      ranges_.insert(first, {l, h});
      return;
    }
    first->lo = std::min(first->lo, l);
    first->hi = std::max((last - 1)->hi, h);
    ranges_.erase(first + 1, last);
  });
}

void CharClass::Add(const CharClass& other) {
  std::vector<CodePointRange> both;
  both.reserve(ranges_.size() + other.ranges_.size());
  std::merge(ranges_.begin(), ranges_.end(), other.ranges_.begin(), other.ranges_.end(), std::back_inserter(both));
  Coalesce(&both);
  ranges_ = std::move(both);
}

CharClass CharClass::ComplementWithin(const CharClass& universe) const {
  CharClass out;
  for (const CodePointRange& u : universe.ranges_) {
    char32_t next = u.lo;
    bool covered_to_end = false;
    for (const CodePointRange& r : ranges_) {
      if (r.hi < next) continue;
      if (r.lo > u.hi) break;
      if (r.lo > next) out.Add(next, r.lo - 1);
      if (r.hi >= u.hi) {
        covered_to_end = true;
        break;
      }
      next = r.hi + 1;
    }
    if (!covered_to_end) out.Add(next, u.hi);
  }
  return out;
}

bool CharClass::Contains(char32_t c) const {
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), c, [](const CodePointRange& r, char32_t v) { return r.hi < v; });
  return it != ranges_.end() && it->lo <= c;
}

CharBytes Utf8Bytes(const CharClass& chars) {
  std::vector<ByteRun> runs;
  for (const CodePointRange& r : chars.ranges()) Utf8Runs(r.lo, r.hi, &runs);
  return BuildCharBytes(runs);
}

CharBytes JsonStringBytes(const CharClass& chars) {
  std::vector<ByteRun> runs;
  for (const CodePointRange& r : chars.ranges()) {
    // Up to the backslash, characters one by one: raw, or their escape.
    for (char32_t c = r.lo; c <= std::min<char32_t>(r.hi, 0x5C); ++c) {
      if (c >= 0x20 && c != '"' && c != '\\') {
        Utf8Runs(c, c, &runs);
        continue;
      }
      switch (c) {
        case '"': runs.push_back(LiteralRun("\\\"")); break;
        case '\\': runs.push_back(LiteralRun("\\\\")); break;
        case '\n': runs.push_back(LiteralRun("\\n")); break;
        case '\r': runs.push_back(LiteralRun("\\r")); break;
        case '\t': runs.push_back(LiteralRun("\\t")); break;
        case '\b': runs.push_back(LiteralRun("\\b")); break;
        case '\f': runs.push_back(LiteralRun("\\f")); break;
        default: {
          static constexpr char kHex[] = "0123456789abcdef";
          const char escaped[6] = {'\\', 'u', '0', '0', kHex[(c >> 4) & 0xF], kHex[c & 0xF]};
          runs.push_back(LiteralRun(std::string_view(escaped, 6)));
        }
      }
    }
    if (r.hi > 0x5C) Utf8Runs(std::max<char32_t>(r.lo, 0x5D), r.hi, &runs);
  }
  return BuildCharBytes(runs);
}

void AddCharBytes(GrammarBuilder* builder, int32_t from, const CharBytes& bytes, int32_t to) {
  std::vector<int32_t> states(size_t(bytes.inner) + 2);
  states[0] = from;
  states[1] = to;
  const int32_t rule = builder->RuleOf(from);
  for (int32_t i = 0; i < bytes.inner; ++i) states[size_t(i) + 2] = builder->NewState(rule);
  for (const CharBytes::Edge& e : bytes.edges) builder->AddBytes(states[size_t(e.from)], e.bytes, states[size_t(e.to)]);
}

void AddJsonStringChar(GrammarBuilder* builder, int32_t from, const CharClass& chars, int32_t to) {
  AddCharBytes(builder, from, JsonStringBytes(chars), to);
}

}  // namespace kimi::structured
