#include "auth/self_signed_certificate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "kimi/durable_file.h"

namespace kimi::auth {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;

Status OpenSslFailure(const std::string& what) {
  unsigned long code = ERR_get_error();
  char buf[256] = "no detail from OpenSSL";
  if (code != 0) ERR_error_string_n(code, buf, sizeof buf);
  ERR_clear_error();
  return Status::Internal(what + ": " + buf);
}

bool IsIpAddress(const std::string& name) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, name.c_str(), buf) == 1 || inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

// Host names of letters, digits, '-', '.' and a leading "*." wildcard; these also keep the
// OpenSSL extension text free of its separators.
bool IsDnsName(const std::string& name) {
  std::string_view rest = name;
  if (rest.starts_with("*.")) rest.remove_prefix(2);
  return !rest.empty() && rest.size() <= 253 && rest.front() != '.' && rest.front() != '-' &&
         std::all_of(rest.begin(), rest.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
         });
}

Status AddExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return OpenSslFailure(std::string("cannot make the extension ") + OBJ_nid2sn(nid));
  int added = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return added == 1 ? Status::OK() : OpenSslFailure("cannot add an extension");
}

Result<X509Ptr> MakeCertificate(const SelfSignedSpec& spec, EVP_PKEY* key) {
  X509Ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), X509_VERSION_3) != 1) return OpenSslFailure("cannot create a certificate");
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return OpenSslFailure("no random serial number");
  serial[0] &= 0x7f;  // a positive INTEGER
  BnPtr bn(BN_bin2bn(serial, sizeof serial, nullptr));
  if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return OpenSslFailure("cannot set the serial number");
  }
  // A minute of slack for clocks slightly behind the one that made it.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), spec.valid_days * 86'400);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(spec.common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_set_pubkey(cert.get(), key) != 1) return OpenSslFailure("cannot set the public key");

  std::string san;
  for (const std::string& entry : SubjectAltNames(spec.names)) san += (san.empty() ? "" : ",") + entry;
  // Its own trust anchor: clients configure this file as their CA, so it is a CA that may
  // sign nothing below it, and a server certificate.
  KIMI_RETURN_IF_ERROR(AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  KIMI_RETURN_IF_ERROR(AddExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign"));
  KIMI_RETURN_IF_ERROR(AddExtension(cert.get(), NID_ext_key_usage, "serverAuth"));
  KIMI_RETURN_IF_ERROR(AddExtension(cert.get(), NID_subject_key_identifier, "hash"));
  KIMI_RETURN_IF_ERROR(AddExtension(cert.get(), NID_authority_key_identifier, "keyid:always"));
  KIMI_RETURN_IF_ERROR(AddExtension(cert.get(), NID_subject_alt_name, san));
  if (X509_sign(cert.get(), key, EVP_sha256()) == 0) return OpenSslFailure("cannot sign the certificate");
  return cert;
}

template <typename WritePem>
Result<std::string> Pem(WritePem write) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return OpenSslFailure("cannot encode PEM");
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

Status WriteFile(const std::string& path, const std::string& text, mode_t mode, bool overwrite) {
  Status s = WriteFileAtomically(path, text, mode, overwrite ? IfExists::kReplace : IfExists::kRefuse);
  if (s.code() == Status::Code::kAlreadyExists) return Status::AlreadyExists(path + " exists; pass --force to replace it");
  return s;
}

}  // namespace

std::vector<std::string> SubjectAltNames(const std::vector<std::string>& names) {
  std::vector<std::string> all = {"localhost", "127.0.0.1", "::1"};
  all.insert(all.end(), names.begin(), names.end());
  std::vector<std::string> out;
  for (const std::string& n : all) {
    std::string entry = (IsIpAddress(n) ? "IP:" : "DNS:") + n;
    if (std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(entry);
  }
  return out;
}

Status WriteSelfSignedCertificate(const SelfSignedSpec& spec) {
  if (spec.valid_days < 1 || spec.valid_days > 3650) return Status::InvalidArgument("validity must be 1..3650 days");
  if (spec.cert_path.empty() || spec.key_path.empty()) return Status::InvalidArgument("certificate and key paths are required");
  if (!IsDnsName(spec.common_name)) return Status::InvalidArgument("not a host name: '" + spec.common_name + "'");
  for (const std::string& n : spec.names) {
    if (!IsIpAddress(n) && !IsDnsName(n)) return Status::InvalidArgument("not a host name or IP address: '" + n + "'");
  }
  if (!spec.overwrite) {
    for (const std::string& path : {spec.cert_path, spec.key_path}) {
      if (::access(path.c_str(), F_OK) == 0) return Status::AlreadyExists(path + " exists; pass --force to replace it");
    }
  }
  ERR_clear_error();
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslFailure("cannot generate a P-256 key");
  KIMI_ASSIGN_OR_RETURN(X509Ptr cert, MakeCertificate(spec, key.get()));
  KIMI_ASSIGN_OR_RETURN(std::string key_pem, Pem([&](BIO* b) {
                          return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
                        }));
  KIMI_ASSIGN_OR_RETURN(std::string cert_pem, Pem([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); }));
  // The key first: a certificate without its key is useless, a key without a certificate harmless.
  KIMI_RETURN_IF_ERROR(WriteFile(spec.key_path, key_pem, 0600, spec.overwrite));
  return WriteFile(spec.cert_path, cert_pem, 0644, spec.overwrite);
}

}  // namespace kimi::auth
