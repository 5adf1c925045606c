#include "http/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "kimi/utc_time.h"

namespace kimi::http {
namespace {

// TLS 1.2 suites: ECDHE key exchange (forward secrecy) with an AEAD cipher only.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

std::string OpenSslErrors() {
  std::string out;
  while (unsigned long code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "no detail from OpenSSL" : out;
}

Status Readable(const std::string& path, const char* what, const char* key) {
  if (path.empty()) return Status::FailedPrecondition(std::string("$.server.tls.") + key + ": the " + what + " file is not set");
  if (::access(path.c_str(), R_OK) != 0) {
    return Status::FailedPrecondition(std::string("cannot read the TLS ") + what + " " + path + ": " + std::strerror(errno));
  }
  return Status::OK();
}

std::string Describe(X509* cert) {
  char subject[256] = "?";
  X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof subject);
  std::tm tm{};
  std::string expiry = "?";
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) == 1) expiry = FormatUtcMillis(int64_t{timegm(&tm)} * 1000);
  return std::string(subject) + ", valid until " + expiry;
}

Status KeyMismatch(const config::TlsConfig& config) {
  return Status::FailedPrecondition("the TLS private key " + config.key_file + " does not match the certificate " +
                                    config.cert_file);
}

}  // namespace

TlsContext::~TlsContext() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

Result<std::unique_ptr<TlsContext>> TlsContext::Load(const config::TlsConfig& config) {
  KIMI_RETURN_IF_ERROR(Readable(config.cert_file, "certificate", "cert_file"));
  KIMI_RETURN_IF_ERROR(Readable(config.key_file, "private key", "key_file"));
  std::unique_ptr<TlsContext> out(new TlsContext());
  ERR_clear_error();
  out->ctx_ = SSL_CTX_new(TLS_server_method());
  if (out->ctx_ == nullptr) return Status::Internal("cannot create a TLS context: " + OpenSslErrors());
  SSL_CTX* ctx = out->ctx_;
  SSL_CTX_set_min_proto_version(ctx, config.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                               SSL_OP_NO_TICKET);
  if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1) {
    return Status::Internal("cannot set the TLS 1.2 cipher suites: " + OpenSslErrors());
  }
  if (SSL_CTX_use_certificate_chain_file(ctx, config.cert_file.c_str()) != 1) {
    return Status::FailedPrecondition("the TLS certificate " + config.cert_file +
                                      " is not a PEM certificate (chain): " + OpenSslErrors());
  }
  // No passphrase prompt on the terminal: an encrypted key fails to load instead.
  SSL_CTX_set_default_passwd_cb(ctx, [](char*, int, int, void*) { return 0; });
  if (SSL_CTX_use_PrivateKey_file(ctx, config.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return KeyMismatch(config);
    }
    return Status::FailedPrecondition("the TLS private key " + config.key_file +
                                      " is not a PEM private key (an encrypted key is not supported): " + OpenSslErrors());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return KeyMismatch(config);
  }
  if (!config.admin_client_ca_file.empty()) {
    KIMI_RETURN_IF_ERROR(Readable(config.admin_client_ca_file, "client CA", "admin_client_ca_file"));
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config.admin_client_ca_file.c_str());
    if (names == nullptr || SSL_CTX_load_verify_locations(ctx, config.admin_client_ca_file.c_str(), nullptr) != 1) {
      if (names != nullptr) sk_X509_NAME_pop_free(names, X509_NAME_free);
      return Status::FailedPrecondition("the client CA file " + config.admin_client_ca_file +
                                        " holds no PEM certificate: " + OpenSslErrors());
    }
    SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, nullptr);
    static const unsigned char kSessionContext[] = "kimi-appliance";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
    out->verifies_clients_ = true;
  }
  out->summary_ = Describe(SSL_CTX_get0_certificate(ctx));
  return out;
}

}  // namespace kimi::http
