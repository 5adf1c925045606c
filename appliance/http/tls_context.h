// TlsContext: the server's TLS configuration as OpenSSL holds it (one SSL_CTX): the
// certificate chain and private key from server.tls, the lowest protocol version allowed
// (TLS 1.2 or 1.3), forward-secret AEAD cipher suites only for TLS 1.2, no compression, no
// renegotiation, no session tickets (no key to rotate). Loading checks what would otherwise
// fail on the first client: unreadable files, a key that does not match the certificate.
// With admin_client_ca_file, clients are asked (not required) for a certificate that CA
// issued; one that it did not issue fails the handshake (transport.h reports the result).
//
// Owns the SSL_CTX. Thread safety: immutable after Load(); OpenSSL allows one SSL_CTX to
// create sessions on many threads at once.
#pragma once

#include <openssl/types.h>

#include <memory>
#include <string>

#include "config/config.h"
#include "kimi/status.h"

namespace kimi::http {

class TlsContext {
 public:
  // FailedPrecondition naming the file and the reason when the certificate or the key
  // cannot be read or parsed, or the key is not the certificate's.
  static Result<std::unique_ptr<TlsContext>> Load(const config::TlsConfig& config);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* get() const { return ctx_; }
  // Connections are asked for a client certificate (server.tls.admin_client_ca_file).
  bool verifies_clients() const { return verifies_clients_; }
  // "CN=appliance.example, expires 2027-11-30T05:00:00Z": for the start-up log line.
  const std::string& summary() const { return summary_; }

 private:
  TlsContext() = default;
  SSL_CTX* ctx_ = nullptr;
  std::string summary_;
  bool verifies_clients_ = false;
};

}  // namespace kimi::http
