#include "policy/detector_text.h"

#include <string>

namespace kimi::policy::text {

std::string DigitsWithSeparators(std::string_view text, size_t begin, std::string_view separators, size_t* end) {
  std::string digits;
  size_t i = begin;
  size_t last_digit_end = begin;
  while (i < text.size()) {
    if (IsDigit(text[i])) {
      digits.push_back(text[i]);
      last_digit_end = ++i;
    } else if (separators.find(text[i]) != std::string_view::npos && i + 1 < text.size() && IsDigit(text[i + 1]) &&
               i > begin && IsDigit(text[i - 1])) {
      ++i;
    } else {
      break;
    }
  }
  *end = last_digit_end;
  return digits;
}

std::vector<DigitGroup> DigitGroups(std::string_view text, size_t begin, std::string_view separators) {
  size_t end = begin;
  DigitsWithSeparators(text, begin, separators, &end);
  std::vector<DigitGroup> groups;
  for (size_t i = begin; i < end;) {
    size_t j = i;
    while (j < end && IsDigit(text[j])) ++j;
    groups.push_back({i, j});
    i = j + 1;  // past the single separator
  }
  return groups;
}

}  // namespace kimi::policy::text
