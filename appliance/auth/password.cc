#include "auth/password.h"

#include <sodium.h>

#include <atomic>
#include <mutex>
#include <set>

namespace kimi::auth {
namespace {

std::atomic<uint64_t> g_verifications{0};

}  // namespace

Result<std::string> HashPassword(std::string_view password, const PasswordParams& params) {
  if (sodium_init() < 0) return Status::Internal("libsodium failed to initialise");
  if (params.ops_limit < crypto_pwhash_OPSLIMIT_MIN || params.mem_limit_bytes < crypto_pwhash_MEMLIMIT_MIN) {
    return Status::InvalidArgument("Argon2id parameters below libsodium's minimum");
  }
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str_alg(out, password.data(), password.size(), params.ops_limit,
                            static_cast<size_t>(params.mem_limit_bytes), crypto_pwhash_ALG_ARGON2ID13) != 0) {
    return Status::ResourceExhausted("Argon2id hashing failed (out of memory?)");
  }
  return std::string(out);
}

bool VerifyPassword(std::string_view stored_hash, std::string_view password) {
  if (sodium_init() < 0) return false;
  g_verifications.fetch_add(1, std::memory_order_relaxed);
  std::string hash(stored_hash);  // needs a NUL-terminated string
  return crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
}

void VerifyDummyPassword(std::string_view password, const PasswordParams& params) {
  static std::once_flag once;
  static std::string dummy;
  std::call_once(once, [&] {
    Result<std::string> hashed = HashPassword("dummy password for unknown users", params);
    if (hashed.ok()) dummy = *hashed;
  });
  if (!dummy.empty()) VerifyPassword(dummy, password);
}

uint64_t PasswordVerificationCount() { return g_verifications.load(std::memory_order_relaxed); }

Status CheckPasswordLength(std::string_view field, std::string_view password) {
  if (password.size() <= kMaxPasswordBytes) return Status::OK();
  return Status::InvalidArgument("field '" + std::string(field) + "' must have at most " +
                                 std::to_string(kMaxPasswordBytes) + " bytes");
}

Status CheckPasswordRules(std::string_view username, std::string_view password, const PasswordParams& params) {
  if (static_cast<int64_t>(password.size()) < params.min_length) {
    return Status::InvalidArgument("the password must have at least " + std::to_string(params.min_length) +
                                   " characters");
  }
  if (password.size() > kMaxPasswordBytes) {
    return Status::InvalidArgument("the password must have at most " + std::to_string(kMaxPasswordBytes) +
                                   " characters");
  }
  if (!username.empty() && password.find(username) != std::string_view::npos) {
    return Status::InvalidArgument("the password must not contain the user name");
  }
  std::set<char> distinct(password.begin(), password.end());
  if (distinct.size() < 3) return Status::InvalidArgument("the password must have at least 3 different characters");
  return Status::OK();
}

std::string GenerateOneTimePassword() {
  static constexpr char kAlphabet[] = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  constexpr uint32_t kSize = sizeof(kAlphabet) - 1;
  std::string out;
  for (int i = 0; i < 20; ++i) out += kAlphabet[randombytes_uniform(kSize)];
  return out;
}

}  // namespace kimi::auth
