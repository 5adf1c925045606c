#include "models/oms_keys.h"

#include <openssl/core_names.h>
#include <openssl/pem.h>

#include "models/oms_encoding.h"

namespace kimi::models {
namespace {

std::string CurveName(EVP_PKEY* key) {
  char name[64] = {0};
  size_t len = 0;
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) return "";
  if (EVP_PKEY_get_group_name(key, name, sizeof(name), &len) != 1) return "";
  return std::string(name, len);
}

Status CheckSupported(EVP_PKEY* key) {
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) return Status::InvalidArgument("key is not an ECDSA key");
  if (DigestForKey(key) == nullptr)
    return Status::InvalidArgument("ECDSA curve \"" + CurveName(key) + "\" is not supported (P-256, P-384, P-521)");
  return Status::OK();
}

BioPtr MemBio(std::string_view text) { return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size()))); }

}  // namespace

const EVP_MD* DigestForKey(EVP_PKEY* key) {
  std::string curve = CurveName(key);
  if (curve == "prime256v1" || curve == "P-256") return EVP_sha256();
  if (curve == "secp384r1" || curve == "P-384") return EVP_sha384();
  if (curve == "secp521r1" || curve == "P-521") return EVP_sha512();
  return nullptr;
}

Result<SharedPkey> LoadPublicKeyPem(std::string_view pem) {
  BioPtr bio = MemBio(pem);
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) return Status::InvalidArgument("not a PEM public key: " + TakeOpensslError());
  SharedPkey shared(key, EVP_PKEY_free);
  KIMI_RETURN_IF_ERROR(CheckSupported(key));
  return shared;
}

Result<SharedPkey> LoadPrivateKeyPem(std::string_view pem) {
  BioPtr bio = MemBio(pem);
  // An empty passphrase callback: encrypted keys fail here instead of prompting a terminal.
  auto no_password = [](char*, int, int, void*) -> int { return 0; };
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, no_password, nullptr);
  if (key == nullptr) return Status::InvalidArgument("not an unencrypted PEM private key: " + TakeOpensslError());
  SharedPkey shared(key, EVP_PKEY_free);
  KIMI_RETURN_IF_ERROR(CheckSupported(key));
  return shared;
}

Result<std::vector<SharedX509>> LoadCertificatesPem(std::string_view pem) {
  BioPtr bio = MemBio(pem);
  std::vector<SharedX509> chain;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) chain.emplace_back(cert, X509_free);
  // The loop ends at the end of the text (PEM_R_NO_START_LINE) or at a block it cannot read.
  const unsigned long last = ERR_peek_last_error();
  const bool at_end = ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
  if (!at_end && last != 0) return Status::InvalidArgument("a certificate cannot be read: " + TakeOpensslError());
  ERR_clear_error();
  if (chain.empty()) return Status::InvalidArgument("no PEM CERTIFICATE block");
  return chain;
}

std::string PublicKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PUBKEY(bio.get(), key) != 1) return "";
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

std::string KeyFingerprint(EVP_PKEY* key) {
  std::string pem = PublicKeyPem(key);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(pem.data(), pem.size(), digest, &len, EVP_sha256(), nullptr);
  return HexEncode(std::string_view(reinterpret_cast<char*>(digest), len));
}

bool EcdsaVerify(EVP_PKEY* key, std::string_view message, std::string_view der_signature, const EVP_MD* md) {
  if (md == nullptr) md = DigestForKey(key);
  if (md == nullptr) return false;
  MdCtxPtr ctx(EVP_MD_CTX_new());
  bool ok = EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) == 1 &&
            EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(der_signature.data()), der_signature.size(),
                             reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  ERR_clear_error();
  return ok;
}

Result<std::string> EcdsaSign(EVP_PKEY* key, std::string_view message) {
  const EVP_MD* md = DigestForKey(key);
  if (md == nullptr) return Status::InvalidArgument("unsupported signing key");
  MdCtxPtr ctx(EVP_MD_CTX_new());
  size_t len = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, md, nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1)
    return Status::Internal("ECDSA signing failed: " + TakeOpensslError());
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1)
    return Status::Internal("ECDSA signing failed: " + TakeOpensslError());
  sig.resize(len);
  return sig;
}

Result<SharedPkey> GenerateP256Key() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (key == nullptr) return Status::Internal("P-256 key generation failed: " + TakeOpensslError());
  return SharedPkey(key, EVP_PKEY_free);
}

Result<std::string> PrivateKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return Status::Internal("cannot encode private key: " + TakeOpensslError());
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

}  // namespace kimi::models
