// kimi-appliance: the daemon. Loads the configuration, opens the store, serves HTTP until
// SIGTERM or SIGINT, then drains in-flight requests, closes the database and exits 0.
// A second signal during the drain exits at once with status 1.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/embedded_backend.h"
#include "api/model_rules_table.h"
#include "api/verified_model.h"
#include "audit/audit_sink.h"
#include "audit/background_verifier.h"
#include "audit/settings_change.h"
#include "auth/audit_outbox.h"
#include "auth/auth_store.h"
#include "auth/authenticator.h"
#include "auth/server_secret.h"
#include "router/router_builder.h"
#include "build_info.h"
#include "config/config.h"
#include "config/listen_address.h"
#include "http/console_assets.h"
#include "http/metrics.h"
#include "http/readiness.h"
#include "http/audit_admin_handlers.h"
#include "http/request_audit.h"
#include "http/routes.h"
#include "http/server.h"
#include "http/tls_reloader.h"
#include "http/request_work_metrics.h"
#include "http/writer_metrics.h"
#include "kimi/log.h"
#include "policy/content_storage.h"
#include "policy/default_policy.h"
#include "policy/policy_service.h"
#include "policy/policy_store.h"
#include "policy/slo_backend.h"
#include "kimi/runtime.h"
#include "models/model_admin.h"
#include "models/trust_directory.h"
#include "models/served_model.h"
#include "store/owner_only.h"
#include "store/store.h"

namespace {

constexpr const char* kUsage =
    "usage: kimi-appliance [--config PATH] [--listen HOST:PORT] [--data-dir DIR]\n"
    "                      [--log-level debug|info|warn|error] [--log-format auto|json|text]\n"
    "                      [--console-assets DIR]\n"
    "                      [--version] [--help]\n"
    "Serves the appliance's HTTP API. The configuration file (default /etc/kimi-appliance/appliance.json)\n"
    "is described in docs/configuration.md; flags override its keys.\n";

// Service start and stop are audited acts; the daemon does not go on (or claims no clean
// stop) without their records.
kimi::Status RecordServiceEvent(kimi::audit::AuditSink& sink, const std::string& action, const std::string& detail) {
  kimi::audit::AuditRecord record;
  record.actor = "kimi-appliance";
  record.role = "system";
  record.action = action;
  record.outcome = "ok";
  record.detail = detail;
  return sink.Record(std::move(record)).WaitCommitted();
}

kimi::auth::AuthOptions AuthOptionsOf(const kimi::config::AuthConfig& c) {
  kimi::auth::AuthOptions o;
  o.password.ops_limit = static_cast<uint64_t>(c.argon2_ops_limit);
  o.password.mem_limit_bytes = static_cast<uint64_t>(c.argon2_mem_limit_kib) * 1024;
  o.password.min_length = c.password_min_length;
  o.lockout_threshold = c.lockout_threshold;
  o.lockout_base_ms = c.lockout_base_ms;
  o.lockout_max_ms = c.lockout_max_ms;
  o.session_idle_timeout_ms = c.session_idle_timeout_ms;
  o.session_absolute_timeout_ms = c.session_absolute_timeout_ms;
  o.last_used_flush_ms = c.key_last_used_flush_ms;
  o.max_concurrent_streams = c.max_concurrent_streams;
  o.usage_flush_ms = c.usage_flush_ms;
  o.login_attempts_per_minute_per_source = c.login_attempts_per_minute_per_source;
  o.login_attempts_per_minute_per_user = c.login_attempts_per_minute_per_user;
  o.max_concurrent_password_hashes = c.max_concurrent_password_hashes;
  o.password_hash_wait_ms = c.password_hash_wait_ms;
  return o;
}

// Startup failures before logging is set up are one plain line on stderr.
int Fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "kimi-appliance: %s\n", message.c_str());
  return code;
}

struct Flags {
  std::string config_path = kimi::config::kDefaultConfigPath;
  std::vector<kimi::config::Override> overrides;
};

// Returns -1 to continue, otherwise the exit code.
int ParseFlags(int argc, char** argv, Flags* flags) {
  struct Known {
    const char* flag;
    std::vector<std::string> keys;
  };
  const Known known[] = {
      {"--listen", {"server", "listen"}},
      {"--data-dir", {"storage", "data_dir"}},
      {"--log-level", {"log", "level"}},
      {"--log-format", {"log", "format"}},
      {"--console-assets", {"console", "assets_dir"}},
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--version") {
      std::printf("kimi-appliance %s\n", KIMI_APPLIANCE_VERSION);
      return 0;
    }
    auto take_value = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    if (arg == "--config") {
      if (!take_value()) return Fail("--config needs a value (see --help)", 2);
      flags->config_path = value;
      continue;
    }
    bool matched = false;
    for (const Known& k : known) {
      if (arg != k.flag) continue;
      if (!take_value()) return Fail(arg + " needs a value (see --help)", 2);
      flags->overrides.push_back({arg, k.keys, value});
      matched = true;
    }
    if (!matched) return Fail("unknown argument " + arg + " (see --help)", 2);
  }
  return -1;
}

kimi::log::Format ParseFormat(const std::string& name) {
  if (name == "json") return kimi::log::Format::kJson;
  if (name == "text") return kimi::log::Format::kText;
  return kimi::log::Format::kAuto;
}

void RegisterProcessMetrics(kimi::metrics::Registry& registry) {
  double start = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  registry.AddGauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.")
      .WithLabels(std::vector<std::string>{})
      .Set(start);
  registry.AddGauge("kimi_build_info", "Build of the running daemon; the value is always 1.",
                    {"version", "build_type", "compiler"})
      .WithLabels({KIMI_APPLIANCE_VERSION, KIMI_APPLIANCE_BUILD_TYPE, KIMI_APPLIANCE_COMPILER})
      .Set(1);
}

// How long the stop may take after the grace period (closing the stores, unloading the model)
// before the process ends regardless.
constexpr std::chrono::milliseconds kStopAfterGrace{3000};

// Waits for SIGINT/SIGTERM (blocked in every thread) and asks the server to stop; a second
// signal ends the process at once, and so does a stop still running `force_after` after the
// first (work that ignores the stop, whatever it is, cannot keep the process alive). SIGHUP,
// until the stop, calls `on_hangup` (the TLS reload, the served-bytes check).
void WatchSignals(kimi::http::Server* server, const std::atomic<bool>* done, std::chrono::milliseconds force_after,
                  std::function<void()> on_hangup) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  int received = 0;
  std::chrono::steady_clock::time_point force_at;
  while (!done->load()) {
    if (received > 0 && std::chrono::steady_clock::now() >= force_at) {
      kimi::log::Error("the stop did not finish within the shutdown grace period; exiting without waiting",
                       {{"waited_ms", static_cast<int64_t>(force_after.count())}});
      std::_Exit(1);
    }
    timespec tick{0, 200'000'000};
    int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig < 0) continue;
    if (sig == SIGHUP) {
      if (received == 0 && on_hangup) on_hangup();
      continue;
    }
    if (++received == 1) {
      kimi::log::Info("stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      force_at = std::chrono::steady_clock::now() + force_after;
      server->Stop();
    } else {
      kimi::log::Warn("second signal during shutdown; exiting without waiting");
      std::_Exit(1);
    }
  }
}

kimi::ChatServiceOptions ServiceOptionsFrom(const kimi::config::ModelConfig& model) {
  kimi::ChatServiceOptions options;
  options.model.threads = static_cast<int>(model.threads);
  options.runtime.max_num_seqs = static_cast<int>(model.max_num_seqs);
  options.runtime.max_num_batched_tokens = model.max_num_batched_tokens;
  options.runtime.decode_step_token_budget = model.decode_step_token_budget;
  options.runtime.memory_budget_bytes = static_cast<uint64_t>(model.memory_budget_bytes);
  options.default_max_tokens = model.default_max_tokens;
  return options;
}

// The model store and what the engine serves (models/served_model.h): the store's active
// version of model.store_id, else model.dir. Every model act is audited through `sink`.
kimi::Result<std::unique_ptr<kimi::models::ServedModel>> OpenServedModel(const kimi::config::AppConfig& config,
                                                                          kimi::store::Store* db,
                                                                          kimi::audit::AuditSink* sink,
                                                                          kimi::api::EmbeddedBackend* backend,
                                                                          kimi::http::Readiness* readiness,
                                                                          const kimi::models::TrustDirectory* trust) {
  kimi::models::ServedModelOptions options;
  options.model_id = config.model.store_id;
  options.data_dir = config.storage.data_dir;
  options.trust_store = config.model.trust_store;
  options.trust_directory = trust;
  options.direct_dir = config.model.dir;
  options.service = ServiceOptionsFrom(config.model);
  options.db = db;
  options.audit = [sink](kimi::audit::AuditRecord record) { return sink->Record(std::move(record)).WaitCommitted(); };
  options.on_state = [readiness](kimi::models::ServingState state, const std::string& detail) {
    switch (state) {
      case kimi::models::ServingState::kServing: readiness->MarkReady("model", detail); break;
      case kimi::models::ServingState::kPending: readiness->MarkPending("model", detail); break;
      case kimi::models::ServingState::kFailed: readiness->MarkNotReady("model", detail); break;
    }
  };
  options.integrity_interval = std::chrono::seconds(config.model.integrity_interval_s);
  options.integrity_bytes_per_second = static_cast<uint64_t>(config.model.integrity_mib_per_second) << 20;
  return kimi::models::ServedModel::Open(std::move(options), backend);
}

// Engine figures on /metrics, read from the runtime when scraped.
std::function<void()> EngineMetricsRefresher(kimi::metrics::Registry& registry, const kimi::api::EmbeddedBackend& backend) {
  auto& requests = registry.AddGauge("kimi_engine_requests", "Engine requests now, by state.", {"state"});
  auto& totals = registry.AddGauge("kimi_engine_requests_ended", "Engine requests ended since start, by how.", {"outcome"});
  auto& memory = registry.AddGauge("kimi_engine_memory_bytes", "Engine sequence-state memory, by kind.", {"kind"});
  auto& tokens = registry.AddGauge("kimi_engine_tokens", "Tokens the engine processed since start.", {"kind"});
  auto& pages = registry.AddGauge("kimi_engine_mla_pages", "MLA latent-cache pages of the pool, by state.", {"state"});
  auto& kda_slots = registry.AddGauge("kimi_engine_kda_slots_used", "KDA state slots held by running sequences.");
  auto& prefix = registry.AddGauge("kimi_engine_prefix_cache", "Prefix cache since start: lookups and hits in requests "
                                   "and prompt tokens, evictions; held pages, snapshots and bytes now.", {"kind"});
  auto& preemptions = registry.AddGauge("kimi_engine_preemptions", "Sequences preempted since start: state freed "
                                        "when memory ran out, recomputed when readmitted.");
  const std::vector<double> bounds(std::begin(kimi::LatencyHistogram::kUpperBounds),
                                   std::end(kimi::LatencyHistogram::kUpperBounds));
  auto latency = [&](const char* name, const char* help) -> kimi::metrics::Histogram& {
    return registry.AddHistogram(name, help, {}, bounds).WithLabels({});
  };
  auto& ttft = latency("kimi_engine_time_to_first_token_seconds", "Engine requests: submitted to first token sampled.");
  auto& itl = latency("kimi_engine_inter_token_latency_seconds", "Engine requests: between consecutive tokens.");
  auto& queue = latency("kimi_engine_queue_time_seconds", "Engine requests: submitted to admitted into the running batch.");
  auto& e2e = latency("kimi_engine_e2e_request_latency_seconds", "Engine requests that finished (stop or length): "
                      "submitted to last token.");
  return [&, &backend = backend] {
    std::shared_ptr<kimi::ChatService> service = backend.service();
    if (service == nullptr) return;
    const kimi::RuntimeCounters c = service->Counters();
    requests.WithLabels({"running"}).Set(double(c.running));
    requests.WithLabels({"waiting"}).Set(double(c.waiting));
    totals.WithLabels({"finished"}).Set(double(c.requests_finished));
    totals.WithLabels({"cancelled"}).Set(double(c.requests_cancelled));
    totals.WithLabels({"refused"}).Set(double(c.requests_refused));
    memory.WithLabels({"budget"}).Set(double(c.memory_budget_bytes));
    memory.WithLabels({"reserved"}).Set(double(c.memory_reserved_bytes));
    memory.WithLabels({"used"}).Set(double(c.memory_used_bytes));
    tokens.WithLabels({"generated"}).Set(double(c.tokens_generated));
    tokens.WithLabels({"prompt"}).Set(double(c.prompt_tokens_processed));
    pages.WithLabels({"capacity"}).Set(double(c.mla_pages_capacity));
    pages.WithLabels({"used"}).Set(double(c.mla_pages_used));
    kda_slots.WithLabels({}).Set(double(c.kda_slots_used));
    prefix.WithLabels({"query_requests"}).Set(double(c.prefix_cache_queries));
    prefix.WithLabels({"hit_requests"}).Set(double(c.prefix_cache_hits));
    prefix.WithLabels({"query_tokens"}).Set(double(c.prefix_cache_query_tokens));
    prefix.WithLabels({"hit_tokens"}).Set(double(c.prefix_cache_hit_tokens));
    prefix.WithLabels({"evictions"}).Set(double(c.prefix_cache_evictions));
    prefix.WithLabels({"pages"}).Set(double(c.prefix_cache_pages));
    prefix.WithLabels({"snapshots"}).Set(double(c.prefix_cache_snapshots));
    prefix.WithLabels({"bytes"}).Set(double(c.prefix_cache_bytes));
    preemptions.WithLabels({}).Set(double(c.preemptions));
    auto assign = [](kimi::metrics::Histogram& to, const kimi::LatencyHistogram& from) {
      uint64_t counts[kimi::LatencyHistogram::kBuckets];
      for (size_t i = 0; i < kimi::LatencyHistogram::kBuckets; ++i) counts[i] = uint64_t(from.counts[i]);
      to.Assign(counts, from.sum_seconds);
    };
    assign(ttft, c.time_to_first_token);
    assign(itl, c.inter_token);
    assign(queue, c.queue_time);
    assign(e2e, c.end_to_end);
  };
}

// The prompt-token counter of the served model: the loaded engine's tokenizer
// (kimi::CountPromptTokens), none for other models or before the model is loaded.
kimi::policy::PromptTokenCounterLookup PromptTokenCounters(const kimi::api::EmbeddedBackend& backend,
                                                           std::string served_id) {
  return [&backend, served_id = std::move(served_id)](const std::string& model) -> kimi::policy::PromptTokenCounter {
    std::shared_ptr<kimi::ChatService> service = backend.service();
    if (service == nullptr || model != served_id) return nullptr;
    return [service](kimi::EncodedRequestPrompt* prompt, bool chat,
                     int64_t bound_enough) -> kimi::Result<kimi::policy::PromptTokens> {
      KIMI_ASSIGN_OR_RETURN(
          kimi::PromptTokenCount counted,
          kimi::CountPromptTokens(service->tokenizer(),
                                  chat ? kimi::ServingEndpoint::kChatCompletions : kimi::ServingEndpoint::kCompletions,
                                  prompt, bound_enough));
      return kimi::policy::PromptTokens{counted.tokens, counted.exact};
    };
  };
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (int code = ParseFlags(argc, argv, &flags); code >= 0) return code;

  kimi::Result<kimi::config::AppConfig> loaded = kimi::config::LoadConfigFile(flags.config_path, flags.overrides);
  if (!loaded.ok()) return Fail(loaded.status().message());
  const kimi::config::AppConfig& config = *loaded;

  kimi::log::Level level = kimi::log::Level::kInfo;
  kimi::log::ParseLevel(config.log.level, &level);
  kimi::log::Configure(level, ParseFormat(config.log.format));
  // Everything the daemon creates (databases and their -wal/-shm, keys, the model store) is the
  // service account's alone, whatever mode the code that creates it asks for (store/owner_only.h).
  ::umask(077);

  // Block the stop and reload signals before any thread starts, so that only WatchSignals sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  kimi::metrics::Registry registry;
  RegisterProcessMetrics(registry);
  kimi::http::Readiness readiness(&registry);
  readiness.Declare("database", "not open yet");
  readiness.Declare("audit", "not open yet");
  readiness.Declare("model", config.model.dir.empty() ? "not loaded: no model configured"
                                                      : "not loaded yet: " + config.model.dir);
  auto embedded = std::make_shared<kimi::api::EmbeddedBackend>(config.model.served_id);
  kimi::api::EmbeddedBackend& backend = *embedded;

  // TLS and the port first: a daemon that cannot serve should say so before touching anything else.
  std::unique_ptr<kimi::http::TlsReloader> tls;
  if (config.server.tls_enabled()) {
    kimi::Result<std::unique_ptr<kimi::http::TlsReloader>> loaded_tls = kimi::http::TlsReloader::Load(config.server.tls);
    if (!loaded_tls.ok()) {
      kimi::log::Error("cannot serve HTTPS: " + loaded_tls.status().message());
      return 1;
    }
    tls = std::move(loaded_tls).value();
    kimi::log::Info("TLS certificate loaded",
                    {{"certificate", tls->Current()->summary()}, {"min_version", config.server.tls.min_version}});
    readiness.MarkReady("tls", "serving " + tls->Current()->summary());
  }
  kimi::http::ServerOptions options{*kimi::config::ParseListenAddress(config.server.listen), config.limits, tls.get()};
  // The auditor is wired into the server now and gets its sink below, before Run().
  kimi::http::RequestAuditor auditor(kimi::http::AuditPolicy{config.audit.fail_closed, config.audit.record_probes});
  // Likewise the authenticator: its store is attached once the database is open.
  kimi::auth::Authenticator authenticator(AuthOptionsOf(config.auth));
  kimi::http::Services services{&registry, &readiness, &auditor};
  services.authenticator = &authenticator;
  // Likewise the policy service: attached and started once the database and audit log are.
  kimi::policy::PolicyService policy_service;
  services.policy = &policy_service;
  // The auditors' routes read the audit log; filled once the sink is open, before Run().
  kimi::http::AuditAccess audit_access;
  services.audit_access = &audit_access;
  services.admin_requires_client_certificate = tls != nullptr && tls->verifies_clients();
  if (tls != nullptr) {
    // A failed reload keeps the old certificate serving: the component stays ready and
    // keeps the failure for the operator.
    services.reload_tls = [&tls, &authenticator, &readiness](const kimi::auth::Actor& actor) {
      kimi::Result<std::string> reloaded = kimi::http::ReloadTlsAudited(*tls, authenticator, actor);
      if (reloaded.ok()) readiness.MarkReady("tls", "serving " + *reloaded);
      else readiness.RecordFailure("tls", "reload by " + actor.id + " failed, the previous certificate still serves: " +
                                              reloaded.status().message());
      return reloaded;
    };
  }
  // The router chooses among the embedded engine and the configured upstreams; with no
  // `router.backends` it serves the embedded engine alone.
  // With upstreams configured, "router" is a readiness component that stays ready (the router
  // routes around a failing backend) and keeps the last backend failure for the operator.
  std::function<void(const std::string&, const kimi::Status&, bool)> on_backend_failure;
  if (!config.router.backends.empty()) {
    std::string names;
    for (const auto& b : config.router.backends) names += (names.empty() ? "" : ", ") + b.name;
    readiness.MarkReady("router", "backends: " + names);
    on_backend_failure = [&readiness](const std::string& backend, const kimi::Status& error, bool opened) {
      readiness.RecordFailure("router", "backend " + backend + " failed" +
                                            (opened ? " and its circuit breaker opened" : "") + ": " + error.ToString());
    };
  }
  auto router = kimi::router::BuildRouter(config.router, embedded, &registry, std::move(on_backend_failure));
  if (!router.ok()) {
    kimi::log::Error("cannot build the inference router", {{"error", router.status().ToString()}});
    return 1;
  }
  // Every request is timed against the active policy's service levels (/metrics), whichever
  // backend the router picks.
  kimi::policy::SloMetrics slo_metrics(&registry);
  kimi::policy::SloMeasuringBackend measured_backend(router->get(), &policy_service, &slo_metrics);
  services.backend = &measured_backend;
  // The policy step counts prompt tokens with the embedded engine's tokenizer and chat format.
  policy_service.SetPromptTokenCounters(PromptTokenCounters(backend, config.model.served_id));
  services.stream_argument_chunk_bytes = static_cast<size_t>(config.model.stream_argument_chunk_bytes);
  kimi::api::ModelRulesTable request_rules;
  for (const kimi::config::ModelRulesConfig& entry : config.request_rules) {
    if (kimi::Status added = request_rules.Add(entry.model, entry.rules); !added.ok()) {
      kimi::log::Error("bad request_rules entry", {{"model", entry.model}, {"error", added.ToString()}});
      return 1;
    }
  }
  services.request_rules = &request_rules;
  // Set once the audit log is open, before the server runs; read when /metrics is scraped.
  const kimi::audit::AuditSink* metrics_audit = nullptr;
  services.before_metrics_render = [&policy_service, &slo_metrics, engine = EngineMetricsRefresher(registry, backend),
                                    usage = kimi::http::UsageLedgerMetricsRefresher(
                                        registry, [&authenticator] { return authenticator.UsageStats(); }),
                                    audit = kimi::http::AuditWriterMetricsRefresher(
                                        registry, [&metrics_audit]() -> std::optional<kimi::audit::AuditSinkStats> {
                                          if (metrics_audit == nullptr) return std::nullopt;
                                          return metrics_audit->Stats();
                                        }),
                                    request_work = kimi::http::RequestWorkMetricsRefresher(registry)] {
    engine();
    request_work();
    usage();
    audit();
    if (std::shared_ptr<const kimi::policy::ActivePolicy> active = policy_service.Active()) {
      slo_metrics.PublishTargets(active->policy);
    }
  };
  kimi::http::ConsoleAssets console(config.console.assets_dir);
  if (!config.console.assets_dir.empty()) services.console = &console;
  // The model admin API; the model store is attached once the database is open.
  kimi::models::ModelAdminOptions admin_options;
  admin_options.import_roots = config.model.import_roots;
  kimi::models::ModelAdmin model_admin(nullptr, admin_options);
  services.model_admin = &model_admin;
  // The trust store models are verified with, which the admin API edits; its changes are
  // audited through the sink once that is open (no request is served before).
  kimi::audit::AuditSink* trust_audit = nullptr;
  kimi::models::TrustDirectory trust_directory(config.model.trust_store, [&trust_audit](kimi::audit::AuditRecord r) {
    if (trust_audit == nullptr) return kimi::Status::Unavailable("the audit log is not open");
    return trust_audit->Record(std::move(r)).WaitCommitted();
  });
  services.trust = &trust_directory;
  // Set once the model store is open, before the server runs.
  kimi::models::ServedModel* served_model = nullptr;
  services.describe_model = [&served_model, served_id = config.model.served_id](
                                const std::string& model) -> std::optional<kimi::http::ServedModelDetails> {
    if (served_model == nullptr || model != served_id) return std::nullopt;
    std::optional<kimi::models::ServedVersion> current = served_model->Current();
    if (!current) return std::nullopt;
    return kimi::http::ServedModelDetails{current->digest, current->version, current->since_unix_s};
  };
  kimi::http::Server server(options, services, registry);
  if (kimi::Status bound = server.Bind(); !bound.ok()) {
    kimi::log::Error(bound.message());
    return 1;
  }
  kimi::log::Info("starting", {{"version", KIMI_APPLIANCE_VERSION}, {"config", flags.config_path},
                               {"pid", static_cast<int64_t>(getpid())}});

  // Files an older version or a tool left readable by others are tightened before any is opened.
  kimi::Result<std::vector<std::string>> tightened = kimi::store::RestrictTreeToOwner(config.storage.data_dir);
  if (!tightened.ok()) {
    kimi::log::Error("cannot restrict the data directory to its owner", {{"error", tightened.status().message()}});
    return 1;
  }
  if (!tightened->empty()) {
    kimi::log::Warn("data directory files were readable by others; now owner-only",
                    {{"files", static_cast<int64_t>(tightened->size())}, {"first", tightened->front()}});
  }
  kimi::Result<std::unique_ptr<kimi::store::Store>> store = kimi::store::Store::Open(config.storage.data_dir);
  if (!store.ok()) {
    kimi::log::Error("cannot open the database", {{"error", store.status().message()}});
    return 1;
  }
  kimi::Result<int> migrated = (*store)->Migrate(kimi::store::AllMigrations());
  if (!migrated.ok()) {
    kimi::log::Error("cannot migrate the database", {{"error", migrated.status().message()}});
    return 1;
  }
  kimi::log::Info("database open", {{"path", (*store)->path()}, {"migrations_applied", *migrated}});
  readiness.MarkReady("database", "open: " + (*store)->path());

  // The audit log, before any request is accepted: no request is ever served unaudited.
  std::unique_ptr<kimi::audit::AuditSink> audit_sink;
  // The full pass over the rows the start-up check did not read; stopped before the sink closes.
  std::unique_ptr<kimi::audit::BackgroundVerifier> audit_full_check;
  {
    kimi::audit::AuditSinkOptions audit_options;
    audit_options.data_dir = config.storage.data_dir;
    audit_options.sign_interval_ms = config.audit.sign_interval_ms;
    audit_options.probe_interval_ms = config.audit.probe_interval_ms;
    audit_options.store.busy_timeout_ms = static_cast<int>(config.audit.busy_timeout_ms);
    audit_options.commit_window_ms = config.audit.commit_window_ms;
    // Content is stored only when the policy says so (default off); then it is purged at the
    // policy's retention age.
    if (auditor.policy().content.store_content) {
      audit_options.content_retention = auditor.policy().content;
    } else {
      // The active policy's retention age (policies can store content; docs/policies.md).
      audit_options.content_cutoff_ms = [&policy_service](int64_t now_ms) -> std::optional<int64_t> {
        std::shared_ptr<const kimi::policy::ActivePolicy> active = policy_service.Active();
        if (active == nullptr) return std::nullopt;
        return kimi::policy::RetentionCutoffMs(active->policy, now_ms);
      };
    }
    audit_options.on_health_change = [&readiness](bool healthy, const std::string& reason) {
      if (healthy) readiness.MarkReady("audit", "writable");
      else readiness.MarkNotReady("audit", reason);
    };
    kimi::Result<std::unique_ptr<kimi::audit::AuditSink>> opened = kimi::audit::AuditSink::Open(audit_options);
    if (!opened.ok()) {
      // Exits rather than serving in a not-ready state: nothing may be appended to (or signed
      // over) a log the appliance cannot vouch for; the error names the first bad seq.
      kimi::log::Error("cannot open the audit log; not starting", {{"error", opened.status().ToString()}});
      return 1;
    }
    audit_sink = std::move(opened).value();
    audit_full_check = std::make_unique<kimi::audit::BackgroundVerifier>(
        config.storage.data_dir + "/" + std::string(kimi::audit::kAuditDbFile), audit_sink->public_key(),
        [sink = audit_sink.get()](const std::string& reason) { sink->Distrust(reason); });
    // The settings as read (file and overrides): a start with other settings than the previous
    // start's records a settings change (audit/settings_change.h).
    std::vector<std::string> override_texts;
    for (const kimi::config::Override& o : flags.overrides) override_texts.push_back(o.flag + "=" + o.value);
    kimi::Result<std::string> config_bytes = kimi::audit::ReadTextFile(flags.config_path);
    const std::string settings =
        kimi::audit::SettingsDigest(config_bytes.ok() ? *config_bytes : std::string(), override_texts);
    kimi::Result<std::optional<std::string>> previous_settings = kimi::audit::PreviousSettingsDigest(
        config.storage.data_dir + "/" + std::string(kimi::audit::kAuditDbFile));
    std::string start_detail = std::string("version ") + KIMI_APPLIANCE_VERSION + "; " +
                               std::string(kimi::audit::kSettingsDigestPrefix) + settings;
    if (!config.audit.record_requests) {
      start_detail += "; requests not recorded (audit.record_requests is off)";
      kimi::log::Warn("API requests are served without audit records (audit.record_requests is off)");
    }
    kimi::Status started = RecordServiceEvent(*audit_sink, "service.start", start_detail);
    if (!started.ok()) {
      kimi::log::Error("cannot record the service start in the audit log", {{"error", started.ToString()}});
      return 1;
    }
    if (previous_settings.ok() && previous_settings->has_value() && **previous_settings != settings) {
      kimi::Status changed = RecordServiceEvent(*audit_sink, "settings.changed",
                                                std::string(kimi::audit::kSettingsDigestPrefix) + **previous_settings +
                                                    " -> " + settings + " (" + flags.config_path + ")");
      if (!changed.ok()) {
        kimi::log::Error("cannot record the settings change in the audit log", {{"error", changed.ToString()}});
        return 1;
      }
    }
    // Streams the previous run started and never ended (it died mid-stream) get their end
    // record before anything is served.
    kimi::Result<uint64_t> interrupted = audit_sink->RecordInterruptedStreams();
    if (!interrupted.ok()) {
      kimi::log::Error("cannot record the interrupted streams in the audit log", {{"error", interrupted.status().ToString()}});
      return 1;
    }
    if (*interrupted > 0) {
      kimi::log::Warn("streams cut by the previous stop recorded as interrupted",
                      {{"streams", static_cast<int64_t>(*interrupted)}});
    }
    if (config.audit.record_requests) auditor.Attach(audit_sink.get());
    trust_audit = audit_sink.get();
    metrics_audit = audit_sink.get();
    audit_access = kimi::http::AuditAccess{config.storage.data_dir + "/" + std::string(kimi::audit::kAuditDbFile),
                                           audit_sink->public_key(), audit_sink.get()};
    if (audit_sink->Healthy()) readiness.MarkReady("audit", "writable");
    kimi::log::Info("service start recorded in the audit log", {{"records", static_cast<int64_t>(audit_sink->TreeSize())},
                                       {"fail_closed", config.audit.fail_closed}});
  }

  // Authentication: the server secret, the key/user/session tables, and the outbox that
  // moves auth events (including those kimictl wrote while the daemon was down) into the
  // audit log.
  kimi::Result<kimi::auth::ServerSecret> secret = kimi::auth::ServerSecret::LoadOrCreate(config.storage.data_dir);
  if (!secret.ok()) {
    kimi::log::Error("cannot load the authentication secret", {{"error", secret.status().ToString()}});
    return 1;
  }
  kimi::auth::AuthStore auth_store(store->get());
  kimi::auth::AuditOutbox auth_outbox(&auth_store, audit_sink.get());
  authenticator.Attach(&auth_store, *secret, &auth_outbox);
  if (kimi::Status drained = auth_outbox.Drain(); !drained.ok()) {
    kimi::log::Error("cannot move pending auth events into the audit log", {{"error", drained.ToString()}});
    return 1;
  }
  auth_outbox.Start(1000);

  // Policies: the newest stored version is active; a first start installs the shipped
  // default as version 1. Each change is an audited act.
  kimi::policy::PolicyStore policy_store(store->get());
  policy_service.Attach(&policy_store, &*secret, [&audit_sink](kimi::audit::AuditRecord record) {
    return audit_sink->Record(std::move(record)).WaitCommitted();
  });
  if (kimi::Status started = policy_service.Start(kimi::policy::DefaultPolicyDocument(), {"kimi-appliance", "system", "", ""});
      !started.ok()) {
    kimi::log::Error("cannot load the active policy", {{"error", started.ToString()}});
    return 1;
  }
  kimi::log::Info("policy active", {{"version", policy_service.Active()->version},
                                    {"name", policy_service.Active()->policy.name}});

  // Connections that arrive from here on are served; the kernel queued earlier ones.
  kimi::log::Info("listening", {{"address", server.bound_address()},
                                {"url", (tls ? "https://" : "http://") + server.bound_address() + "/"},
                                {"max_connections", config.limits.max_connections}});
  if (console.Installed()) {
    kimi::log::Info("console", {{"url", "http://" + server.bound_address() + "/console/"}, {"assets_dir", console.root()}});
  } else if (!config.console.assets_dir.empty()) {
    kimi::log::Warn("the console is not installed; /console/ answers 404", {{"assets_dir", console.root()}});
  }

  // The model store; the model loads while the server answers: probes work and the API
  // says 503 until then. The admin model routes work from here on.
  if (kimi::Status trusted = trust_directory.Load(); !trusted.ok()) {
    kimi::log::Error("cannot read the trust store", {{"path", config.model.trust_store}, {"error", trusted.ToString()}});
    return 1;
  }
  kimi::Result<std::unique_ptr<kimi::models::ServedModel>> served =
      OpenServedModel(config, store->get(), audit_sink.get(), &backend, &readiness, &trust_directory);
  if (!served.ok()) {
    kimi::log::Error("cannot open the model store", {{"error", served.status().ToString()}});
    return 1;
  }
  model_admin.Attach((*served)->store());
  served_model = served->get();
  std::thread model_loader([&served] { (*served)->Start(); });

  std::atomic<bool> done{false};
  // SIGHUP: reload the TLS certificate and check the served model's bytes now.
  // The served model goes before the signal thread does: hangup_mu orders the two.
  std::mutex hangup_mu;
  kimi::models::ServedModel* hangup_model = served->get();  // guarded by hangup_mu
  std::function<void()> on_hangup = [&services, &hangup_mu, &hangup_model] {
    if (services.reload_tls) (void)services.reload_tls({"SIGHUP", "system", "local"});
    std::lock_guard<std::mutex> lock(hangup_mu);
    if (hangup_model != nullptr) hangup_model->CheckIntegrityNow();
  };
  const auto force_after = std::chrono::milliseconds(config.limits.shutdown_grace_ms) + kStopAfterGrace;
  std::thread signals(WatchSignals, &server, &done, force_after, std::move(on_hangup));
  server.Run();
  model_loader.join();
  // Cancels a running import, detaches and unloads the engine; its acts are audited, so
  // before the audit log closes.
  model_admin.Close();
  served_model = nullptr;
  {
    std::lock_guard<std::mutex> lock(hangup_mu);
    hangup_model = nullptr;
  }
  served->reset();

  auth_outbox.Stop();
  if (kimi::Status drained = auth_outbox.Drain(); !drained.ok()) {
    kimi::log::Error("auth events left in the outbox for the next start", {{"error", drained.ToString()}});
  }
  authenticator.Close();  // writes the keys' usage rows not written yet
  auth_store.Close();

  audit_full_check.reset();
  // Every request has been answered (and so recorded); the stop is the log's last record,
  // and Close() signs the head that covers it.
  kimi::Status stop_recorded = RecordServiceEvent(*audit_sink, "service.stop", "clean shutdown");
  if (!stop_recorded.ok()) {
    kimi::log::Error("cannot record the service stop in the audit log", {{"error", stop_recorded.ToString()}});
  }
  kimi::Status audit_closed = audit_sink->Close();
  readiness.MarkPending("audit", "closed: shutting down");
  if (!audit_closed.ok()) {
    kimi::log::Error("closing the audit log failed", {{"error", audit_closed.ToString()}});
  } else {
    kimi::log::Info("audit log closed", {{"records", static_cast<int64_t>(audit_sink->TreeSize())}});
  }
  readiness.MarkPending("database", "closed: shutting down");
  kimi::Status closed = (*store)->Close();
  if (!closed.ok()) {
    kimi::log::Error("closing the database failed", {{"error", closed.message()}});
  } else {
    kimi::log::Info("database closed", {{"path", (*store)->path()}});
  }
  done.store(true);
  signals.join();
  kimi::log::Info("stopped");
  return closed.ok() && stop_recorded.ok() && audit_closed.ok() ? 0 : 1;
}
