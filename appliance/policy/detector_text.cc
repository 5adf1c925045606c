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

}  // namespace kimi::policy::text
