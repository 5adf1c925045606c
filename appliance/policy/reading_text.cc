#include "policy/reading_text.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "kimi/tokenizer_utf8.h"

namespace kimi::policy {
namespace {

// How one character is read: kKeep, kDrop, or the ASCII byte it stands for.
constexpr uint8_t kKeep = 0;
constexpr uint8_t kDrop = 0xFF;

uint8_t ReadingOf(char32_t cp) {
  const UChar32 c = static_cast<UChar32>(cp);
  if (cp < 0x80) return kKeep;
  if (cp >= 0xE0020 && cp <= 0xE007E) return static_cast<uint8_t>(cp - 0xE0000);
  const int8_t category = u_charType(c);
  if (category == U_DECIMAL_DIGIT_NUMBER) {
    const int32_t digit = u_charDigitValue(c);
    if (digit >= 0 && digit <= 9) return static_cast<uint8_t>('0' + digit);
  }
  // A mark on a character does not change which character a reader reads ("4\u0301", the
  // keycap "4\uFE0F\u20E3"); letters with marks written as one character stay as they are.
  if (u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT) || category == U_NON_SPACING_MARK ||
      category == U_ENCLOSING_MARK) {
    return kDrop;
  }
  if (cp == 0x85 || cp == 0x2028 || cp == 0x2029) return '\n';
  if (u_isUWhiteSpace(c)) return ' ';
  if (category == U_DASH_PUNCTUATION || cp == 0x2212) return '-';
  UErrorCode error = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc = icu::Normalizer2::getNFKCInstance(error);
  if (U_FAILURE(error)) return kKeep;
  const icu::UnicodeString compatible = nfkc->normalize(icu::UnicodeString(c), error);
  if (U_SUCCESS(error) && compatible.length() == 1) {
    const char16_t unit = compatible.charAt(0);
    if (unit >= 0x21 && unit <= 0x7E) return static_cast<uint8_t>(unit);
  }
  return kKeep;
}

// The readings of the Basic Multilingual Plane, where nearly every such character lives;
// the others are asked of ICU each time.
class ReadingTable {
 public:
  static const ReadingTable& Get() {
    static const ReadingTable* const instance = new ReadingTable();
    return *instance;
  }
  uint8_t Of(char32_t cp) const { return cp < kLimit ? table_[cp] : ReadingOf(cp); }

 private:
  static constexpr char32_t kLimit = 0x10000;
  ReadingTable() : table_(kLimit) {
    for (char32_t cp = 0x80; cp < kLimit; ++cp) {
      table_[cp] = (cp >= 0xD800 && cp <= 0xDFFF) ? kKeep : ReadingOf(cp);
    }
  }
  std::vector<uint8_t> table_;
};

}  // namespace

ReadingText::ReadingText(std::string_view original) : original_(original) {
  const auto non_ascii = std::find_if(original.begin(), original.end(), [](char c) { return (c & 0x80) != 0; });
  if (non_ascii == original.end()) return;
  const ReadingTable& table = ReadingTable::Get();
  size_t pos = static_cast<size_t>(non_ascii - original.begin());
  folded_.reserve(original.size());
  folded_.append(original.substr(0, pos));
  while (pos < original.size()) {
    const unsigned char byte = static_cast<unsigned char>(original[pos]);
    if (byte < 0x80) {
      folded_.push_back(static_cast<char>(byte));
      ++pos;
      continue;
    }
    const kimi::text::Utf8Step step = kimi::text::DecodeUtf8At(original, pos);
    const size_t length = static_cast<size_t>(step.length);
    const uint8_t reading = step.kind == kimi::text::Utf8Kind::kComplete ? table.Of(step.code_point) : kKeep;
    if (reading == kKeep) {
      folded_.append(original.substr(pos, length));
    } else {
      changes_.push_back({folded_.size(), pos});
      if (reading != kDrop) folded_.push_back(static_cast<char>(reading));
      changes_.push_back({folded_.size(), pos + length});
    }
    pos += length;
  }
  if (changes_.empty()) folded_ = std::string();  // nothing is read otherwise: text() is the original
}

size_t ReadingText::OriginalAt(size_t position) const {
  // The last change at or before `position` (of equal ones, the last: a dropped character
  // is behind every position that follows it).
  auto after = std::upper_bound(changes_.begin(), changes_.end(), position,
                                [](size_t p, const Change& c) { return p < c.read_at; });
  if (after == changes_.begin()) return position;
  const Change& change = *(after - 1);
  return change.original_at + (position - change.read_at);
}

std::pair<size_t, size_t> ReadingText::OriginalRange(size_t begin, size_t end) const {
  size_t first = OriginalAt(begin);
  size_t last = OriginalAt(end);
  while (first > 0 && first < original_.size() && kimi::text::IsUtf8Continuation(original_[first])) --first;
  while (last < original_.size() && kimi::text::IsUtf8Continuation(original_[last])) ++last;
  return {first, last};
}

std::string ReadAsDetectorsDo(std::string_view text) { return std::string(ReadingText(text).text()); }

}  // namespace kimi::policy
