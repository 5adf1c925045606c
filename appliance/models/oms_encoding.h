// Byte encodings used by OpenSSF Model Signing (OMS) bundles: base64 (RFC 4648, standard
// alphabet, padded) for the DSSE payload, signatures and certificates, and lower-case hex for
// digests. Decoders are strict: any character outside the alphabet, bad padding or an odd
// hex length is an error, so a bundle has exactly one byte reading.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kimi/hex.h"
#include "kimi/status.h"

namespace kimi::models {

std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);

using ::kimi::HexEncode;
// Accepts lower- or upper-case digits; refuses odd lengths and other characters.
using ::kimi::HexDecode;

}  // namespace kimi::models
