#include "http/tls_reloader.h"

#include "auth/authenticator.h"
#include "kimi/log.h"

namespace kimi::http {

Result<std::unique_ptr<TlsReloader>> TlsReloader::Load(config::TlsConfig config) {
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<TlsContext> first, TlsContext::Load(config));
  return std::unique_ptr<TlsReloader>(new TlsReloader(std::move(config), std::move(first)));
}

TlsReloader::TlsReloader(config::TlsConfig config, std::shared_ptr<const TlsContext> first)
    : config_(std::move(config)), verifies_clients_(first->verifies_clients()), current_(std::move(first)) {}

std::shared_ptr<const TlsContext> TlsReloader::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

Result<std::string> TlsReloader::Reload() {
  Result<std::unique_ptr<TlsContext>> loaded = TlsContext::Load(config_);
  if (!loaded.ok()) {
    return Status::FailedPrecondition("the TLS certificate was not reloaded; the current one keeps serving: " +
                                      loaded.status().message());
  }
  std::shared_ptr<const TlsContext> next = std::move(loaded).value();
  std::string summary = next->summary();
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(next);
  return summary;
}

Result<std::string> ReloadTlsAudited(TlsReloader& tls, auth::Authenticator& authenticator, const auth::Actor& actor) {
  Result<std::string> reloaded = tls.Reload();
  const std::string detail = reloaded.ok() ? *reloaded : reloaded.status().message();
  if (reloaded.ok()) {
    log::Info("TLS certificate reloaded", {{"certificate", detail}, {"by", actor.id}});
  } else {
    log::Error("TLS certificate reload failed", {{"error", detail}, {"by", actor.id}});
  }
  Status recorded = authenticator.RecordEvent(actor, "tls.certificate_reloaded", "server.tls",
                                              reloaded.ok() ? "ok" : "failed", detail);
  if (!recorded.ok()) log::Warn("TLS reload not recorded in the audit log", {{"error", recorded.ToString()}});
  return reloaded;
}

}  // namespace kimi::http
