// The daemon's edge, the first and last steps of Daemon::Open (daemon.h): logging, the stop
// signals, metrics and readiness; the TLS certificate; the listening socket; and, last, the
// HTTP server with every route group bound to the services it uses.
#include "daemon/daemon_parts.h"

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "build_info.h"
#include "config/listen_address.h"
#include "daemon/budget_metrics.h"
#include "daemon/engine_metrics.h"
#include "daemon/signals.h"
#include "http/console_handlers.h"
#include "http/handlers.h"
#include "http/openai_handlers.h"
#include "http/request_work_metrics.h"
#include "http/routes.h"
#include "http/writer_metrics.h"
#include "kimi/utc_time.h"

namespace kimi::daemon {
namespace {

log::Format ParseFormat(const std::string& name) {
  if (name == "json") return log::Format::kJson;
  if (name == "text") return log::Format::kText;
  return log::Format::kAuto;
}

}  // namespace

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

Status Daemon::OpenServer() {
  Parts& p = *parts_;
  const config::AppConfig& config = p.config;
  const http::RequestAuthentication authentication{p.authenticator.get(),
                                                   p.tls != nullptr && p.tls->verifies_clients(),
                                                   /*refuse_rebound_hosts=*/p.tls == nullptr,
                                                   config.server.plain_http_hosts};
  http::RouteTable routes;
  http::MetricsServices metrics{&p.registry};
  std::function<void()> refresh =
      [&p, engine = EngineMetricsRefresher(p.registry, *p.embedded),
       usage = http::UsageLedgerMetricsRefresher(p.registry, [&p] { return p.authenticator->UsageStats(); }),
       audit = http::AuditWriterMetricsRefresher(
           p.registry, [&p]() -> std::optional<audit::AuditSinkStats> { return p.audit_sink->Stats(); }),
       request_work = http::RequestWorkMetricsRefresher(p.registry),
       budgets = BudgetMetricsRefresher(p.registry, *p.budgets)] {
        engine();
        budgets();
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
  if (p.auditor != nullptr) {
    generation.shown_client_text = [auditor = p.auditor.get()](std::string_view text) {
      return auditor->ClientText(text);
    };
  }
  generation.stream_argument_chunk_bytes = static_cast<size_t>(config.model.stream_argument_chunk_bytes);
  // The embedded engine caps such a request at the model's default, an upstream at what the
  // router assumes of it.
  generation.assumed_max_tokens = std::max(config.model.default_max_tokens, config.router.default_max_tokens);
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
  admin.request_rules = &p.request_rules;
  admin.audit = &p.audit_access;
  admin.metrics_history = admin::MetricsHistoryServices{&p.history, nullptr};
  admin.auth_store = p.auth_store.get();
  admin.budgets = p.budgets.get();
  if (p.tls != nullptr) admin.reload_tls = [&p](const auth::Actor& actor) { return p.ReloadTls(actor); };
  admin::AddAdminRoutes(routes, admin);
  p.server = std::make_unique<http::Server>(std::move(options), std::move(*p.listener),
                                            http::DispatcherServices{authentication, p.auditor.get()},
                                            std::move(routes), p.registry);
  p.listener.reset();
  return Status::OK();
}

}  // namespace kimi::daemon
