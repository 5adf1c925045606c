#include "audit/hash.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <memory>

namespace kimi::audit {
namespace {

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

// One context a thread, reused: creating an EVP context for every leaf would dominate the
// cost of hashing a short record.
EVP_MD_CTX* ThreadContext() {
  thread_local std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  return ctx.get();
}


}  // namespace

Hash Sha256(std::span<const std::string_view> parts) {
  Hash out{};
  EVP_MD_CTX* ctx = ThreadContext();
  unsigned int len = 0;
  // SHA-256 cannot fail on valid input; a failure here means OpenSSL itself is broken, and
  // carrying on would write wrong hashes into a tamper-evident log.
  if (ctx == nullptr || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) std::abort();
  for (std::string_view p : parts) {
    if (EVP_DigestUpdate(ctx, p.data(), p.size()) != 1) std::abort();
  }
  if (EVP_DigestFinal_ex(ctx, out.data(), &len) != 1 || len != kHashSize) std::abort();
  return out;
}

struct Sha256Stream::Context {
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> md{EVP_MD_CTX_new()};
};

Sha256Stream::Sha256Stream() : ctx_(new Context) {
  if (ctx_->md == nullptr || EVP_DigestInit_ex(ctx_->md.get(), EVP_sha256(), nullptr) != 1) std::abort();
}

Sha256Stream::~Sha256Stream() { delete ctx_; }

Sha256Stream::Sha256Stream(Sha256Stream&& other) noexcept : ctx_(other.ctx_), bytes_(other.bytes_) {
  other.ctx_ = nullptr;
}

void Sha256Stream::Update(std::string_view bytes) {
  if (EVP_DigestUpdate(ctx_->md.get(), bytes.data(), bytes.size()) != 1) std::abort();
  bytes_ += bytes.size();
}

Hash Sha256Stream::Finish() {
  Hash out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_->md.get(), out.data(), &len) != 1 || len != kHashSize) std::abort();
  return out;
}

Hash Sha256Stream::DigestWith(std::string_view more) const {
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> copy(EVP_MD_CTX_new());
  if (copy == nullptr || EVP_MD_CTX_copy_ex(copy.get(), ctx_->md.get()) != 1) std::abort();
  if (EVP_DigestUpdate(copy.get(), more.data(), more.size()) != 1) std::abort();
  Hash out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(copy.get(), out.data(), &len) != 1 || len != kHashSize) std::abort();
  return out;
}

std::string ToHex(std::span<const uint8_t> bytes) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Result<std::string> FromHex(std::string_view hex) { return HexDecode(hex); }

Result<Hash> HashFromHex(std::string_view hex) {
  if (hex.size() != 2 * kHashSize) return Status::InvalidArgument("a SHA-256 hash is 64 hex characters");
  KIMI_ASSIGN_OR_RETURN(std::string bytes, FromHex(hex));
  Hash h{};
  for (size_t i = 0; i < kHashSize; ++i) h[i] = static_cast<uint8_t>(bytes[i]);
  return h;
}

}  // namespace kimi::audit
