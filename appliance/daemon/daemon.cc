#include "daemon/daemon.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "audit/record_builder.h"
#include "daemon/daemon_parts.h"
#include "daemon/signals.h"
#include "kimi/log.h"

namespace kimi::daemon {
namespace {

// How long the stop may take after the grace period (closing the stores, unloading the model)
// before the process ends regardless.
constexpr std::chrono::milliseconds kStopAfterGrace{3000};

}  // namespace

Status Refuse(std::string_view message, std::initializer_list<log::Field> fields) {
  log::Error(message, fields);
  return Status::FailedPrecondition("not starting: " + std::string(message));
}

Status RecordServiceEvent(audit::AuditSink& sink, const std::string& action, const std::string& detail) {
  return sink.Record(audit::RecordBuilder::ServiceEvent(action, detail).Build()).WaitCommitted();
}

std::string AuditDbPath(const config::AppConfig& config) {
  return config.storage.data_dir + "/" + std::string(audit::kAuditDbFile);
}

Daemon::Daemon(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}
Daemon::~Daemon() = default;

const std::string& Daemon::bound_address() const {
  return parts_->server->bound_address();
}

Result<std::unique_ptr<Daemon>> Daemon::Open(config::AppConfig config, DaemonArgs args) {
  std::unique_ptr<Daemon> daemon(new Daemon(std::make_unique<Parts>(std::move(config), std::move(args))));
  using Step = Status (Daemon::*)();
  static constexpr Step kSteps[] = {
      &Daemon::OpenLogging, &Daemon::OpenTls,    &Daemon::OpenBackends, &Daemon::OpenListener,
      &Daemon::OpenStores,  &Daemon::OpenAudit,  &Daemon::OpenAuth,     &Daemon::OpenPolicy,
      &Daemon::Announce,    &Daemon::OpenModels, &Daemon::OpenServer,
  };
  for (Step step : kSteps) KIMI_RETURN_IF_ERROR((daemon.get()->*step)());
  return daemon;
}

Status Daemon::Run() {
  Parts& p = *parts_;
  std::thread model_loader([&p] { p.served_model->Start(); });
  std::atomic<bool> done{false};
  // SIGHUP: reload the TLS certificate and check the served model's bytes now.
  // The served model goes before the signal thread does: hangup_mu orders the two.
  std::mutex hangup_mu;
  models::ServedModel* hangup_model = p.served_model.get();  // guarded by hangup_mu
  std::function<void()> on_hangup = [&p, &hangup_mu, &hangup_model] {
    if (p.tls != nullptr) (void)p.ReloadTls({"SIGHUP", "system", "local"});
    std::lock_guard<std::mutex> lock(hangup_mu);
    if (hangup_model != nullptr) hangup_model->CheckIntegrityNow();
  };
  const auto force_after = std::chrono::milliseconds(p.config.limits.shutdown_grace_ms) + kStopAfterGrace;
  std::thread signals(WatchSignals, p.server.get(), &done, force_after, std::move(on_hangup));
  p.history_sampler->Start();
  p.server->Run();
  // The sampler reads the engine through the refresh: stopped before the model unloads.
  p.history_sampler->Stop();
  model_loader.join();
  // The stop, in the reverse order of the steps that opened what it closes.
  // Cancels a running import, detaches and unloads the engine; its acts are audited, so
  // before the audit log closes.
  p.model_admin->Close();
  {
    std::lock_guard<std::mutex> lock(hangup_mu);
    hangup_model = nullptr;
  }
  p.served_model.reset();

  p.auth_outbox->Stop();
  if (Status drained = p.auth_outbox->Drain(); !drained.ok()) {
    log::Error("auth events left in the outbox for the next start", {{"error", drained.ToString()}});
  }
  p.authenticator->Close();  // writes the keys' usage rows not written yet
  p.auth_store->Close();

  p.audit_full_check.reset();
  p.auditor->StopCountFlusher();
  p.auditor->RecordAllCounted();
  // Every request has been answered (and so recorded); the stop is the log's last record, and
  // Close() signs the head that covers it.
  Status stop_recorded = RecordServiceEvent(*p.audit_sink, "service.stop", "clean shutdown");
  if (!stop_recorded.ok()) {
    log::Error("cannot record the service stop in the audit log", {{"error", stop_recorded.ToString()}});
  }
  Status audit_closed = p.audit_sink->Close();
  p.readiness->MarkPending("audit", "closed: shutting down");
  if (!audit_closed.ok()) {
    log::Error("closing the audit log failed", {{"error", audit_closed.ToString()}});
  } else {
    log::Info("audit log closed", {{"records", static_cast<int64_t>(p.audit_sink->TreeSize())}});
  }
  p.readiness->MarkPending("database", "closed: shutting down");
  Status closed = p.store->Close();
  if (!closed.ok()) {
    log::Error("closing the database failed", {{"error", closed.message()}});
  } else {
    log::Info("database closed", {{"path", p.store->path()}});
  }
  done.store(true);
  signals.join();
  log::Info("stopped");
  if (!stop_recorded.ok()) return stop_recorded;
  if (!audit_closed.ok()) return audit_closed;
  return closed;
}

}  // namespace kimi::daemon
