// E-mail addresses and phone numbers: see detectors.h.
#include <string>

#include "policy/detector_text.h"
#include "policy/detectors.h"

namespace kimi::policy {
namespace {

using namespace text;

bool IsLocalChar(char c) { return IsAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'; }
bool IsDomainChar(char c) { return IsAlnum(c) || c == '.' || c == '-'; }

// The domain at text[begin, *end): labels of letters, digits and hyphens joined by single
// dots, at least two labels, the last one 2+ letters. Trims a trailing dot or hyphen.
bool ValidDomain(std::string_view text, size_t begin, size_t* end) {
  size_t e = begin;
  while (e < text.size() && IsDomainChar(text[e])) ++e;
  while (e > begin && (text[e - 1] == '.' || text[e - 1] == '-')) --e;
  std::string_view domain = text.substr(begin, e - begin);
  if (domain.empty() || domain.front() == '.' || domain.find("..") != std::string_view::npos) return false;
  size_t last_dot = domain.rfind('.');
  if (last_dot == std::string_view::npos) return false;
  std::string_view tld = domain.substr(last_dot + 1);
  if (tld.size() < 2) return false;
  for (char c : tld) {
    if (!IsAlpha(c)) return false;
  }
  *end = e;
  return true;
}

// A phone number's digits are plausible: international form (+ and 8..15 digits), a
// national number with a trunk 0 (10 or 11 digits: Vietnam, the UK, ...), a Chinese mobile
// (11 digits, 1 then 3-9), or a North American number written in groups 3-3-4.
bool PlausiblePhone(bool plus, const std::string& digits, const std::vector<size_t>& groups) {
  const size_t n = digits.size();
  if (plus) return n >= 8 && n <= 15;
  if ((n == 10 || n == 11) && digits[0] == '0') return true;
  if (n == 11 && digits[0] == '1' && digits[1] >= '3' && digits[1] <= '9') return true;
  return n == 10 && groups == std::vector<size_t>{3, 3, 4};
}

}  // namespace

void FindEmails(std::string_view text, std::vector<Finding>* out) {
  size_t resume = 0;  // findings never overlap
  for (size_t at = text.find('@'); at != std::string_view::npos; at = text.find('@', at + 1)) {
    size_t begin = at;
    while (begin > resume && IsLocalChar(text[begin - 1])) --begin;
    while (begin < at && text[begin] == '.') ++begin;
    if (begin == at || text[at - 1] == '.') continue;
    size_t end = 0;
    if (!ValidDomain(text, at + 1, &end)) continue;
    out->push_back({begin, end, kEmail});
    resume = end;
    at = end - 1;
  }
}

void FindPhones(std::string_view text, std::vector<Finding>* out) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool plus = c == '+';
    if (!(plus || c == '(' || IsDigit(c)) || !StartsToken(text, i)) {
      ++i;
      continue;
    }
    // Digits in groups, separated by one or two of " -.()" (as in "(028) 3822-1234").
    std::string digits;
    std::vector<size_t> groups;
    size_t j = plus ? i + 1 : i, end = i, separators = 0;
    while (j < text.size()) {
      if (IsDigit(text[j])) {
        if (separators > 0 || groups.empty()) groups.push_back(0);
        ++groups.back();
        digits.push_back(text[j]);
        separators = 0;
        end = ++j;
      } else if ((text[j] == ' ' || text[j] == '-' || text[j] == '.' || text[j] == '(' || text[j] == ')') &&
                 separators < 2) {
        ++separators;
        ++j;
      } else {
        break;
      }
    }
    if (!digits.empty() && BoundaryAt(text, end) && PlausiblePhone(plus, digits, groups)) {
      out->push_back({i, end, kPhone});
    }
    i = end > i ? end : i + 1;
  }
}

}  // namespace kimi::policy
