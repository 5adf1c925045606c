// US social security numbers and dates of birth: see detectors.h.
#include <algorithm>
#include <array>
#include <string>

#include "policy/detector_text.h"
#include "policy/detectors.h"

namespace kimi::policy {
namespace {

using namespace text;

int Number(std::string_view text, size_t begin, size_t count) {
  int v = 0;
  for (size_t k = 0; k < count; ++k) v = v * 10 + (text[begin + k] - '0');
  return v;
}

bool DigitsAt(std::string_view text, size_t begin, size_t count) {
  if (begin + count > text.size()) return false;
  for (size_t k = 0; k < count; ++k) {
    if (!IsDigit(text[begin + k])) return false;
  }
  return true;
}

// 1 or 2 digits at text[begin]; sets *count. -1 when there is none.
int SmallNumber(std::string_view text, size_t begin, size_t* count) {
  if (!DigitsAt(text, begin, 1)) return -1;
  *count = DigitsAt(text, begin, 2) ? 2 : 1;
  return Number(text, begin, *count);
}

bool ValidDate(int year, int month, int day) {
  if (year < 1900 || year > 2100 || month < 1 || month > 12 || day < 1) return false;
  static constexpr std::array<int, 12> kDays = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day > kDays[month - 1]) return false;
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month != 2 || day <= 28 || leap;
}

// A date at text[begin], in one of: YYYY-MM-DD, YYYY/MM/DD, YYYY.MM.DD, DD/MM/YYYY,
// MM/DD/YYYY, DD-MM-YYYY, DD.MM.YYYY, YYYY年M月D日. Returns its end, or 0 when none.
size_t DateAt(std::string_view text, size_t begin) {
  if (DigitsAt(text, begin, 4) && begin + 4 < text.size()) {
    const int year = Number(text, begin, 4);
    const char sep = text[begin + 4];
    if (sep == '-' || sep == '/' || sep == '.') {
      size_t mn = 0, dn = 0;
      int month = SmallNumber(text, begin + 5, &mn);
      if (month < 0 || begin + 5 + mn >= text.size() || text[begin + 5 + mn] != sep) return 0;
      int day = SmallNumber(text, begin + 6 + mn, &dn);
      size_t end = begin + 6 + mn + dn;
      return day >= 0 && ValidDate(year, month, day) && BoundaryAt(text, end) ? end : 0;
    }
    static constexpr std::string_view kYear = "年", kMonth = "月", kDay = "日";
    if (text.substr(begin + 4, kYear.size()) == kYear) {
      size_t at = begin + 4 + kYear.size(), mn = 0, dn = 0;
      int month = SmallNumber(text, at, &mn);
      if (month < 0 || text.substr(at + mn, kMonth.size()) != kMonth) return 0;
      at += mn + kMonth.size();
      int day = SmallNumber(text, at, &dn);
      if (day < 0 || text.substr(at + dn, kDay.size()) != kDay) return 0;
      return ValidDate(year, month, day) ? at + dn + kDay.size() : 0;
    }
    return 0;
  }
  size_t an = 0, bn = 0;
  int a = SmallNumber(text, begin, &an);
  if (a < 0 || begin + an >= text.size()) return 0;
  const char sep = text[begin + an];
  if (sep != '/' && sep != '-' && sep != '.') return 0;
  int b = SmallNumber(text, begin + an + 1, &bn);
  size_t year_at = begin + an + 1 + bn;
  if (b < 0 || year_at >= text.size() || text[year_at] != sep || !DigitsAt(text, year_at + 1, 4)) return 0;
  size_t end = year_at + 5;
  const int year = Number(text, year_at + 1, 4);
  // Day first or month first: either reading makes it a date.
  if (!BoundaryAt(text, end) || !(ValidDate(year, b, a) || ValidDate(year, a, b))) return 0;
  return end;
}

char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

// Words that say the date that follows is a date of birth (English, Vietnamese, Chinese).
constexpr std::string_view kBirthWords[] = {"dob",       "d.o.b",    "birth",    "born",
                                            "ngày sinh", "sinh ngày", "năm sinh", "出生", "生日"};
// How far before a date a birth word may stand.
constexpr size_t kBirthWordWindow = 40;

bool BirthWordBefore(std::string_view text, size_t begin) {
  const size_t from = begin > kBirthWordWindow ? begin - kBirthWordWindow : 0;
  std::string window(text.substr(from, begin - from));
  std::transform(window.begin(), window.end(), window.begin(), Lower);
  for (std::string_view word : kBirthWords) {
    if (window.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

void FindUsSsns(std::string_view text, std::vector<Finding>* out) {
  for (size_t i = 0; i + 11 <= text.size(); ++i) {
    // A digit, not a letter, makes it part of a longer number: "a123-45-6789" and
    // "0-123-45-6789" still hold one.
    if (!IsDigit(text[i]) || !StartsNumber(text, i)) continue;
    const char sep = text[i + 3];
    if ((sep != '-' && sep != ' ') || text[i + 6] != sep || !DigitsAt(text, i, 3) || !DigitsAt(text, i + 4, 2) ||
        !DigitsAt(text, i + 7, 4) || !NoDigitAt(text, i + 11)) {
      continue;
    }
    // Never issued: area 000, 666 or 900-999, group 00, serial 0000.
    const int area = Number(text, i, 3), group = Number(text, i + 4, 2), serial = Number(text, i + 7, 4);
    if (area == 0 || area == 666 || area >= 900 || group == 0 || serial == 0) continue;
    out->push_back({i, i + 11, kUsSsn});
    i += 10;
  }
}

void FindDatesOfBirth(std::string_view text, std::vector<Finding>* out) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!IsDigit(text[i]) || !StartsToken(text, i)) continue;
    size_t end = DateAt(text, i);
    if (end == 0) continue;
    if (BirthWordBefore(text, i)) out->push_back({i, end, kDateOfBirth});
    i = end - 1;
  }
}

}  // namespace kimi::policy
