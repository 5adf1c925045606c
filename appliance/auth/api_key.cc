#include "auth/api_key.h"

#include <sodium.h>

#include "kimi/hex.h"

namespace kimi::auth {
namespace {

constexpr char kDigits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

bool IsBase62(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

}  // namespace

std::string Base62Encode256(const std::array<uint8_t, 32>& bytes) {
  // Schoolbook division of the 256-bit big-endian number by 62, one digit per pass.
  std::array<uint8_t, 32> n = bytes;
  std::string out(kApiKeyDigits, '0');
  for (size_t i = kApiKeyDigits; i-- > 0;) {
    uint32_t remainder = 0;
    for (uint8_t& byte : n) {
      uint32_t value = (remainder << 8) | byte;
      byte = static_cast<uint8_t>(value / 62);
      remainder = value % 62;
    }
    out[i] = kDigits[remainder];
  }
  return out;
}

std::string GenerateApiKey() {
  std::array<uint8_t, 32> bytes{};
  randombytes_buf(bytes.data(), bytes.size());
  std::string key = std::string(kApiKeyPrefix) + Base62Encode256(bytes);
  sodium_memzero(bytes.data(), bytes.size());
  return key;
}

std::string GenerateKeyId() { return "key_" + RandomHex(8); }

bool HasApiKeyShape(std::string_view text) {
  if (text.size() != kApiKeyPrefix.size() + kApiKeyDigits || text.substr(0, kApiKeyPrefix.size()) != kApiKeyPrefix) {
    return false;
  }
  for (char c : text.substr(kApiKeyPrefix.size())) {
    if (!IsBase62(c)) return false;
  }
  return true;
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  randombytes_buf(raw.data(), raw.size());
  std::string hex = HexEncode(raw);
  sodium_memzero(raw.data(), raw.size());
  return hex;
}

}  // namespace kimi::auth
