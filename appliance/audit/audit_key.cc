#include "audit/audit_key.h"

#include <sodium.h>
#include <unistd.h>

#include <cstdlib>

#include "kimi/durable_file.h"
#include "kimi/regular_file.h"

namespace kimi::audit {

AuditKey AuditKey::FromSeed(const std::array<uint8_t, 32>& seed) {
  if (sodium_init() < 0) std::abort();  // no randomness or crypto without it: cannot continue
  AuditKey key;
  crypto_sign_seed_keypair(key.public_key_.data(), key.secret_key_.data(), seed.data());
  key.key_id_ = KeyIdOf(key.public_key_);
  return key;
}

Result<AuditKey> AuditKey::LoadOrCreate(const std::string& dir) {
  if (sodium_init() < 0) return Status::Internal("libsodium failed to initialise");
  const std::string path = dir + "/" + std::string(kAuditKeyFile);
  std::array<uint8_t, 32> seed{};
  // One descriptor, checked and read: neither a link nor a FIFO planted in the data directory is
  // followed or waited on (kimi/regular_file.h).
  Result<RegularFile> file = OpenRegularFile(path);
  if (file.ok()) {
    if ((file->mode() & 077) != 0) {
      return Status::PermissionDenied(path + " is accessible to group or others; run chmod 600 on it");
    }
    const ssize_t n = ::read(file->fd(), seed.data(), seed.size());
    uint8_t extra = 0;
    const ssize_t more = ::read(file->fd(), &extra, 1);
    if (n != static_cast<ssize_t>(seed.size()) || more != 0) {
      return Status::Corruption(path + " is not a 32-byte Ed25519 seed");
    }
  } else if (file.status().code() == Status::Code::kNotFound) {
    randombytes_buf(seed.data(), seed.size());
    // Whole or not at all: a seed cut short by a crash would stop the next start.
    KIMI_RETURN_IF_ERROR(WriteFileAtomically(path,
                                             std::string_view(reinterpret_cast<const char*>(seed.data()), seed.size()),
                                             0600, IfExists::kRefuse));
  } else {
    return file.status();
  }
  AuditKey key = FromSeed(seed);
  sodium_memzero(seed.data(), seed.size());
  KIMI_RETURN_IF_ERROR(ExportPublicKey(key.public_key(), dir + "/" + std::string(kAuditPublicKeyFile)));
  return key;
}

AuditKey::AuditKey(AuditKey&& other) noexcept
    : secret_key_(other.secret_key_), public_key_(other.public_key_), key_id_(other.key_id_) {
  sodium_memzero(other.secret_key_.data(), other.secret_key_.size());
}

AuditKey& AuditKey::operator=(AuditKey&& other) noexcept {
  if (this != &other) {
    secret_key_ = other.secret_key_;
    public_key_ = other.public_key_;
    key_id_ = other.key_id_;
    sodium_memzero(other.secret_key_.data(), other.secret_key_.size());
  }
  return *this;
}

AuditKey::~AuditKey() { sodium_memzero(secret_key_.data(), secret_key_.size()); }

SignedTreeHead AuditKey::Sign(uint64_t tree_size, int64_t timestamp_ms, const Hash& root_hash) const {
  SignedTreeHead head;
  head.tree_size = tree_size;
  head.timestamp_ms = timestamp_ms;
  head.root_hash = root_hash;
  head.key_id = key_id_;
  head.signature = SignMessage(TreeHeadSigningBytes(tree_size, timestamp_ms, root_hash, key_id_));
  return head;
}

Signature AuditKey::SignMessage(std::string_view message) const {
  Signature signature{};
  crypto_sign_detached(signature.data(), nullptr, reinterpret_cast<const unsigned char*>(message.data()),
                       message.size(), secret_key_.data());
  return signature;
}

Status ExportPublicKey(const PublicKey& key, const std::string& path) {
  const std::string text = PublicKeyToJson(key).dump(2) + "\n";
  // Public, but in the data directory, which is the service account's alone (store/owner_only.h);
  // auditors get their copy from the operator.
  return WriteFileAtomically(path, text, 0600);
}

}  // namespace kimi::audit
