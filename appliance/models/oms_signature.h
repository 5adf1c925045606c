// Authenticates the DSSE envelope of an OMS bundle: the ECDSA signature over the DSSE
// pre-authentication encoding (PAE) of the payload, made by a trusted key, or by the key of a
// code-signing certificate (oms_code_signing.h) whose chain leads to a trusted CA under the
// model-signing purpose and which matches the signers that CA is pinned to (oms_identity.h).
//
// Keyless (Fulcio/Rekor) bundles are refused: proving them needs Sigstore's trust root and
// transparency log, which an air-gapped appliance does not have configured.
//
// Thread safety: pure functions; the TrustStore is only read.
#pragma once

#include <string>
#include <string_view>

#include "kimi/status.h"
#include "models/oms_bundle.h"
#include "models/oms_trust.h"

namespace kimi::models {

struct SignerIdentity {
  enum class Kind { kKey, kCertificate };
  Kind kind = Kind::kKey;
  // kKey: "key sha256:<fingerprint> (<trust file>)"; kCertificate: the leaf's subject and issuer.
  std::string description;
  std::string fingerprint;  // hex SHA-256: of the PEM public key, or of the leaf certificate (DER)
};

// DSSE v1 PAE: "DSSEv1 <len(type)> <type> <len(body)> <body>".
std::string Pae(std::string_view payload_type, std::string_view payload);

// The encoding model_signing 0.2 signed by mistake: "DSSEV1 ... <len> b'...'" with the payload
// written as a Python bytes literal. Accepted only for payloads of the 0.2 predicate.
std::string LegacyPae(std::string_view payload_type, std::string_view payload);

// OK with who signed, or why not: PermissionDenied for a signature that does not verify, an
// untrusted key or chain, a leaf that is not a code-signing certificate ("... is not a
// code-signing certificate: ..."), a leaf no pinned signer pattern matches ("signer not
// allowed: ..."); FailedPrecondition for keyless bundles and an empty trust store.
Result<SignerIdentity> VerifyEnvelopeSignature(const OmsBundle& bundle, const TrustStore& trust);

}  // namespace kimi::models
