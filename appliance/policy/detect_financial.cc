// IBANs (mod 97) and payment card numbers (Luhn): see detectors.h.
#include <string>

#include "policy/check_digits.h"
#include "policy/detector_text.h"
#include "policy/detectors.h"

namespace kimi::policy {
namespace {

using namespace text;

bool IsIbanChar(char c) { return IsUpper(c) || IsDigit(c); }

// Length of the run of IBAN characters at text[i].
size_t IbanRun(std::string_view text, size_t i) {
  size_t n = 0;
  while (i + n < text.size() && IsIbanChar(text[i + n])) ++n;
  return n;
}

}  // namespace

void FindIbans(std::string_view text, std::vector<Finding>* out) {
  size_t i = 0;
  while (i + 4 <= text.size()) {
    if (!IsUpper(text[i]) || !StartsToken(text, i) || !IsUpper(text[i + 1]) || !IsDigit(text[i + 2]) ||
        !IsDigit(text[i + 3])) {
      ++i;
      continue;
    }
    size_t first = IbanRun(text, i);
    std::string compact(text.substr(i, first));
    size_t end = i + first;
    if (first == 4) {
      // The printed form: groups of four separated by one space, the last group 1..4 long.
      size_t group = 4;
      while (group == 4 && end + 1 < text.size() && text[end] == ' ') {
        group = IbanRun(text, end + 1);
        if (group == 0 || group > 4) break;
        compact.append(text.substr(end + 1, group));
        end += 1 + group;
      }
    }
    if (BoundaryAt(text, end) && IbanValid(compact)) {
      out->push_back({i, end, kIban});
      i = end;
    } else {
      i += first;
    }
  }
}

void FindPaymentCards(std::string_view text, std::vector<Finding>* out) {
  size_t i = 0;
  while (i < text.size()) {
    if (!IsDigit(text[i]) || !StartsToken(text, i)) {
      ++i;
      continue;
    }
    size_t end = i;
    std::string digits = DigitsWithSeparators(text, i, " -", &end);
    if (digits.size() >= 13 && digits.size() <= 19 && BoundaryAt(text, end) && LuhnValid(digits)) {
      out->push_back({i, end, kPaymentCard});
    }
    i = end;
  }
}

}  // namespace kimi::policy
