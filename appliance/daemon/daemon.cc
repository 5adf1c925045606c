#include "daemon/daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "admin/admin_routes.h"
#include "api/embedded_backend.h"
#include "api/model_rules_table.h"
#include "api/served_model.h"
#include "audit/audit_sink.h"
#include "audit/background_verifier.h"
#include "audit/record_builder.h"
#include "audit/settings_change.h"
#include "auth/audit_outbox.h"
#include "auth/auth_store.h"
#include "auth/authenticator.h"
#include "auth/server_secret.h"
#include "build_info.h"
#include "config/listen_address.h"
#include "daemon/engine_metrics.h"
#include "daemon/module_options.h"
#include "daemon/signals.h"
#include "http/console_assets.h"
#include "http/console_handlers.h"
#include "http/handlers.h"
#include "http/listener.h"
#include "http/openai_handlers.h"
#include "http/readiness.h"
#include "http/request_audit.h"
#include "http/request_work_metrics.h"
#include "http/routes.h"
#include "http/server.h"
#include "http/tls_reloader.h"
#include "http/writer_metrics.h"
#include "kimi/log.h"
#include "kimi/utc_time.h"
#include "metrics/history.h"
#include "metrics/history_sampler.h"
#include "metrics/metrics.h"
#include "migrations/all_migrations.h"
#include "models/model_admin.h"
#include "models/trust_directory.h"
#include "policy/content_storage.h"
#include "policy/default_policy.h"
#include "policy/policy_service.h"
#include "policy/policy_store.h"
#include "policy/slo_backend.h"
#include "policy/slo_metrics.h"
#include "router/router_builder.h"
#include "store/owner_only.h"
#include "store/store.h"

namespace kimi::daemon {
namespace {

// How long the stop may take after the grace period (closing the stores, unloading the model)
// before the process ends regardless.
constexpr std::chrono::milliseconds kStopAfterGrace{3000};

// A step that cannot go on logs why, with its fields, as the operator reads it; the daemon
// then exits 1.
Status Refuse(std::string_view message, std::initializer_list<log::Field> fields = {}) {
  log::Error(message, fields);
  return Status::FailedPrecondition("not starting: " + std::string(message));
}

log::Format ParseFormat(const std::string& name) {
  if (name == "json") return log::Format::kJson;
  if (name == "text") return log::Format::kText;
  return log::Format::kAuto;
}

// Service start and stop are audited acts; the daemon does not go on (or claims no clean
// stop) without their records.
Status RecordServiceEvent(audit::AuditSink& sink, const std::string& action, const std::string& detail) {
  return sink.Record(audit::RecordBuilder::ServiceEvent(action, detail).Build()).WaitCommitted();
}

std::string AuditDbPath(const config::AppConfig& config) {
  return config.storage.data_dir + "/" + std::string(audit::kAuditDbFile);
}

}  // namespace

// What the steps open, in the order they open it; destroyed in the reverse order.
struct Daemon::Parts {
  Parts(config::AppConfig c, DaemonArgs a) : config(std::move(c)), args(std::move(a)) {}

  // Re-reads the TLS certificate (POST /admin/v1/tls/reload, SIGHUP), audited as done by
  // `actor`. A failed reload keeps the old certificate serving: the component stays ready and
  // keeps the failure for the operator. Precondition: tls is set.
  Result<std::string> ReloadTls(const auth::Actor& actor) {
    Result<std::string> reloaded = http::ReloadTlsAudited(*tls, *authenticator, actor);
    if (reloaded.ok())
      readiness->MarkReady("tls", "serving " + *reloaded);
    else
      readiness->RecordFailure(
          "tls", "reload by " + actor.id +
                     " failed, the previous certificate still serves: " + reloaded.status().message());
    return reloaded;
  }

  const config::AppConfig config;
  const DaemonArgs args;
  // OpenLogging
  metrics::Registry registry;
  std::unique_ptr<http::Readiness> readiness;
  // OpenTls: null without server.tls
  std::unique_ptr<http::TlsReloader> tls;
  // OpenBackends
  std::shared_ptr<api::EmbeddedBackend> embedded;
  std::unique_ptr<router::Router> router;
  std::unique_ptr<policy::SloMetrics> slo_metrics;
  api::ModelRulesTable request_rules;
  // OpenListener
  std::optional<http::Listener> listener;
  // OpenStores
  std::unique_ptr<store::Store> store;
  // OpenAudit
  std::unique_ptr<audit::AuditSink> audit_sink;
  // The full pass over the rows the start-up check did not read; stopped before the sink closes.
  std::unique_ptr<audit::BackgroundVerifier> audit_full_check;
  std::unique_ptr<http::RequestAuditor> auditor;
  admin::AuditAccess audit_access;
  // OpenAuth
  std::optional<auth::ServerSecret> secret;
  std::unique_ptr<auth::AuthStore> auth_store;
  std::unique_ptr<auth::AuditOutbox> auth_outbox;
  std::unique_ptr<auth::Authenticator> authenticator;
  // OpenPolicy
  std::unique_ptr<policy::PolicyStore> policy_store;
  std::unique_ptr<policy::PolicyService> policy_service;
  std::unique_ptr<policy::SloMeasuringBackend> measured_backend;
  // Announce
  std::unique_ptr<http::ConsoleAssets> console;
  // OpenModels
  std::unique_ptr<models::TrustDirectory> trust_directory;
  std::unique_ptr<models::ServedModel> served_model;
  std::unique_ptr<models::ModelAdmin> model_admin;
  // OpenServer
  // The dashboards' history (metrics/history.h: 0.5 to 2.5 MiB) and its sampler, which
  // runs while the server does. refresh_mu orders the sampler's refresh of the scraped figures
  // with GET /metrics's.
  metrics::MetricsHistory history;
  std::mutex refresh_mu;
  std::unique_ptr<metrics::HistorySampler> history_sampler;
  std::unique_ptr<http::Server> server;
};

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

Status Daemon::OpenLogging() {
  const config::AppConfig& config = parts_->config;
  log::Level level = log::Level::kInfo;
  log::ParseLevel(config.log.level, &level);
  log::Configure(level, ParseFormat(config.log.format));
  // Everything the daemon creates (databases and their -wal/-shm, keys, the model store) is the
  // service account's alone, whatever mode the code that creates it asks for (store/owner_only.h).
  ::umask(077);
  // Before any thread starts, so that only WatchSignals sees them.
  BlockStopSignals();
  RegisterProcessMetrics(parts_->registry);
  parts_->readiness = std::make_unique<http::Readiness>(&parts_->registry);
  parts_->readiness->Declare("database", "not open yet");
  parts_->readiness->Declare("audit", "not open yet");
  parts_->readiness->Declare("model", config.model.dir.empty() ? "not loaded: no model configured"
                                                               : "not loaded yet: " + config.model.dir);
  return Status::OK();
}

// TLS and the port first: a daemon that cannot serve should say so before touching anything else.
Status Daemon::OpenTls() {
  const config::AppConfig& config = parts_->config;
  if (!config.server.tls_enabled()) return Status::OK();
  Result<std::unique_ptr<http::TlsReloader>> loaded = http::TlsReloader::Load(config.server.tls);
  if (!loaded.ok()) return Refuse("cannot serve HTTPS: " + loaded.status().message());
  parts_->tls = std::move(loaded).value();
  log::Info("TLS certificate loaded", {{"certificate", parts_->tls->Current()->summary()},
                                       {"min_version", config.server.tls.min_version}});
  parts_->readiness->MarkReady("tls", "serving " + parts_->tls->Current()->summary());
  return Status::OK();
}

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
  return Status::OK();
}

Status Daemon::OpenListener() {
  Result<http::Listener> bound =
      http::Listener::Bind(*config::ParseListenAddress(parts_->config.server.listen));
  if (!bound.ok()) return Refuse(bound.status().message());
  parts_->listener.emplace(std::move(bound).value());
  log::Info("starting", {{"version", KIMI_APPLIANCE_VERSION},
                         {"config", parts_->args.config_path},
                         {"pid", static_cast<int64_t>(getpid())}});
  return Status::OK();
}

Status Daemon::OpenStores() {
  const std::string& data_dir = parts_->config.storage.data_dir;
  // Files an older version or a tool left readable by others are tightened before any is opened.
  Result<std::vector<std::string>> tightened = store::RestrictTreeToOwner(data_dir);
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
  const http::AuditPolicy audit_policy{config.audit.fail_closed, config.audit.record_probes};
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
  parts_->audit_access = admin::AuditAccess{AuditDbPath(config), sink.public_key(), &sink};
  if (sink.Healthy()) readiness.MarkReady("audit", "writable");
  log::Info("service start recorded in the audit log",
            {{"records", static_cast<int64_t>(sink.TreeSize())}, {"fail_closed", config.audit.fail_closed}});
  return Status::OK();
}

// Authentication: the server secret, the key/user/session tables, and the outbox that moves
// auth events (including those kimictl wrote while the daemon was down) into the audit log.
Status Daemon::OpenAuth() {
  Result<auth::ServerSecret> secret = auth::ServerSecret::LoadOrCreate(parts_->config.storage.data_dir);
  if (!secret.ok())
    return Refuse("cannot load the authentication secret", {{"error", secret.status().ToString()}});
  parts_->secret = *secret;
  parts_->auth_store = std::make_unique<auth::AuthStore>(parts_->store.get());
  parts_->auth_outbox =
      std::make_unique<auth::AuditOutbox>(parts_->auth_store.get(), parts_->audit_sink.get());
  parts_->authenticator =
      std::make_unique<auth::Authenticator>(parts_->auth_store.get(), *parts_->secret,
                                            AuthOptionsOf(parts_->config.auth), parts_->auth_outbox.get());
  if (Status drained = parts_->auth_outbox->Drain(); !drained.ok()) {
    return Refuse("cannot move pending auth events into the audit log", {{"error", drained.ToString()}});
  }
  parts_->auth_outbox->Start(1000);
  return Status::OK();
}

// Policies: the newest stored version is active; a first start installs the shipped default as
// version 1. Each change is an audited act.
Status Daemon::OpenPolicy() {
  parts_->policy_store = std::make_unique<policy::PolicyStore>(parts_->store.get());
  parts_->policy_service =
      std::make_unique<policy::PolicyService>(parts_->policy_store.get(), &*parts_->secret,
                                              [sink = parts_->audit_sink.get()](audit::AuditRecord record) {
                                                return sink->Record(std::move(record)).WaitCommitted();
                                              });
  policy::PolicyService& policies = *parts_->policy_service;
  // The policy step counts prompt tokens with the embedded engine's tokenizer and chat format.
  policies.SetPromptTokenCounters(PromptTokenCounters(*parts_->embedded, parts_->config.model.served_id));
  if (Status started = policies.Start(policy::DefaultPolicyDocument(), {"kimi-appliance", "system", "", ""});
      !started.ok()) {
    return Refuse("cannot load the active policy", {{"error", started.ToString()}});
  }
  log::Info("policy active",
            {{"version", policies.Active()->version}, {"name", policies.Active()->policy.name}});
  parts_->measured_backend = std::make_unique<policy::SloMeasuringBackend>(parts_->router.get(), &policies,
                                                                           parts_->slo_metrics.get());
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

// The trust store models are verified with (the admin API edits it), the model store and
// what the engine serves (models/served_model.h): the store's active version of
// model.store_id, else model.dir. The model loads in Run(), while the server answers: probes
// work and the API says 503 until then. Every model act is audited.
Status Daemon::OpenModels() {
  const config::AppConfig& config = parts_->config;
  audit::AuditSink* sink = parts_->audit_sink.get();
  auto audit_act = [sink](audit::AuditRecord record) {
    return sink->Record(std::move(record)).WaitCommitted();
  };
  parts_->trust_directory = std::make_unique<models::TrustDirectory>(config.model.trust_store, audit_act);
  if (Status trusted = parts_->trust_directory->Load(); !trusted.ok()) {
    return Refuse("cannot read the trust store",
                  {{"path", config.model.trust_store}, {"error", trusted.ToString()}});
  }
  models::ServedModelOptions options;
  options.model_id = config.model.store_id;
  options.data_dir = config.storage.data_dir;
  options.trust_store = config.model.trust_store;
  options.trust_directory = parts_->trust_directory.get();
  options.direct_dir = config.model.dir;
  options.service = ServiceOptionsFrom(config.model);
  options.db = parts_->store.get();
  options.audit = audit_act;
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
  parts_->model_admin = std::make_unique<models::ModelAdmin>(parts_->served_model->store(), admin_options);
  return Status::OK();
}

Status Daemon::OpenServer() {
  Parts& p = *parts_;
  const config::AppConfig& config = p.config;
  const http::RequestAuthentication authentication{p.authenticator.get(),
                                                   p.tls != nullptr && p.tls->verifies_clients()};
  http::RouteTable routes;
  http::MetricsServices metrics{&p.registry};
  std::function<void()> refresh =
      [&p, engine = EngineMetricsRefresher(p.registry, *p.embedded),
       usage = http::UsageLedgerMetricsRefresher(p.registry, [&p] { return p.authenticator->UsageStats(); }),
       audit = http::AuditWriterMetricsRefresher(
           p.registry, [&p]() -> std::optional<audit::AuditSinkStats> { return p.audit_sink->Stats(); }),
       request_work = http::RequestWorkMetricsRefresher(p.registry)] {
        engine();
        request_work();
        usage();
        audit();
        if (std::shared_ptr<const policy::ActivePolicy> active = p.policy_service->Active()) {
          p.slo_metrics->PublishTargets(active->policy);
        }
      };
  metrics.before_render = [&p, refresh] {
    std::lock_guard<std::mutex> lock(p.refresh_mu);
    refresh();
  };
  p.history_sampler = std::make_unique<metrics::HistorySampler>(&p.history, &p.registry, metrics.before_render,
                                                                &UnixMillisNow);
  http::AddProbeRoutes(routes, http::ReadinessServices{p.readiness.get(), authentication}, std::move(metrics));
  http::AddConsoleRoutes(routes, config.console.assets_dir.empty() ? nullptr : p.console.get());
  http::GenerationServices generation;
  generation.backend = p.measured_backend.get();
  generation.readiness = p.readiness.get();
  generation.request_rules = &p.request_rules;
  generation.policy = p.policy_service.get();
  generation.authenticator = p.authenticator.get();
  generation.audit_stores_content = p.auditor != nullptr && p.auditor->policy().content.store_content;
  generation.stream_argument_chunk_bytes = static_cast<size_t>(config.model.stream_argument_chunk_bytes);
  http::ModelListServices model_list{p.measured_backend.get()};
  model_list.describe_model = [&p, served_id = config.model.served_id](
                                  const std::string& model) -> std::optional<http::ServedModelDetails> {
    if (model != served_id) return std::nullopt;
    std::optional<models::ServedVersion> current = p.served_model->Current();
    if (!current) return std::nullopt;
    return http::ServedModelDetails{current->digest, current->version, current->since_unix_s};
  };
  http::AddOpenAiRoutes(routes, std::move(generation), std::move(model_list));
  http::ServerOptions options{config.limits, p.tls.get()};
  admin::AdminServices admin;
  admin.authenticator = p.authenticator.get();
  admin.backend = p.measured_backend.get();
  admin.model_admin = p.model_admin.get();
  admin.trust = p.trust_directory.get();
  admin.policies = p.policy_service.get();
  admin.audit = &p.audit_access;
  admin.metrics_history = admin::MetricsHistoryServices{&p.history, nullptr};
  if (p.tls != nullptr) admin.reload_tls = [&p](const auth::Actor& actor) { return p.ReloadTls(actor); };
  admin::AddAdminRoutes(routes, admin);
  p.server = std::make_unique<http::Server>(std::move(options), std::move(*p.listener),
                                            http::DispatcherServices{authentication, p.auditor.get()},
                                            std::move(routes), p.registry);
  p.listener.reset();
  return Status::OK();
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
