// Lowercase hexadecimal encoding of bytes, and its strict inverse: the one implementation the
// audit log (hashes, keys), the model verifier (digests) and the CLIs share.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi {

// Two lowercase hex digits per byte.
std::string HexEncode(std::string_view bytes);

// Accepts upper and lower case. InvalidArgument for an odd length or a non-hex character.
Result<std::string> HexDecode(std::string_view hex);

// The value 0..15 of one hex digit of either case, or -1 for any other character.
int HexDigitValue(char c);

}  // namespace kimi
