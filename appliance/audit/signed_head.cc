#include "audit/signed_head.h"

#include <sodium.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "audit/record.h"
#include "kimi/untrusted_json.h"
#include "kimi/regular_file.h"

namespace kimi::audit {
namespace {

// Keys, witness heads and proofs are a few KiB; a configuration at most a few MiB.
constexpr uint64_t kMaxTextFileBytes = 16u << 20;

void AppendBigEndian64(uint64_t v, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xff));
}

template <size_t N>
Result<std::array<uint8_t, N>> FixedFromHex(const nlohmann::json& j, const char* field) {
  if (!j.contains(field) || !j[field].is_string()) {
    return Status::InvalidArgument(std::string("missing string field '") + field + "'");
  }
  const std::string& text = j[field].get_ref<const std::string&>();
  if (text.size() != 2 * N) return Status::InvalidArgument(std::string("field '") + field + "' has the wrong length");
  KIMI_ASSIGN_OR_RETURN(std::string bytes, FromHex(text));
  std::array<uint8_t, N> out{};
  std::memcpy(out.data(), bytes.data(), N);
  return out;
}

}  // namespace

Hash KeyIdOf(const PublicKey& key) {
  return Sha256(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
}

std::string TreeHeadSigningBytes(uint64_t tree_size, int64_t timestamp_ms, const Hash& root_hash,
                                 const Hash& key_id) {
  std::string out(kTreeHeadContext);
  out.append(AsBytes(key_id));
  AppendBigEndian64(tree_size, &out);
  AppendBigEndian64(static_cast<uint64_t>(timestamp_ms), &out);
  out.append(AsBytes(root_hash));
  return out;
}

Status VerifyTreeHead(const SignedTreeHead& head, const PublicKey& key) {
  if (sodium_init() < 0) return Status::Internal("libsodium failed to initialise");
  if (head.key_id != KeyIdOf(key)) return Status::Corruption("signed head names a different key id");
  const std::string msg = TreeHeadSigningBytes(head.tree_size, head.timestamp_ms, head.root_hash, head.key_id);
  if (crypto_sign_verify_detached(head.signature.data(), reinterpret_cast<const unsigned char*>(msg.data()),
                                  msg.size(), key.data()) != 0) {
    return Status::Corruption("signed head signature does not verify");
  }
  return Status::OK();
}

nlohmann::json TreeHeadToJson(const SignedTreeHead& h) {
  return {
      {"format", "kimi-audit-sth/1"},
      {"tree_size", h.tree_size},
      {"timestamp_ms", h.timestamp_ms},
      {"time", FormatUtcMillis(h.timestamp_ms)},
      {"root_hash", ToHex(h.root_hash)},
      {"key_id", ToHex(h.key_id)},
      {"signature", ToHex(std::span<const uint8_t>(h.signature))},
  };
}

Result<SignedTreeHead> TreeHeadFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a signed head is a JSON object");
  if (j.value("format", "") != "kimi-audit-sth/1") return Status::InvalidArgument("not a kimi-audit-sth/1 head");
  if (!j.contains("tree_size") || !j["tree_size"].is_number_unsigned()) {
    return Status::InvalidArgument("signed head lacks an unsigned tree_size");
  }
  if (!j.contains("timestamp_ms") || !j["timestamp_ms"].is_number_integer()) {
    return Status::InvalidArgument("signed head lacks an integer timestamp_ms");
  }
  SignedTreeHead h;
  h.tree_size = j["tree_size"].get<uint64_t>();
  h.timestamp_ms = j["timestamp_ms"].get<int64_t>();
  KIMI_ASSIGN_OR_RETURN(h.root_hash, FixedFromHex<kHashSize>(j, "root_hash"));
  KIMI_ASSIGN_OR_RETURN(h.key_id, FixedFromHex<kHashSize>(j, "key_id"));
  KIMI_ASSIGN_OR_RETURN(h.signature, FixedFromHex<kSignatureSize>(j, "signature"));
  return h;
}

Result<std::vector<SignedTreeHead>> ReadTreeHeadsFile(const std::string& path) {
  KIMI_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseTreeHeads(text, path);
}

Result<std::vector<SignedTreeHead>> ParseTreeHeads(const std::string& text, const std::string& path) {
  std::vector<SignedTreeHead> heads;
  // One pretty-printed head spans lines; a witness file is one head a line.
  KIMI_RETURN_IF_ERROR(CheckJsonNesting(text, path, kMaxFileJsonNesting));
  const nlohmann::json whole = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (whole.is_object()) {
    Result<SignedTreeHead> head = TreeHeadFromJson(whole);
    if (!head.ok()) return head.status().WithContext(path);
    heads.push_back(*head);
    return heads;
  }
  std::istringstream lines(text);
  std::string line;
  for (int line_no = 1; std::getline(lines, line); ++line_no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    Result<SignedTreeHead> head = j.is_object() ? TreeHeadFromJson(j) : Status::InvalidArgument("not a JSON object");
    if (!head.ok()) return head.status().WithContext(path + " line " + std::to_string(line_no));
    heads.push_back(*head);
  }
  return heads;
}

nlohmann::json PublicKeyToJson(const PublicKey& key) {
  return {
      {"format", "kimi-audit-key/1"},
      {"algorithm", "ed25519"},
      {"public_key", ToHex(std::span<const uint8_t>(key))},
      {"key_id", ToHex(KeyIdOf(key))},
  };
}

Result<PublicKey> ParsePublicKey(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  if (text.size() == 2 * kPublicKeySize && text.front() != '{') {
    KIMI_ASSIGN_OR_RETURN(std::string bytes, FromHex(text));
    PublicKey key{};
    std::memcpy(key.data(), bytes.data(), key.size());
    return key;
  }
  Result<nlohmann::json> parsed = ParseUntrustedJson(text, "public key", kMaxFileJsonNesting);
  if (!parsed.ok() || !parsed->is_object()) return Status::InvalidArgument("public key is neither hex nor JSON");
  const nlohmann::json& j = *parsed;
  if (j.value("algorithm", "") != "ed25519") return Status::InvalidArgument("public key is not an ed25519 key");
  KIMI_ASSIGN_OR_RETURN(PublicKey key, FixedFromHex<kPublicKeySize>(j, "public_key"));
  if (j.contains("key_id") && j["key_id"].is_string() && j["key_id"].get<std::string>() != ToHex(KeyIdOf(key))) {
    return Status::InvalidArgument("public key file's key_id does not match its key");
  }
  return key;
}

Result<std::string> ReadTextFile(const std::string& path) {
  return ReadRegularFile(path, kMaxTextFileBytes, FinalLink::kFollow);
}

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  KIMI_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  Result<nlohmann::json> parsed = ParseUntrustedJson(text, path, kMaxFileJsonNesting);
  if (!parsed.ok()) return Status::InvalidArgument(parsed.status().message());
  return parsed;
}

}  // namespace kimi::audit
