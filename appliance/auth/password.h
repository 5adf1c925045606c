// Passwords of console users: Argon2id hashing (libsodium crypto_pwhash_str, which embeds the
// salt and the parameters in the stored string, so changing the configured parameters keeps
// old hashes verifiable) and the password rules.
// Public header of auth/: other folders include it.
// Thread safety: pure functions; each hash uses mem_limit bytes while it runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kimi/status.h"

namespace kimi::auth {

// The longest password any route accepts (login, password change, the rules below): Argon2id
// reads every byte, so an unbounded password is unbounded work per attempt.
inline constexpr size_t kMaxPasswordBytes = 1024;

struct PasswordParams {
  uint64_t ops_limit = 2;                   // Argon2id passes (libsodium "interactive")
  uint64_t mem_limit_bytes = 64ull << 20;   // memory per hash
  int64_t min_length = 12;                  // password rules
};

// "$argon2id$v=19$m=...,t=...,p=1$salt$hash". InvalidArgument for parameters libsodium
// refuses, ResourceExhausted when the memory cannot be had.
Result<std::string> HashPassword(std::string_view password, const PasswordParams& params);

// Constant-time with respect to the password (libsodium's verification).
bool VerifyPassword(std::string_view stored_hash, std::string_view password);

// How many verifications (VerifyPassword, VerifyDummyPassword) this process has run: lets
// tests check that every login path does the same hashing work without timing it.
uint64_t PasswordVerificationCount();

// Burns the time of one verification, so an unknown user name answers no faster than a
// wrong password for a known one.
void VerifyDummyPassword(std::string_view password, const PasswordParams& params);

// InvalidArgument naming `field` when `password` is longer than kMaxPasswordBytes.
Status CheckPasswordLength(std::string_view field, std::string_view password);

// The rules: at least min_length characters (bytes), at most kMaxPasswordBytes, not containing the user
// name, at least 3 different characters. InvalidArgument saying which rule failed.
Status CheckPasswordRules(std::string_view username, std::string_view password, const PasswordParams& params);

// A one-time password of 20 characters from an alphabet without look-alikes.
std::string GenerateOneTimePassword();

}  // namespace kimi::auth
