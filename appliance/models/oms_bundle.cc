#include "models/oms_bundle.h"

#include <nlohmann/json.hpp>

#include "kimi/log.h"
#include "kimi/untrusted_json.h"
#include "models/oms_encoding.h"

namespace kimi::models {
namespace {

using Json = nlohmann::json;

Status Refuse(std::string_view what) { return Status::InvalidArgument("signature bundle: " + std::string(what)); }

Result<std::string> StringField(const Json& obj, const char* key, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Refuse(std::string("missing field \"") + key + "\"");
    return std::string();
  }
  if (!it->is_string()) return Refuse(std::string("field \"") + key + "\" is not a string");
  return it->get<std::string>();
}

Result<std::string> Base64Field(const Json& obj, const char* key) {
  KIMI_ASSIGN_OR_RETURN(std::string text, StringField(obj, key, true));
  auto bytes = Base64Decode(text);
  if (!bytes.ok()) return Refuse(std::string("field \"") + key + "\": " + bytes.status().message());
  return std::move(bytes).value();
}

void LogUnknownFields(const Json& obj, std::initializer_list<std::string_view> known, std::string_view where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool is_known = false;
    for (auto k : known) is_known = is_known || it.key() == k;
    if (!is_known) log::Warn("signature bundle has an unknown field", {{"field", it.key()}, {"in", where}});
  }
}

Status ParseMaterial(const Json& material, OmsBundle* out) {
  if (!material.is_object()) return Refuse("\"verificationMaterial\" is not an object");
  LogUnknownFields(material, {"publicKey", "x509CertificateChain", "certificate", "tlogEntries", "timestampVerificationData"},
                   "verificationMaterial");
  int kinds = int(material.contains("publicKey")) + int(material.contains("x509CertificateChain")) +
              int(material.contains("certificate"));
  if (kinds != 1) return Refuse("verificationMaterial must hold exactly one of publicKey, x509CertificateChain, certificate");

  if (material.contains("certificate")) {
    // A lone certificate is what Fulcio issues for keyless signing; its trust comes from
    // Sigstore's roots and the Rekor entry, neither of which is reachable air-gapped.
    out->kind = MaterialKind::kKeyless;
    return Status::OK();
  }
  if (auto it = material.find("publicKey"); it != material.end()) {
    if (!it->is_object()) return Refuse("\"publicKey\" is not an object");
    out->kind = MaterialKind::kPublicKey;
    KIMI_ASSIGN_OR_RETURN(out->key_hint, StringField(*it, "hint", false));
    if (it->contains("rawBytes")) {
      KIMI_ASSIGN_OR_RETURN(out->embedded_public_key_pem, Base64Field(*it, "rawBytes"));
    }
    return Status::OK();
  }
  const Json& chain = material["x509CertificateChain"];
  if (!chain.is_object() || !chain.contains("certificates") || !chain["certificates"].is_array())
    return Refuse("\"x509CertificateChain.certificates\" is not an array");
  if (chain["certificates"].empty()) return Refuse("certificate chain is empty");
  out->kind = MaterialKind::kCertificateChain;
  for (const Json& cert : chain["certificates"]) {
    if (!cert.is_object()) return Refuse("a certificate entry is not an object");
    KIMI_ASSIGN_OR_RETURN(std::string der, Base64Field(cert, "rawBytes"));
    out->certificates_der.push_back(std::move(der));
  }
  return Status::OK();
}

}  // namespace

Result<OmsBundle> ParseBundle(std::string_view json_text) {
  if (json_text.size() > kMaxBundleBytes) return Refuse("larger than the 64 MiB limit");
  Result<Json> parsed = ParseUntrustedJson(json_text, "the bundle", kMaxFileJsonNesting);
  if (!parsed.ok()) return Refuse(parsed.status().message());
  Json root = std::move(*parsed);
  if (!root.is_object()) return Refuse("top level is not a JSON object");
  LogUnknownFields(root, {"mediaType", "verificationMaterial", "dsseEnvelope", "messageSignature"}, "bundle");

  KIMI_ASSIGN_OR_RETURN(std::string media_type, StringField(root, "mediaType", true));
  if (media_type != kBundleMediaType)
    return Refuse("unknown mediaType \"" + media_type + "\" (expected " + std::string(kBundleMediaType) + ")");
  if (root.contains("messageSignature")) return Refuse("holds a messageSignature; model signatures are DSSE envelopes");
  if (!root.contains("verificationMaterial")) return Refuse("missing field \"verificationMaterial\"");
  auto env_it = root.find("dsseEnvelope");
  if (env_it == root.end() || !env_it->is_object()) return Refuse("missing DSSE envelope \"dsseEnvelope\"");

  OmsBundle bundle;
  KIMI_RETURN_IF_ERROR(ParseMaterial(root["verificationMaterial"], &bundle));

  const Json& envelope = *env_it;
  LogUnknownFields(envelope, {"payload", "payloadType", "signatures"}, "dsseEnvelope");
  KIMI_ASSIGN_OR_RETURN(bundle.payload_type, StringField(envelope, "payloadType", true));
  if (bundle.payload_type != kInTotoPayloadType)
    return Refuse("wrong payloadType \"" + bundle.payload_type + "\" (expected " + std::string(kInTotoPayloadType) + ")");
  KIMI_ASSIGN_OR_RETURN(bundle.payload, Base64Field(envelope, "payload"));
  auto sigs = envelope.find("signatures");
  if (sigs == envelope.end() || !sigs->is_array()) return Refuse("missing \"signatures\" array");
  if (sigs->size() != 1) return Refuse("expected exactly one signature, found " + std::to_string(sigs->size()));
  if (!(*sigs)[0].is_object()) return Refuse("signature entry is not an object");
  KIMI_ASSIGN_OR_RETURN(bundle.signature, Base64Field((*sigs)[0], "sig"));
  if (bundle.signature.empty()) return Refuse("signature is empty");
  return bundle;
}

}  // namespace kimi::models
