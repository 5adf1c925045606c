// Daemon::Parts: what the start-up steps open, in the order they open it, shared by the files
// of the steps (open_edge.cc, open_records.cc, open_serving.cc) and by daemon.cc, which runs
// them in order and stops the daemon; with the helpers every step uses. Internal to daemon/.
//
// Thread safety: as Daemon (daemon.h): the steps run on the main thread, one after another.
#pragma once

#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "admin/admin_routes.h"
#include "api/embedded_backend.h"
#include "api/model_rules_table.h"
#include "api/served_model.h"
#include "audit/audit_sink.h"
#include "audit/background_verifier.h"
#include "auth/audit_outbox.h"
#include "auth/auth_store.h"
#include "auth/authenticator.h"
#include "auth/budget_store.h"
#include "auth/budget_watch.h"
#include "auth/server_secret.h"
#include "daemon/daemon.h"
#include "http/console_assets.h"
#include "http/listener.h"
#include "http/readiness.h"
#include "http/request_audit.h"
#include "http/server.h"
#include "http/tls_reloader.h"
#include "kimi/log.h"
#include "metrics/history.h"
#include "metrics/history_sampler.h"
#include "metrics/metrics.h"
#include "models/model_admin.h"
#include "models/trust_directory.h"
#include "policy/policy_service.h"
#include "policy/policy_store.h"
#include "policy/slo_backend.h"
#include "policy/slo_metrics.h"
#include "router/router_builder.h"
#include "store/store.h"

namespace kimi::daemon {

// A step that cannot go on logs why, with its fields, as the operator reads it; the daemon
// then exits 1.
Status Refuse(std::string_view message, std::initializer_list<log::Field> fields = {});

// Service start and stop are audited acts; the daemon does not go on (or claims no clean
// stop) without their records.
Status RecordServiceEvent(audit::AuditSink& sink, const std::string& action, const std::string& detail);

// audit.db in the data directory.
std::string AuditDbPath(const config::AppConfig& config);

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
  std::unique_ptr<auth::BudgetStore> budget_store;
  std::unique_ptr<auth::BudgetWatch> budgets;
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

}  // namespace kimi::daemon
