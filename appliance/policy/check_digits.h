// Check-digit algorithms of the redaction detectors: Luhn (payment card numbers) and the
// ISO 13616 mod-97 check of IBANs. A number whose check digits fail is not what it looks
// like, so the detectors leave it alone (no redaction of near misses).
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

namespace kimi::policy {

// `digits` holds only the digits 0-9 (separators already removed); false for anything else
// or an empty string.
bool LuhnValid(std::string_view digits);

// `iban` holds only upper-case letters and digits, country code first (separators removed).
// True when its length is 15..34, it starts with two letters and two digits, and the
// rearranged number is 1 modulo 97.
bool IbanValid(std::string_view iban);

}  // namespace kimi::policy
