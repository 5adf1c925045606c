#include "models/oms_code_signing.h"

#include <openssl/objects.h>
#include <openssl/x509v3.h>

#include <mutex>
#include <string>

#include "models/oms_identity.h"

namespace kimi::models {
namespace {

// Above every purpose OpenSSL defines (9 in 3.0, 10 in 3.2), and not one of them.
constexpr int kModelSigningPurposeId = 0x4b4d;

struct EkuFree {
  void operator()(EXTENDED_KEY_USAGE* p) const { EXTENDED_KEY_USAGE_free(p); }
};

// "serverAuth, clientAuth": the leaf's extended key usages by their short names.
std::string EkuNames(X509* cert) {
  std::unique_ptr<EXTENDED_KEY_USAGE, EkuFree> eku(
      static_cast<EXTENDED_KEY_USAGE*>(X509_get_ext_d2i(cert, NID_ext_key_usage, nullptr, nullptr)));
  std::string names;
  for (int i = 0; eku && i < sk_ASN1_OBJECT_num(eku.get()); ++i) {
    const ASN1_OBJECT* usage = sk_ASN1_OBJECT_value(eku.get(), i);
    const int nid = OBJ_obj2nid(usage);
    char oid[128];
    OBJ_obj2txt(oid, sizeof(oid), usage, 1);
    names += (names.empty() ? "" : ", ") + std::string(nid != NID_undef ? OBJ_nid2sn(nid) : oid);
  }
  return names;
}

// The flags OpenSSL caches on first use; `cert` is only read.
uint32_t Flags(const X509* cert) { return X509_get_extension_flags(const_cast<X509*>(cert)); }

bool LeafUsageAllowed(const X509* cert) {
  X509* c = const_cast<X509*>(cert);
  const uint32_t flags = Flags(cert);
  if ((flags & EXFLAG_XKUSAGE) == 0 || (X509_get_extended_key_usage(c) & XKU_CODE_SIGN) == 0) return false;
  return (flags & EXFLAG_KUSAGE) == 0 || (X509_get_key_usage(c) & KU_DIGITAL_SIGNATURE) != 0;
}

// OpenSSL calls this for every certificate of the chain: `ca` is non-zero above the leaf.
// A CA that restricts its extended key usage must allow codeSigning (or any usage), as
// OpenSSL's own purposes require of CAs for theirs; whether it is a CA at all is checked by
// the chain verification itself.
int CheckPurpose(const X509_PURPOSE*, const X509* cert, int ca) {
  if (ca == 0) return LeafUsageAllowed(cert) ? 1 : 0;
  if ((Flags(cert) & EXFLAG_XKUSAGE) == 0) return 1;
  return (X509_get_extended_key_usage(const_cast<X509*>(cert)) & (XKU_CODE_SIGN | XKU_ANYEKU)) != 0 ? 1 : 0;
}

}  // namespace

Status CheckCodeSigningLeaf(X509* leaf) {
  if (LeafUsageAllowed(leaf)) return Status::OK();
  const std::string who = "signing certificate " + NameText(X509_get_subject_name(leaf));
  const uint32_t flags = Flags(leaf);
  if ((flags & EXFLAG_XKUSAGE) == 0) {
    return Status::PermissionDenied(who + " is not a code-signing certificate: it has no extended key usage; a model "
                                          "signer needs codeSigning");
  }
  if ((X509_get_extended_key_usage(leaf) & XKU_CODE_SIGN) == 0) {
    return Status::PermissionDenied(who + " is not a code-signing certificate: its extended key usage is " +
                                    EkuNames(leaf) + "; a model signer needs codeSigning");
  }
  return Status::PermissionDenied(who + " has a key usage without digitalSignature: its key may not sign");
}

std::string ChainPurposeRefusal(X509* cert) {
  return "CA " + NameText(X509_get_subject_name(cert)) + " may not vouch for code signing: its extended key usage is " +
         EkuNames(cert);
}

int ModelSigningPurpose() {
  // A failure leaves the id unknown to OpenSSL, so X509_VERIFY_PARAM_set_purpose refuses it
  // and every certificate signature is refused: nothing is verified without the purpose.
  static std::once_flag once;
  std::call_once(once, [] {
    X509_PURPOSE_add(kModelSigningPurposeId, X509_TRUST_DEFAULT, 0, CheckPurpose, "Kimi model signing",
                     "kimimodelsign", nullptr);
  });
  return kModelSigningPurposeId;
}

namespace {
// OpenSSL's purpose table has no lock, and TLS handshakes on other threads read it: the
// purpose is added before main, while the process has one thread.
[[maybe_unused]] const int kRegisteredBeforeMain = ModelSigningPurpose();
}  // namespace

}  // namespace kimi::models
