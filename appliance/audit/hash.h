// SHA-256 digests and hex/base64-free text forms for the audit log.
//
// Owns nothing: pure functions over bytes. SHA-256 comes from OpenSSL's EVP interface so the
// hardware-accelerated implementation is used.
// Public header of audit/: other folders include it.
// Thread safety: every function may be called from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kimi/hex.h"
#include "kimi/status.h"

namespace kimi::audit {

inline constexpr size_t kHashSize = 32;
using Hash = std::array<uint8_t, kHashSize>;

// SHA-256 of the concatenation of the parts.
Hash Sha256(std::span<const std::string_view> parts);
inline Hash Sha256(std::string_view data) { return Sha256(std::span<const std::string_view>(&data, 1)); }

// SHA-256 of bytes that arrive piece by piece (a streamed response as it is sent).
// A value owned by one thread at a time; movable, not copyable.
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(Sha256Stream&& other) noexcept;
  Sha256Stream& operator=(Sha256Stream&&) = delete;
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(std::string_view bytes);
  uint64_t bytes() const { return bytes_; }
  // The digest of everything given so far; the stream may not be updated afterwards.
  Hash Finish();
  // The digest of everything given so far followed by `more`; the stream is unchanged.
  Hash DigestWith(std::string_view more) const;

 private:
  struct Context;
  Context* ctx_;
  uint64_t bytes_ = 0;
};

// Lowercase hex, two characters a byte.
std::string ToHex(std::span<const uint8_t> bytes);
inline std::string ToHex(const Hash& h) { return ToHex(std::span<const uint8_t>(h)); }

// Decodes hex of either case; InvalidArgument on odd length or a non-hex character.
Result<std::string> FromHex(std::string_view hex);
// Decodes exactly 64 hex characters.
Result<Hash> HashFromHex(std::string_view hex);

inline std::string_view AsBytes(const Hash& h) {
  return std::string_view(reinterpret_cast<const char*>(h.data()), h.size());
}

}  // namespace kimi::audit
