// TlsReloader: the TLS context that new connections use, replaceable while the daemon runs.
// Reload() reads server.tls's certificate, key (and client CA) again (tls_context.h); when
// they load, connections accepted from then on use them, and connections already open keep
// the context they started with (OpenSSL counts its references). When they do not load, the
// context serving now stays and the error says why. SIGHUP and POST /admin/v1/tls/reload
// both come here, through ReloadTlsAudited(), which records each attempt in the audit log.
// Public header of http/: other folders include it.
// Thread safety: Current() and Reload() may be called from any thread at once.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "config/config.h"
#include "http/tls_context.h"
#include "kimi/status.h"

namespace kimi::auth {
class Authenticator;
struct Actor;
}  // namespace kimi::auth

namespace kimi::http {

class TlsReloader {
 public:
  // The first load; its errors are TlsContext::Load's.
  static Result<std::unique_ptr<TlsReloader>> Load(config::TlsConfig config);
  TlsReloader(const TlsReloader&) = delete;
  TlsReloader& operator=(const TlsReloader&) = delete;

  // The context for a connection starting now; hold it until SSL_new() has taken its reference.
  std::shared_ptr<const TlsContext> Current() const;
  // The new certificate's summary, or the load error with the old context still serving.
  Result<std::string> Reload();
  // Whether connections are asked for a client certificate; fixed by the configuration.
  bool verifies_clients() const { return verifies_clients_; }

 private:
  TlsReloader(config::TlsConfig config, std::shared_ptr<const TlsContext> first);

  const config::TlsConfig config_;
  const bool verifies_clients_;
  mutable std::mutex mu_;
  std::shared_ptr<const TlsContext> current_;  // guarded by mu_
};

// Reloads and records the attempt as the auth event "tls.certificate_reloaded" (outcome "ok"
// with the new certificate, or "failed" with the reason) by `actor`; returns Reload()'s result.
Result<std::string> ReloadTlsAudited(TlsReloader& tls, auth::Authenticator& authenticator, const auth::Actor& actor);

}  // namespace kimi::http
