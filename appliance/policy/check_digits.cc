#include "policy/check_digits.h"

namespace kimi::policy {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }

}  // namespace

bool LuhnValid(std::string_view digits) {
  if (digits.empty()) return false;
  int sum = 0;
  bool doubled = false;  // every second digit from the right is doubled
  for (size_t i = digits.size(); i-- > 0;) {
    if (!IsDigit(digits[i])) return false;
    int d = digits[i] - '0';
    if (doubled) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    doubled = !doubled;
  }
  return sum % 10 == 0;
}

bool IbanValid(std::string_view iban) {
  if (iban.size() < 15 || iban.size() > 34) return false;
  if (!IsUpper(iban[0]) || !IsUpper(iban[1]) || !IsDigit(iban[2]) || !IsDigit(iban[3])) return false;
  // The first four characters move to the end; letters count as 10..35. The remainder is
  // taken digit by digit so no big integer is needed.
  int remainder = 0;
  auto feed = [&](char c) -> bool {
    if (IsDigit(c)) {
      remainder = (remainder * 10 + (c - '0')) % 97;
    } else if (IsUpper(c)) {
      remainder = (remainder * 100 + (c - 'A' + 10)) % 97;
    } else {
      return false;
    }
    return true;
  };
  for (size_t i = 4; i < iban.size(); ++i) {
    if (!feed(iban[i])) return false;
  }
  for (size_t i = 0; i < 4; ++i) feed(iban[i]);
  return remainder == 1;
}

}  // namespace kimi::policy
