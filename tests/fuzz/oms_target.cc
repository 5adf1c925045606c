// model.sig as the verifier reads it from an untrusted model directory (oms_verifier.h steps
// 1-3): the Sigstore bundle, the DSSE signature against a trust store (the test vectors'
// key and CA), the signed statement. The statement is parsed whether or not the signature
// held, and the input itself is parsed as a statement too: the signature protects a
// well-behaved appliance, not the parser from a signer's bytes.
#include <string_view>

#include "fuzz_support.h"
#include "fuzz_targets.h"
#include "models/oms_bundle.h"
#include "models/oms_signature.h"
#include "models/oms_statement.h"
#include "models/oms_trust.h"

namespace kimi::fuzz {
namespace {

const models::TrustStore& TestTrust() {
  static const models::TrustStore* trust = [] {
    auto out = new models::TrustStore();
    for (const char* file : {"signing-key-pub.pem", "ca-cert.pem"}) {
      Status added = out->AddPemFile(SourcePath(std::string("tests/data/model-signing/keys/") + file));
      if (!added.ok()) SetupFailed(added.ToString());
    }
    return out;
  }();
  return *trust;
}

void TouchStatement(std::string_view payload) {
  Result<models::SignedStatement> statement = models::ParseStatement(payload);
  if (!statement.ok()) return;
  for (const models::ManifestResource& r : statement->resources) {
    if (!models::CheckModelRelativePath(r.path).ok()) __builtin_trap();  // refused at parse
    (void)models::ShardName(r.path, r.start, r.end);
  }
}

}  // namespace

bool FuzzOmsBundleOnce(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  TouchStatement(text);
  Result<models::OmsBundle> bundle = models::ParseBundle(text);
  if (!bundle.ok()) return false;
  (void)models::VerifyEnvelopeSignature(*bundle, TestTrust());
  TouchStatement(bundle->payload);
  return true;
}

}  // namespace kimi::fuzz
