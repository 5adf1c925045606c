// AuditKey: the appliance's Ed25519 audit signing key (libsodium), kept in the data directory.
//
// Files: <dir>/audit-ed25519.key holds the 32-byte seed, created once with mode 0600 (and a
// key that others can read is refused); <dir>/audit-ed25519.pub.json holds the public key in
// the export form of signed_head.h, for auditors. The secret never leaves this object.
// Public header of audit/: other folders include it.
// Thread safety: Sign() and the accessors may be called from any thread once loaded.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "audit/signed_head.h"
#include "kimi/status.h"

namespace kimi::audit {

inline constexpr std::string_view kAuditKeyFile = "audit-ed25519.key";
inline constexpr std::string_view kAuditPublicKeyFile = "audit-ed25519.pub.json";
// Written beside them when the log is first opened (audit_sink.h): a start that finds it but
// no audit.db refuses.
inline constexpr std::string_view kAuditLogMarkerFile = "audit-log.created";

class AuditKey {
 public:
  // Loads <dir>/audit-ed25519.key, or generates and stores a new key when there is none.
  // Also (re)writes the public key file. PermissionDenied when the key file is readable or
  // writable by group or others.
  static Result<AuditKey> LoadOrCreate(const std::string& dir);
  // A key from a fixed 32-byte seed, for tests.
  static AuditKey FromSeed(const std::array<uint8_t, 32>& seed);

  AuditKey(AuditKey&& other) noexcept;
  AuditKey& operator=(AuditKey&& other) noexcept;
  AuditKey(const AuditKey&) = delete;
  AuditKey& operator=(const AuditKey&) = delete;
  ~AuditKey();

  SignedTreeHead Sign(uint64_t tree_size, int64_t timestamp_ms, const Hash& root_hash) const;
  // Ed25519 over message. Precondition: message starts with its own 16-byte context string
  // (as kTreeHeadContext), so a signature made for one kind of message never verifies as another.
  Signature SignMessage(std::string_view message) const;
  const PublicKey& public_key() const { return public_key_; }
  const Hash& key_id() const { return key_id_; }

 private:
  AuditKey() = default;
  std::array<uint8_t, 64> secret_key_{};  // libsodium's seed || public key form
  PublicKey public_key_{};
  Hash key_id_{};
};

// Writes the public key JSON to path (mode 0644).
Status ExportPublicKey(const PublicKey& key, const std::string& path);

}  // namespace kimi::audit
