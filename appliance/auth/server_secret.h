// ServerSecret: the 32-byte key of the keyed BLAKE2b hashes under which API keys and session
// ids are stored (<data_dir>/auth-secret.key, mode 0600). A copy of the database without the
// file does not let anyone test guessed keys offline, and a stored hash is no credential.
//
// LoadOrCreate() creates the file at first use (daemon start or `kimictl admin bootstrap`,
// whichever comes first) with O_EXCL, so two processes racing agree on one secret.
// Public header of auth/: other folders include it.
// Thread safety: immutable after construction; KeyedHash() may run on many threads.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi::auth {

inline constexpr std::string_view kServerSecretFile = "auth-secret.key";

using Digest = std::array<uint8_t, 32>;

class ServerSecret {
 public:
  // Reads <data_dir>/auth-secret.key, creating it (and data_dir, 0700) when absent and nothing
  // was hashed with a secret yet (hashed_credentials: the keys and sessions the database holds,
  // AuthStore::HashedCredentials). A missing file while credentials exist is FailedPrecondition:
  // a new secret would silently invalidate every one of them. Refuses a file of the wrong size
  // or one readable by group or others.
  static Result<ServerSecret> LoadOrCreate(const std::string& data_dir, int64_t hashed_credentials);
  // For tests: a fixed secret.
  static ServerSecret FromBytes(const std::array<uint8_t, 32>& bytes) { return ServerSecret(bytes); }

  // BLAKE2b-256 of `data` keyed with the secret.
  Digest KeyedHash(std::string_view data) const;

 private:
  explicit ServerSecret(const std::array<uint8_t, 32>& bytes) : bytes_(bytes) {}
  std::array<uint8_t, 32> bytes_;
};

// Constant-time equality of two digests (sodium_memcmp).
bool DigestEquals(const Digest& a, const Digest& b);

}  // namespace kimi::auth
