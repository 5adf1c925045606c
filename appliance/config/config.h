// The daemon's configuration: one typed struct per section, loaded from one JSON file.
//
// The struct member initialisers are the defaults; AppConfigSchema() binds JSON onto them
// (see schema.h) and is the only place keys are declared. LoadConfigFile() reads the file,
// rejects invalid JSON, duplicate keys, unknown keys and wrong types with the key's JSON path,
// applies command-line overrides through the same schema, resolves relative paths and runs
// the cross-key checks of CheckConfig(). docs/configuration.md documents every key; a unit
// test keeps the two in step.
// Public header of config/: other folders include it.
// Thread safety: AppConfig is a value; the schema is immutable and shared.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/router_config.h"
#include "config/schema.h"
#include "kimi/status.h"

namespace kimi::config {

inline constexpr const char* kDefaultConfigPath = "/etc/kimi-appliance/appliance.json";

// HTTPS (docs/security.md): served when cert_file is set.
struct TlsConfig {
  std::string cert_file;           // PEM certificate, then any intermediates
  std::string key_file;            // PEM private key (unencrypted; mode 0600)
  std::string min_version = "1.2";  // "1.2" or "1.3"
  std::string admin_client_ca_file;  // set: /admin/ requests need a client certificate it issued
};

struct ServerConfig {
  std::string listen = "127.0.0.1:8080";
  bool allow_plain_http_on_loopback = false;
  // Names a plain-HTTP request may give as its Host besides addresses and localhost (a reverse
  // proxy on this machine that forwards its own); any other is refused (kimi/loopback_host.h).
  std::vector<std::string> plain_http_hosts;
  TlsConfig tls;
  bool tls_enabled() const { return !tls.cert_file.empty(); }
};

struct StorageConfig {
  std::string data_dir = "/var/lib/kimi-appliance";
};

struct LogConfig {
  std::string level = "info";
  std::string format = "auto";
};

struct LimitsConfig {
  int64_t max_body_bytes = 8 * 1024 * 1024;
  int64_t max_header_bytes = 16 * 1024;
  int64_t read_timeout_ms = 30'000;
  int64_t write_timeout_ms = 30'000;
  int64_t idle_timeout_ms = 5'000;
  int64_t max_connections = 64;
  int64_t worker_wait_ms = 2'000;  // a connection without a worker waits this long before 503
  int64_t max_requests_per_connection = 1000;
  int64_t shutdown_grace_ms = 10'000;
};

// The audit log of requests and administrative acts (<data_dir>/audit.db, docs/audit.md).
struct AuditConfig {
  bool fail_closed = true;            // refuse with 503 rather than answer unaudited
  int64_t sign_interval_ms = 10'000;  // sign a tree head this often when the log grew
  int64_t probe_interval_ms = 1'000;  // retry a failing audit store this often
  int64_t busy_timeout_ms = 5'000;    // wait for a locked audit database this long per write
  int64_t commit_window_ms = 0;       // a record waits this long for others to share its commit
  bool record_probes = false;         // also record /healthz, /readyz and /metrics
  // Requests without a principal recorded one by one, a minute; past either, they are counted
  // (http/anonymous_record_budget.h). 0: no bound.
  int64_t anonymous_records_per_minute_per_source = 120;
  int64_t anonymous_records_per_minute = 1'200;
  // Off only to measure the audit log's cost (bench/audit_daemon_bench.py): API requests then
  // get no record; administrative acts still do, and service.start says requests are not.
  bool record_requests = true;
};

// The model the embedded engine serves (docs/api.md). Empty dir: no model; the API answers
// 503 and /readyz says why.
struct ModelConfig {
  std::string dir;                  // a signed model directory (model.sig inside)
  std::string served_id = "kimi-k3";  // the id clients name in "model"
  std::string trust_store;          // a PEM file or a directory of *.pem files
  int64_t max_num_seqs = 32;
  int64_t max_num_batched_tokens = 256;
  int64_t decode_step_token_budget = 32;  // kimi::RuntimeOptions::decode_step_token_budget
  int64_t memory_budget_bytes = int64_t{1} << 30;
  int64_t default_max_tokens = 2048;
  int64_t threads = 0;                   // kernel threads; 0: one per hardware thread
  int64_t stream_argument_chunk_bytes = 64;
  // The model store (<data_dir>/models, docs/model-lifecycle.md): the id of the model whose
  // active version is served (it wins over `dir`), and where imports may read from.
  std::string store_id = "k3";
  std::vector<std::string> import_roots = {"/media", "/mnt", "/run/media"};
  // The served-bytes check (docs/model-lifecycle.md, "Served bytes"): seconds between passes
  // (0: only at load, on SIGHUP and on a write), and its pace.
  int64_t integrity_interval_s = 3600;
  int64_t integrity_mib_per_second = 256;  // 0: unpaced
};

// Authentication of API clients and console users (docs/security.md).
struct AuthConfig {
  int64_t argon2_ops_limit = 2;            // Argon2id passes (libsodium "interactive")
  int64_t argon2_mem_limit_kib = 65'536;   // Argon2id memory per hash
  int64_t password_min_length = 12;
  int64_t lockout_threshold = 5;           // consecutive failures that lock an account
  int64_t lockout_base_ms = 30'000;        // first lock; doubles with each further failure
  int64_t lockout_max_ms = 3'600'000;
  int64_t session_idle_timeout_ms = 1'800'000;
  int64_t session_absolute_timeout_ms = 43'200'000;
  int64_t key_last_used_flush_ms = 10'000;
  int64_t max_concurrent_streams = 0;      // generation requests in flight, appliance-wide; 0: none
  int64_t usage_flush_ms = 1'000;          // finished requests' usage rows are written at most this late
  int64_t login_attempts_per_minute_per_source = 30;  // console logins per client address; 0: no limit
  int64_t login_attempts_per_minute_per_user = 10;    // console logins per user name; 0: no limit
  int64_t max_concurrent_password_hashes = 4;         // Argon2id computations at once
  int64_t password_hash_wait_ms = 2'000;              // longest wait for one before a 429
};

// The web console's static files (admin-ui/, docs/console.md).
struct ConsoleConfig {
  std::string assets_dir = "/usr/share/kimi-appliance/console";  // empty: the console is not served
};

// The request rules of one served model (config/model_request_rules.h); a model without
// an entry gets Kimi K3's.
struct ModelRulesConfig {
  std::string model;
  nlohmann::json rules = nlohmann::json::object();
};

struct AppConfig {
  ServerConfig server;
  StorageConfig storage;
  LogConfig log;
  LimitsConfig limits;
  AuditConfig audit;
  ModelConfig model;
  AuthConfig auth;
  router::RouterConfig router;
  ConsoleConfig console;
  std::vector<ModelRulesConfig> request_rules;
};

const ObjectSchema<AppConfig>& AppConfigSchema();

// A command-line flag that replaces one string key, e.g. {"--listen", {"server","listen"}, v}.
struct Override {
  std::string flag;
  std::vector<std::string> keys;
  std::string value;
};

// Parses configuration text. `origin` names the source in messages (a file path).
// Relative storage.data_dir values from the text are resolved against `base_dir`; values
// from overrides against the working directory.
Result<AppConfig> ParseConfig(std::string_view text, std::string_view origin, const std::vector<Override>& overrides,
                              const std::string& base_dir);

// Reads and parses the file at `path` (see ParseConfig), then CheckConfig().
Result<AppConfig> LoadConfigFile(const std::string& path, const std::vector<Override>& overrides);

// Checks that involve several keys: the listen address parses; without TLS, plain HTTP is
// served only on loopback and only when allowed; with TLS, both files are named.
Status CheckConfig(const AppConfig& config);

}  // namespace kimi::config
