// What makes a certificate fit to sign models: the leaf is a code-signing certificate
// (extended key usage codeSigning; digitalSignature when it has a key usage extension), and
// the chain above it is verified under the same purpose, so a CA whose extended key usage
// excludes codeSigning cannot vouch for a model signer. A TLS server certificate from the
// same trusted CA (serverAuth only) is refused.
//
// OpenSSL 3.0 (Debian 12) has no code-signing purpose (X509_PURPOSE_CODE_SIGN arrived in
// 3.2, with CA/Browser Forum rules stricter than ours), so the purpose is registered here
// once, process-wide, under kModelSigningPurpose.
//
// Thread safety: CheckCodeSigningLeaf is pure. The purpose is registered during static
// initialisation (OpenSSL's purpose table is not locked and TLS handshakes read it), so
// ModelSigningPurpose only returns its id and may be called from any thread.
#pragma once

#include "kimi/status.h"
#include "models/oms_openssl.h"

namespace kimi::models {

// OK, or PermissionDenied saying what the leaf lacks ("... is not a code-signing certificate:
// its extended key usage is serverAuth; a model signer needs codeSigning").
Status CheckCodeSigningLeaf(X509* leaf);

// Why the chain check refused `cert`, a CA above the leaf, for the purpose ("CA CN=x may not
// vouch for code signing: its extended key usage is serverAuth").
std::string ChainPurposeRefusal(X509* cert);

// The X509_PURPOSE id to give X509_VERIFY_PARAM_set_purpose for model signatures.
int ModelSigningPurpose();

}  // namespace kimi::models
