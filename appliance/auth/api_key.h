// The API key format: "sk-kimi-" followed by 256 random bits (libsodium randombytes) written
// as exactly 43 base62 digits (0-9, A-Z, a-z), most significant first. The key is shown once;
// the daemon keeps only its keyed hash (server_secret.h) and a short public id ("key_" and 16
// hex digits) by which operators, logs and audit records name it.
//
// Thread safety: pure functions (randombytes is thread-safe).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kimi::auth {

inline constexpr std::string_view kApiKeyPrefix = "sk-kimi-";
inline constexpr size_t kApiKeyDigits = 43;  // ceil(256 / log2(62))

// 32 bytes as 43 base62 digits (big-endian, zero-padded).
std::string Base62Encode256(const std::array<uint8_t, 32>& bytes);

// A fresh key: prefix + Base62Encode256(32 random bytes).
std::string GenerateApiKey();
// A fresh public key id: "key_" + 16 hex digits.
std::string GenerateKeyId();

// True when `text` has the shape of a key (prefix, 43 base62 digits). Lets the server refuse
// junk without touching the database; the hash lookup decides whether it is a real key.
bool HasApiKeyShape(std::string_view text);

// `bytes` random bytes as lowercase hex (session ids, CSRF tokens, one-time passwords).
std::string RandomHex(size_t bytes);

}  // namespace kimi::auth
