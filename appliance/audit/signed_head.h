// Signed tree heads (STH): the audit key's Ed25519 signature over (tree size, root hash,
// timestamp, key id), their byte encoding for signing, their JSON export form, and public
// keys as exported to outside verifiers.
//
// Signing bytes (96 bytes, docs/audit.md):
//   "KIMI-AUDIT-STH/1" (16 ASCII bytes) || key_id (32) || tree_size (u64 big-endian)
//   || timestamp_ms (u64 big-endian) || root_hash (32)
// key_id is SHA-256 of the raw 32-byte Ed25519 public key.
// Public header of audit/: other folders include it.
// Thread safety: value types and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/hash.h"
#include "kimi/status.h"

namespace kimi::audit {

inline constexpr size_t kPublicKeySize = 32;
inline constexpr size_t kSignatureSize = 64;
inline constexpr std::string_view kTreeHeadContext = "KIMI-AUDIT-STH/1";
using PublicKey = std::array<uint8_t, kPublicKeySize>;
using Signature = std::array<uint8_t, kSignatureSize>;

struct SignedTreeHead {
  uint64_t tree_size = 0;
  int64_t timestamp_ms = 0;
  Hash root_hash{};
  Hash key_id{};
  Signature signature{};
  bool operator==(const SignedTreeHead&) const = default;
};

Hash KeyIdOf(const PublicKey& key);

std::string TreeHeadSigningBytes(uint64_t tree_size, int64_t timestamp_ms, const Hash& root_hash,
                                 const Hash& key_id);

// OK when the key id names this key and the signature is valid; Corruption otherwise.
Status VerifyTreeHead(const SignedTreeHead& head, const PublicKey& key);

// {"format":"kimi-audit-sth/1","tree_size":..,"timestamp_ms":..,"time":"..","root_hash":hex,
//  "key_id":hex,"signature":hex}
nlohmann::json TreeHeadToJson(const SignedTreeHead& head);
Result<SignedTreeHead> TreeHeadFromJson(const nlohmann::json& j);

// The signed heads in a file an auditor keeps: one head's JSON (`kimictl audit head`), or a
// witness file of JSON lines, one head a line (`kimictl audit witness --append`).
// InvalidArgument naming the line when a line is not a signed head.
Result<std::vector<SignedTreeHead>> ReadTreeHeadsFile(const std::string& path);
// The same for the text of such a file, read already; `path` names it in errors.
Result<std::vector<SignedTreeHead>> ParseTreeHeads(const std::string& text, const std::string& path);

// {"format":"kimi-audit-key/1","algorithm":"ed25519","public_key":hex,"key_id":hex}
nlohmann::json PublicKeyToJson(const PublicKey& key);
// Accepts the JSON above or a bare 64-character hex key.
Result<PublicKey> ParsePublicKey(std::string_view text);

// Reads a whole file (a link is followed; a FIFO, a device or more than 16 MiB is refused
// with InvalidArgument naming it); NotFound / IOError on failure.
Result<std::string> ReadTextFile(const std::string& path);
Result<nlohmann::json> ReadJsonFile(const std::string& path);

}  // namespace kimi::audit
