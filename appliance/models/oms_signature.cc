#include "models/oms_signature.h"

#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "models/oms_code_signing.h"
#include "models/oms_encoding.h"
#include "models/oms_identity.h"
#include "models/oms_keys.h"
#include "models/oms_statement.h"

namespace kimi::models {
namespace {

bool IsLegacyPayload(std::string_view payload) {
  auto j = nlohmann::json::parse(payload, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("predicateType") && j["predicateType"] == kLegacyPredicateType;
}

// Tries the standard PAE with the curve's digest, then for 0.2 payloads the legacy encoding
// with SHA-256 (the digest that signer used whatever the curve).
bool SignatureMatches(EVP_PKEY* key, const OmsBundle& bundle) {
  if (EcdsaVerify(key, Pae(bundle.payload_type, bundle.payload), bundle.signature)) return true;
  if (!IsLegacyPayload(bundle.payload)) return false;
  std::string legacy = LegacyPae(bundle.payload_type, bundle.payload);
  return EcdsaVerify(key, legacy, bundle.signature, EVP_sha256()) || EcdsaVerify(key, legacy, bundle.signature);
}

Result<SignerIdentity> VerifyWithKeys(const OmsBundle& bundle, const TrustStore& trust) {
  if (trust.keys().empty())
    return Status::FailedPrecondition("the model is signed with a key but the trust store has no public key (" +
                                      trust.description() + ")");
  // The bundle names its key (by hint, or by embedding it); only that key may have signed it.
  std::string wanted = bundle.key_hint;
  if (wanted.empty() && !bundle.embedded_public_key_pem.empty()) {
    auto embedded = LoadPublicKeyPem(bundle.embedded_public_key_pem);
    if (!embedded.ok()) return Status::InvalidArgument("signature bundle: embedded public key: " + embedded.status().message());
    wanted = KeyFingerprint(embedded->get());
  }
  bool any_candidate = false;
  for (const TrustedKey& k : trust.keys()) {
    if (!wanted.empty() && k.fingerprint != wanted) continue;
    any_candidate = true;
    if (SignatureMatches(k.key.get(), bundle)) {
      return SignerIdentity{SignerIdentity::Kind::kKey, "key sha256:" + k.fingerprint + " (" + k.source + ")", k.fingerprint};
    }
  }
  if (!any_candidate)
    return Status::PermissionDenied("key mismatch: the model was signed by key sha256:" + wanted +
                                    ", which is not in the trust store (" + trust.description() + ")");
  return Status::PermissionDenied("invalid signature: the DSSE signature does not verify with the trusted key");
}

Result<time_t> CertNotBefore(X509* cert) {
  struct tm tm {};
  if (ASN1_TIME_to_tm(X509_get0_notBefore(cert), &tm) != 1) return Status::InvalidArgument("certificate has no valid notBefore");
  return timegm(&tm);
}

// Hex SHA-256 of the certificate's DER: the fingerprint the trust store lists a CA under.
std::string DerFingerprint(X509* cert) {
  unsigned char fp[EVP_MAX_MD_SIZE];
  unsigned int fp_len = 0;
  X509_digest(cert, EVP_sha256(), fp, &fp_len);
  return HexEncode(std::string_view(reinterpret_cast<char*>(fp), fp_len));
}

Result<X509Ptr> ParseDer(const std::string& der) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  X509Ptr cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  if (!cert || p != reinterpret_cast<const unsigned char*>(der.data()) + der.size())
    return Status::InvalidArgument("signature bundle: a certificate is not valid DER");
  return cert;
}

// The signer patterns the trust store pins to `ca`: those of every copy of it (one root may be
// listed in two files), so a root pinned in any file is pinned.
std::vector<SignerPattern> PinsOf(X509* ca, const TrustStore& trust, std::string* sources) {
  std::vector<SignerPattern> pins;
  for (const TrustedCa& t : trust.cas()) {
    if (t.signers.empty() || X509_cmp(t.cert.get(), ca) != 0) continue;
    pins.insert(pins.end(), t.signers.begin(), t.signers.end());
    *sources += (sources->empty() ? "" : ", ") + t.source;
  }
  return pins;
}

// Every trusted CA of the verified chain that pins signers must name the leaf: the root, an
// intermediate that is also in the trust store with pins of its own, and the leaf itself
// when a pinned root signed with its own key.
Status CheckPinnedSigners(X509* leaf, STACK_OF(X509)* chain, const TrustStore& trust) {
  for (int i = 0; chain != nullptr && i < sk_X509_num(chain); ++i) {
    X509* ca = sk_X509_value(chain, i);
    std::string sources;
    const std::vector<SignerPattern> pins = PinsOf(ca, trust, &sources);
    if (pins.empty()) continue;
    bool matched = false;
    for (const SignerPattern& p : pins) matched = matched || CertificateMatches(leaf, p);
    if (matched) continue;
    std::string allowed;
    for (const SignerPattern& p : pins) allowed += (allowed.empty() ? "" : ", ") + p.ToString();
    return Status::PermissionDenied("signer not allowed: the certificate (" + CertificateIdentity(leaf) +
                                    ") matches none of the signers the trust store pins to CA " +
                                    NameText(X509_get_subject_name(ca)) + " (" + sources + "): " + allowed);
  }
  return Status::OK();
}

Result<SignerIdentity> VerifyWithChain(const OmsBundle& bundle, const TrustStore& trust) {
  if (trust.cas().empty())
    return Status::FailedPrecondition("the model is signed with a certificate but the trust store has no CA certificate (" +
                                      trust.description() + ")");
  KIMI_ASSIGN_OR_RETURN(X509Ptr leaf, ParseDer(bundle.certificates_der[0]));
  X509StackPtr untrusted(sk_X509_new_null());
  for (size_t i = 1; i < bundle.certificates_der.size(); ++i) {
    KIMI_ASSIGN_OR_RETURN(X509Ptr c, ParseDer(bundle.certificates_der[i]));
    sk_X509_push(untrusted.get(), c.release());
  }
  StorePtr store(X509_STORE_new());
  for (const TrustedCa& ca : trust.cas()) X509_STORE_add_cert(store.get(), ca.cert.get());
  // Before the chain: a TLS server certificate from a trusted CA is refused for what it is.
  KIMI_RETURN_IF_ERROR(CheckCodeSigningLeaf(leaf.get()));
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), untrusted.get());
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  if (X509_VERIFY_PARAM_set_purpose(param, ModelSigningPurpose()) != 1) {
    ERR_clear_error();
    return Status::Internal("the model-signing certificate purpose is not registered with OpenSSL");
  }
  // As the reference verifier does: the chain is judged at the moment the signing certificate
  // became valid, so a model signed during a certificate's life stays valid after it expires.
  KIMI_ASSIGN_OR_RETURN(time_t when, CertNotBefore(leaf.get()));
  X509_VERIFY_PARAM_set_time(param, when);
  if (X509_verify_cert(ctx.get()) != 1) {
    int err = X509_STORE_CTX_get_error(ctx.get());
    X509* at = X509_STORE_CTX_get_current_cert(ctx.get());
    ERR_clear_error();
    const std::string reason = err == X509_V_ERR_INVALID_PURPOSE && at != nullptr ? ChainPurposeRefusal(at)
                                                                                  : X509_verify_cert_error_string(err);
    return Status::PermissionDenied("untrusted certificate chain: " + reason + " (leaf " +
                                    NameText(X509_get_subject_name(leaf.get())) + ")");
  }
  STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(ctx.get());
  KIMI_RETURN_IF_ERROR(CheckPinnedSigners(leaf.get(), chain, trust));
  EVP_PKEY* key = X509_get0_pubkey(leaf.get());
  if (key == nullptr || DigestForKey(key) == nullptr)
    return Status::PermissionDenied("signing certificate's key is not ECDSA P-256/P-384/P-521");
  if (!SignatureMatches(key, bundle))
    return Status::PermissionDenied("invalid signature: the DSSE signature does not verify with the certificate's key");

  // The trusted CA the chain ends at, which is not the leaf's issuer when an intermediate is
  // between them: named so that the trust store can tell which of its CAs verified a model.
  X509* anchor = chain != nullptr && sk_X509_num(chain) > 0 ? sk_X509_value(chain, sk_X509_num(chain) - 1) : nullptr;
  SignerIdentity id;
  id.kind = SignerIdentity::Kind::kCertificate;
  id.fingerprint = DerFingerprint(leaf.get());
  id.description = "certificate " + NameText(X509_get_subject_name(leaf.get())) + " issued by " +
                   NameText(X509_get_issuer_name(leaf.get())) + " (sha256:" + id.fingerprint +
                   (anchor != nullptr ? "; trust anchor sha256:" + DerFingerprint(anchor) : std::string()) + ")";
  return id;
}

}  // namespace

std::string Pae(std::string_view payload_type, std::string_view payload) {
  std::string out = "DSSEv1 " + std::to_string(payload_type.size()) + " " + std::string(payload_type) + " " +
                    std::to_string(payload.size()) + " ";
  out.append(payload);
  return out;
}

std::string LegacyPae(std::string_view payload_type, std::string_view payload) {
  bool has_single = payload.find('\'') != std::string_view::npos;
  bool has_double = payload.find('"') != std::string_view::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string literal = "b";
  literal += quote;
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char c : payload) {
    if (c == static_cast<unsigned char>(quote) || c == '\\') {
      literal += '\\';
      literal += static_cast<char>(c);
    } else if (c == '\t') {
      literal += "\\t";
    } else if (c == '\n') {
      literal += "\\n";
    } else if (c == '\r') {
      literal += "\\r";
    } else if (c < 0x20 || c >= 0x7f) {
      literal += "\\x";
      literal += kHex[c >> 4];
      literal += kHex[c & 15];
    } else {
      literal += static_cast<char>(c);
    }
  }
  literal += quote;
  return "DSSEV1 " + std::to_string(payload_type.size()) + " " + std::string(payload_type) + " " +
         std::to_string(payload.size()) + " " + literal;
}

Result<SignerIdentity> VerifyEnvelopeSignature(const OmsBundle& bundle, const TrustStore& trust) {
  switch (bundle.kind) {
    case MaterialKind::kKeyless:
      return Status::FailedPrecondition(
          "keyless (Fulcio/Rekor) signature: offline verification needs a configured Sigstore trust root, and this "
          "appliance has none; re-sign the model with a key or a certificate chain from the operator's CA");
    case MaterialKind::kPublicKey:
      return VerifyWithKeys(bundle, trust);
    case MaterialKind::kCertificateChain:
      return VerifyWithChain(bundle, trust);
  }
  return Status::Internal("unknown verification material");
}

}  // namespace kimi::models
