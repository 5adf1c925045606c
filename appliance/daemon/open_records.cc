// The steps of Daemon::Open (daemon.h) that open appliance.db and what records in it: the
// data directory and the migrated database; the audit log with its start-up records and the
// request auditor; the auth store and its outbox; the active policy.
#include "daemon/daemon_parts.h"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "audit/audit_key.h"
#include "audit/record_builder.h"
#include "audit/settings_change.h"
#include "auth/server_secret.h"
#include "build_info.h"
#include "daemon/module_options.h"
#include "migrations/all_migrations.h"
#include "policy/content_storage.h"
#include "policy/default_policy.h"
#include "store/owner_only.h"

namespace kimi::daemon {

Status Daemon::OpenStores() {
  const std::string& data_dir = parts_->config.storage.data_dir;
  // Files an older version or a tool left readable by others are tightened before any is opened.
  // The two secrets keep their own stricter rule: one found readable by others is refused
  // (it may have been copied), not tightened and trusted.
  const std::string secrets[] = {(std::filesystem::path(data_dir) / audit::kAuditKeyFile).string(),
                                 (std::filesystem::path(data_dir) / auth::kServerSecretFile).string()};
  Result<std::vector<std::string>> tightened = store::RestrictTreeToOwner(data_dir, secrets);
  if (!tightened.ok()) {
    return Refuse("cannot restrict the data directory to its owner",
                  {{"error", tightened.status().message()}});
  }
  if (!tightened->empty()) {
    log::Warn("data directory files were readable by others; now owner-only",
              {{"files", static_cast<int64_t>(tightened->size())}, {"first", tightened->front()}});
  }
  Result<std::unique_ptr<store::Store>> opened = store::Store::Open(data_dir);
  if (!opened.ok()) return Refuse("cannot open the database", {{"error", opened.status().message()}});
  parts_->store = std::move(opened).value();
  Result<int> migrated = parts_->store->Migrate(store::AllMigrations());
  if (!migrated.ok()) return Refuse("cannot migrate the database", {{"error", migrated.status().message()}});
  log::Info("database open", {{"path", parts_->store->path()}, {"migrations_applied", *migrated}});
  parts_->readiness->MarkReady("database", "open: " + parts_->store->path());
  return Status::OK();
}

// The audit log, before any request is accepted: no request is ever served unaudited.
Status Daemon::OpenAudit() {
  const config::AppConfig& config = parts_->config;
  http::Readiness& readiness = *parts_->readiness;
  http::AuditPolicy audit_policy{config.audit.fail_closed, config.audit.record_probes};
  audit_policy.anonymous.per_source_per_minute = config.audit.anonymous_records_per_minute_per_source;
  audit_policy.anonymous.per_minute = config.audit.anonymous_records_per_minute;
  audit::AuditSinkOptions options;
  options.data_dir = config.storage.data_dir;
  options.sign_interval_ms = config.audit.sign_interval_ms;
  options.probe_interval_ms = config.audit.probe_interval_ms;
  options.store.busy_timeout_ms = static_cast<int>(config.audit.busy_timeout_ms);
  options.commit_window_ms = config.audit.commit_window_ms;
  // Content is stored only when the policy says so (default off); then it is purged at the
  // policy's retention age.
  if (audit_policy.content.store_content) {
    options.content_retention = audit_policy.content;
  } else {
    // The active policy's retention age (policies can store content; docs/policies.md). The
    // policy opens after the audit log it records its changes in, so until OpenPolicy there
    // is no active policy and no cutoff.
    options.content_cutoff_ms = [parts = parts_.get()](int64_t now_ms) -> std::optional<int64_t> {
      if (parts->policy_service == nullptr) return std::nullopt;
      std::shared_ptr<const policy::ActivePolicy> active = parts->policy_service->Active();
      if (active == nullptr) return std::nullopt;
      return policy::RetentionCutoffMs(active->policy, now_ms);
    };
  }
  // The policy opens after the audit log, and requests are served after both.
  audit_policy.shown_client_text = [parts = parts_.get()](std::string_view text) {
    std::shared_ptr<const policy::ActivePolicy> active =
        parts->policy_service == nullptr ? nullptr : parts->policy_service->Active();
    return active == nullptr ? std::string(text) : policy::ClientTextForStorage(*active, text);
  };
  options.on_health_change = [&readiness](bool healthy, const std::string& reason) {
    if (healthy)
      readiness.MarkReady("audit", "writable");
    else
      readiness.MarkNotReady("audit", reason);
  };
  Result<std::unique_ptr<audit::AuditSink>> opened = audit::AuditSink::Open(options);
  if (!opened.ok()) {
    // Exits rather than serving in a not-ready state: nothing may be appended to (or signed
    // over) a log the appliance cannot vouch for; the error names the first bad seq.
    return Refuse("cannot open the audit log; not starting", {{"error", opened.status().ToString()}});
  }
  parts_->audit_sink = std::move(opened).value();
  audit::AuditSink& sink = *parts_->audit_sink;
  parts_->audit_full_check = std::make_unique<audit::BackgroundVerifier>(
      AuditDbPath(config), sink.public_key(), [&sink](const std::string& reason) { sink.Distrust(reason); });
  // The settings as read (file and overrides): a start with other settings than the previous
  // start's records a settings change (audit/settings_change.h).
  std::vector<std::string> override_texts;
  for (const config::Override& o : parts_->args.overrides) override_texts.push_back(o.flag + "=" + o.value);
  Result<std::string> config_bytes = audit::ReadTextFile(parts_->args.config_path);
  const std::string settings =
      audit::SettingsDigest(config_bytes.ok() ? *config_bytes : std::string(), override_texts);
  Result<std::optional<std::string>> previous_settings = audit::PreviousSettingsDigest(AuditDbPath(config));
  std::string start_detail = std::string("version ") + KIMI_APPLIANCE_VERSION + "; " +
                             std::string(audit::kSettingsDigestPrefix) + settings;
  if (!config.audit.record_requests) {
    start_detail += "; requests not recorded (audit.record_requests is off)";
    log::Warn("API requests are served without audit records (audit.record_requests is off)");
  }
  if (Status started = RecordServiceEvent(sink, "service.start", start_detail); !started.ok()) {
    return Refuse("cannot record the service start in the audit log", {{"error", started.ToString()}});
  }
  if (previous_settings.ok() && previous_settings->has_value() && **previous_settings != settings) {
    Status changed = RecordServiceEvent(sink, "settings.changed",
                                        std::string(audit::kSettingsDigestPrefix) + **previous_settings +
                                            " -> " + settings + " (" + parts_->args.config_path + ")");
    if (!changed.ok()) {
      return Refuse("cannot record the settings change in the audit log", {{"error", changed.ToString()}});
    }
  }
  // Streams the previous run started and never ended (it died mid-stream) get their end
  // record before anything is served.
  Result<uint64_t> interrupted = sink.RecordInterruptedStreams();
  if (!interrupted.ok()) {
    return Refuse("cannot record the interrupted streams in the audit log",
                  {{"error", interrupted.status().ToString()}});
  }
  if (*interrupted > 0) {
    log::Warn("streams cut by the previous stop recorded as interrupted",
              {{"streams", static_cast<int64_t>(*interrupted)}});
  }
  parts_->auditor =
      std::make_unique<http::RequestAuditor>(audit_policy, config.audit.record_requests ? &sink : nullptr);
  parts_->auditor->StartCountFlusher();
  parts_->audit_access = admin::AuditAccess{AuditDbPath(config), sink.public_key(), &sink};
  if (sink.Healthy()) readiness.MarkReady("audit", "writable");
  log::Info("service start recorded in the audit log",
            {{"records", static_cast<int64_t>(sink.TreeSize())}, {"fail_closed", config.audit.fail_closed}});
  return Status::OK();
}

// Authentication: the server secret, the key/user/session tables, and the outbox that moves
// auth events (including those kimictl wrote while the daemon was down) into the audit log.
Status Daemon::OpenAuth() {
  parts_->auth_store = std::make_unique<auth::AuthStore>(parts_->store.get());
  Result<int64_t> credentials = parts_->auth_store->HashedCredentials();
  Result<auth::ServerSecret> secret =
      credentials.ok() ? auth::ServerSecret::LoadOrCreate(parts_->config.storage.data_dir, *credentials)
                       : Result<auth::ServerSecret>(credentials.status());
  if (!secret.ok())
    return Refuse("cannot load the authentication secret", {{"error", secret.status().ToString()}});
  parts_->secret = *secret;
  parts_->auth_outbox =
      std::make_unique<auth::AuditOutbox>(parts_->auth_store.get(), parts_->audit_sink.get());
  parts_->authenticator =
      std::make_unique<auth::Authenticator>(parts_->auth_store.get(), *parts_->secret,
                                            AuthOptionsOf(parts_->config.auth), parts_->auth_outbox.get());
  parts_->budget_store = std::make_unique<auth::BudgetStore>(parts_->store.get());
  parts_->budgets = std::make_unique<auth::BudgetWatch>(parts_->auth_store.get(), parts_->budget_store.get());
  if (Status drained = parts_->auth_outbox->Drain(); !drained.ok()) {
    return Refuse("cannot move pending auth events into the audit log", {{"error", drained.ToString()}});
  }
  parts_->auth_outbox->Start(1000);
  parts_->audit_access.keys = parts_->authenticator.get();  // key names and owners for the audit search
  return Status::OK();
}

// Policies: the newest stored version is active; a first start installs the shipped default as
// version 1. Each change is an audited act.
Status Daemon::OpenPolicy() {
  parts_->policy_store = std::make_unique<policy::PolicyStore>(parts_->store.get());
  parts_->policy_service =
      std::make_unique<policy::PolicyService>(parts_->policy_store.get(), &*parts_->secret, auth::InsertAuditRecord);
  policy::PolicyService& policies = *parts_->policy_service;
  policies.SetAfterCommit([outbox = parts_->auth_outbox.get()] { return outbox->Drain(); });
  // The policy step counts prompt tokens with the embedded engine's tokenizer and chat format.
  policies.SetPromptTokenCounters(PromptTokenCounters(*parts_->embedded, parts_->config.model.served_id));
  if (Status started = policies.Start(policy::DefaultPolicyDocument(), {std::string(audit::kDaemonActor), "system", "", ""});
      !started.ok()) {
    return Refuse("cannot load the active policy", {{"error", started.ToString()}});
  }
  log::Info("policy active",
            {{"version", policies.Active()->version}, {"name", policies.Active()->policy.name}});
  parts_->measured_backend = std::make_unique<policy::SloMeasuringBackend>(parts_->router.get(), &policies,
                                                                           parts_->slo_metrics.get());
  return Status::OK();
}

}  // namespace kimi::daemon
