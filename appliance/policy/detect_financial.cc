// IBANs (mod 97) and payment card numbers (Luhn): see detectors.h.
#include <algorithm>
#include <string>

#include "policy/check_digits.h"
#include "policy/detector_text.h"
#include "policy/detectors.h"

namespace kimi::policy {
namespace {

using namespace text;

bool IsIbanChar(char c) { return IsUpper(c) || IsDigit(c); }

// ISO 13616: no country's IBAN is longer.
constexpr size_t kMaxIbanChars = 34;

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
      // Never past an IBAN's length: a run of four-character groups ("AB12 AB12 ...") would
      // otherwise be read again from each of its groups, in time quadratic in the run.
      size_t group = 4;
      while (group == 4 && compact.size() < kMaxIbanChars && end + 1 < text.size() && text[end] == ' ') {
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

namespace {

// The digits of groups [first, last] of a run.
std::string GroupDigits(std::string_view text, const std::vector<DigitGroup>& groups, size_t first, size_t last) {
  std::string digits;
  for (size_t g = first; g <= last; ++g) digits.append(text.substr(groups[g].begin, groups[g].end - groups[g].begin));
  return digits;
}

// Groups [first, last] written the way card numbers are printed: fours with a last group of 1
// to 4 (Visa, Mastercard, most others), or 4-6-5 and 4-6-4 (Amex, Diners).
bool PrintedAsACard(const std::vector<DigitGroup>& groups, size_t first, size_t last) {
  const auto length = [&](size_t g) { return groups[g].end - groups[g].begin; };
  if (last - first == 2 && length(first) == 4 && length(first + 1) == 6 && (length(last) == 5 || length(last) == 4)) {
    return true;
  }
  for (size_t g = first; g < last; ++g) {
    if (length(g) != 4) return false;
  }
  return length(last) >= 1 && length(last) <= 4;
}

constexpr size_t kMinCardDigits = 13;
constexpr size_t kMaxCardDigits = 19;
// The most groups one printed card spans: fours, then a last group (4 + 4 + 4 + 4 + 3 = 19).
constexpr size_t kMaxCardGroups = 5;

bool CardDigits(const std::string& digits) {
  return digits.size() >= kMinCardDigits && digits.size() <= kMaxCardDigits && LuhnValid(digits);
}

// The digits of the whole run, when it is no longer than a card.
bool RunIsACard(std::string_view text, const std::vector<DigitGroup>& groups) {
  size_t digits = 0;
  for (const DigitGroup& g : groups) {
    digits += g.end - g.begin;
    if (digits > kMaxCardDigits) return false;
  }
  return CardDigits(GroupDigits(text, groups, 0, groups.size() - 1));
}

}  // namespace

void FindPaymentCards(std::string_view text, std::vector<Finding>* out) {
  size_t i = 0;
  while (i < text.size()) {
    if (!IsDigit(text[i]) || !StartsNumber(text, i)) {
      ++i;
      continue;
    }
    const std::vector<DigitGroup> groups = DigitGroups(text, i, " -");
    const size_t end = groups.back().end;
    i = end;
    if (!NoDigitAt(text, end)) continue;
    // The whole run, however it is grouped; else a card printed in its groups inside a longer
    // run ("card 1 4111 1111 1111 1111", "4111-1111-1111-1111-0"), which checking the run alone
    // let through. Unseparated digits are not searched inside: a 20-digit reference is no card.
    if (RunIsACard(text, groups)) {
      out->push_back({groups.front().begin, end, kPaymentCard});
      continue;
    }
    // From every group, the longest card printed from it: cards may overlap each other or
    // another value ("123-45-6789 4111 1111 1111 1111" holds a card from 6789 and one from
    // 4111); the redactor masks the union. A card spans at most kMaxCardGroups groups, so
    // the search is linear in the run.
    for (size_t first = 0; first + 1 < groups.size(); ++first) {
      for (size_t last = std::min(groups.size() - 1, first + kMaxCardGroups - 1); last >= first + 1; --last) {
        if (PrintedAsACard(groups, first, last) && CardDigits(GroupDigits(text, groups, first, last))) {
          out->push_back({groups[first].begin, groups[last].end, kPaymentCard});
          break;
        }
      }
    }
  }
}

}  // namespace kimi::policy
