// The steps of Daemon::Open (daemon.h) that serve inference: the backends (embedded engine,
// router, SLO series, request rules); the "listening" announcement and the console; the trust
// store, the model store, the served model and the model admin.
#include "daemon/daemon_parts.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "daemon/module_options.h"
#include "kimi/utc_time.h"

namespace kimi::daemon {

// The router chooses among the embedded engine and the configured upstreams; with no
// `router.backends` it serves the embedded engine alone.
Status Daemon::OpenBackends() {
  const config::AppConfig& config = parts_->config;
  http::Readiness& readiness = *parts_->readiness;
  parts_->embedded = std::make_shared<api::EmbeddedBackend>(config.model.served_id);
  // With upstreams configured, "router" is a readiness component that stays ready (the router
  // routes around a failing backend) and keeps the last backend failure for the operator.
  std::function<void(const std::string&, const Status&, bool)> on_backend_failure;
  if (!config.router.backends.empty()) {
    std::string names;
    for (const auto& b : config.router.backends) names += (names.empty() ? "" : ", ") + b.name;
    readiness.MarkReady("router", "backends: " + names);
    on_backend_failure = [&readiness](const std::string& backend, const Status& error, bool opened) {
      readiness.RecordFailure("router", "backend " + backend + " failed" +
                                            (opened ? " and its circuit breaker opened" : "") + ": " +
                                            error.ToString());
    };
  }
  Result<std::unique_ptr<router::Router>> router =
      router::BuildRouter(config.router, parts_->embedded, &parts_->registry, std::move(on_backend_failure));
  if (!router.ok())
    return Refuse("cannot build the inference router", {{"error", router.status().ToString()}});
  parts_->router = std::move(router).value();
  // Every request is timed against the active policy's service levels (/metrics), whichever
  // backend the router picks.
  parts_->slo_metrics = std::make_unique<policy::SloMetrics>(&parts_->registry);
  for (const config::ModelRulesConfig& entry : config.request_rules) {
    if (Status added = parts_->request_rules.Add(entry.model, entry.rules); !added.ok()) {
      return Refuse("bad request_rules entry", {{"model", entry.model}, {"error", added.ToString()}});
    }
  }
  // The trust store models are verified with (the admin API edits it), read before anything is
  // listened on or created: an unreadable one is a configuration error, refused with nothing made.
  // Its edits are audited through the log, which opens later.
  parts_->trust_directory = std::make_unique<models::TrustDirectory>(
      config.model.trust_store,
      [parts = parts_.get()](audit::AuditRecord record) { return parts->audit_sink->Record(std::move(record)).WaitCommitted(); });
  if (Status trusted = parts_->trust_directory->Load(); !trusted.ok()) {
    return Refuse("cannot read the trust store", {{"path", config.model.trust_store}, {"error", trusted.ToString()}});
  }
  return Status::OK();
}

// Connections that arrive from here on are served; the kernel queues them until Run().
Status Daemon::Announce() {
  const config::AppConfig& config = parts_->config;
  const std::string& address = parts_->listener->bound_address();
  log::Info("listening", {{"address", address},
                          {"url", (parts_->tls ? "https://" : "http://") + address + "/"},
                          {"max_connections", config.limits.max_connections}});
  parts_->console = std::make_unique<http::ConsoleAssets>(config.console.assets_dir);
  if (parts_->console->Installed()) {
    log::Info("console",
              {{"url", "http://" + address + "/console/"}, {"assets_dir", parts_->console->root()}});
  } else if (!config.console.assets_dir.empty()) {
    log::Warn("the console is not installed; /console/ answers 404",
              {{"assets_dir", parts_->console->root()}});
  }
  return Status::OK();
}

// The model store and what the engine serves (models/served_model.h), verified against the trust
// store OpenBackends read: the store's active version of model.store_id, else model.dir. The model loads in Run(), while the server answers: probes
// work and the API says 503 until then. Every model act is audited.
Status Daemon::OpenModels() {
  const config::AppConfig& config = parts_->config;
  audit::AuditSink* sink = parts_->audit_sink.get();
  auto audit_act = [sink](audit::AuditRecord record) {
    return sink->Record(std::move(record)).WaitCommitted();
  };
  models::ServedModelOptions options;
  options.model_id = config.model.store_id;
  options.data_dir = config.storage.data_dir;
  options.trust_store = config.model.trust_store;
  options.trust_directory = parts_->trust_directory.get();
  options.direct_dir = config.model.dir;
  options.service = ServiceOptionsFrom(config.model);
  options.db = parts_->store.get();
  options.audit = audit_act;
  options.audit_in_transaction = auth::InsertAuditRecord;
  options.after_commit = [outbox = parts_->auth_outbox.get()] { return outbox->Drain(); };
  options.on_state = [readiness = parts_->readiness.get()](models::ServingState state,
                                                           const std::string& detail) {
    switch (state) {
      case models::ServingState::kServing:
        readiness->MarkReady("model", detail);
        break;
      case models::ServingState::kPending:
        readiness->MarkPending("model", detail);
        break;
      case models::ServingState::kFailed:
        readiness->MarkNotReady("model", detail);
        break;
    }
  };
  options.integrity_interval = std::chrono::seconds(config.model.integrity_interval_s);
  options.integrity_bytes_per_second = static_cast<uint64_t>(config.model.integrity_mib_per_second) << 20;
  Result<std::unique_ptr<models::ServedModel>> served =
      models::ServedModel::Open(std::move(options), parts_->embedded.get());
  if (!served.ok()) return Refuse("cannot open the model store", {{"error", served.status().ToString()}});
  parts_->served_model = std::move(served).value();
  models::ModelAdminOptions admin_options;
  admin_options.import_roots = config.model.import_roots;
  // The console's Models screen shows what serves, also when it is model.dir and the store is
  // empty (a first start).
  admin_options.serving = [served = parts_->served_model.get(), served_id = config.model.served_id,
                           store_id = config.model.store_id]() -> nlohmann::json {
    std::optional<models::ServedVersion> current = served->Current();
    if (!current) return nullptr;
    return nlohmann::json{{"model", served_id},
                          {"store_id", store_id},
                          {"digest", current->digest},
                          {"version", current->version},
                          {"signer", current->signer},
                          {"origin", current->origin},
                          {"since", FormatUtcMillis(current->since_unix_s * 1000)}};
  };
  parts_->model_admin = std::make_unique<models::ModelAdmin>(parts_->served_model->store(), admin_options);
  return Status::OK();
}

}  // namespace kimi::daemon
