// The outer layer of an OpenSSF Model Signing signature file (model.sig): a Sigstore bundle
// (JSON, mediaType application/vnd.dev.sigstore.bundle.v0.3+json) carrying one DSSE envelope.
//
// ParseBundle() reads the JSON strictly and returns the pieces the verifier needs as bytes:
// the verification material (a public-key hint, an x509 chain, or a keyless certificate that
// cannot be checked offline), the payload type, the payload and the one signature. It does
// not verify anything cryptographic; see oms_signature.h and oms_verifier.h.
//
// Thread safety: pure functions over values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"

namespace kimi::models {

inline constexpr std::string_view kBundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json";
inline constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";

enum class MaterialKind {
  kPublicKey,         // signed with a key; the bundle may carry a hint of which one
  kCertificateChain,  // signed with a certificate's key; the chain (leaf first) is in the bundle
  kKeyless,           // Fulcio certificate + Rekor entry: needs a Sigstore trust root
};

struct OmsBundle {
  MaterialKind kind = MaterialKind::kPublicKey;
  // kPublicKey: hex SHA-256 of the signer's PEM public key (newer signers), or the PEM itself
  // from older signers' "rawBytes"; either may be empty.
  std::string key_hint;
  std::string embedded_public_key_pem;
  // kCertificateChain: DER certificates, leaf first.
  std::vector<std::string> certificates_der;
  std::string payload_type;
  std::string payload;    // decoded bytes, exactly as signed
  std::string signature;  // decoded DER ECDSA signature
};

// Largest model.sig accepted; a bundle is a few KiB, a manifest of 100k shards a few MiB.
inline constexpr size_t kMaxBundleBytes = 64u << 20;

// Refuses: invalid JSON, a mediaType other than kBundleMediaType, a bundle without a DSSE
// envelope, a payloadType other than kInTotoPayloadType, zero or several signatures,
// malformed base64, and material of none of the three kinds.
Result<OmsBundle> ParseBundle(std::string_view json_text);

}  // namespace kimi::models
