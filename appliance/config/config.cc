#include "config/config.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "config/listen_address.h"
#include "config/model_request_rules.h"
#include "kimi/json_keys.h"
#include "kimi/regular_file.h"

namespace kimi::config {
namespace {

// A configuration is a few KiB; anything past this is not one.
constexpr uint64_t kMaxConfigFileBytes = 4u << 20;

ObjectSchema<TlsConfig> TlsSchema() {
  return ObjectSchema<TlsConfig>()
      .String("cert_file", &TlsConfig::cert_file,
              "PEM certificate (then any intermediate certificates) served for HTTPS. Set: the daemon serves HTTPS "
              "only. Relative paths are resolved against the directory of the configuration file. "
              "`kimictl tls selfsigned` makes one.")
      .String("key_file", &TlsConfig::key_file,
              "PEM private key of cert_file, unencrypted, readable by the daemon only. The daemon refuses to "
              "start when it cannot read it or it does not match the certificate.")
      .OneOf("min_version", &TlsConfig::min_version, {"1.2", "1.3"},
             "Lowest TLS version accepted. TLS 1.0 and 1.1 are never accepted.")
      .String("admin_client_ca_file", &TlsConfig::admin_client_ca_file,
              "PEM CA certificates. Set: every /admin/ request must also come over a connection that presented "
              "a client certificate they issued (mutual TLS); the OpenAI API does not ask for one.");
}

ObjectSchema<ServerConfig> ServerSchema() {
  return ObjectSchema<ServerConfig>()
      .String("listen", &ServerConfig::listen,
              "Address and port to listen on: \"127.0.0.1:8080\", \"[::1]:8080\". Numeric addresses only; "
              "port 0 picks a free port.",
              [](const std::string& v) {
                Result<ListenAddress> parsed = ParseListenAddress(v);
                return parsed.ok() ? std::string() : parsed.status().message();
              })
      .Boolean("allow_plain_http_on_loopback", &ServerConfig::allow_plain_http_on_loopback,
               "Serve plain HTTP when the listen address is loopback and server.tls is not set. Without TLS the "
               "daemon only starts when this is true and the address is loopback.")
      .StringList("plain_http_hosts", &ServerConfig::plain_http_hosts,
                  "Host names a plain-HTTP request may name besides IP addresses and localhost: those a reverse "
                  "proxy on this machine forwards. Any other name is refused (DNS rebinding).",
                  [](const std::string& v) {
                    constexpr std::string_view kNameBytes =
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-";
                    const bool name = !v.empty() && v.size() <= 253 && v.front() != '.' && v.back() != '.' &&
                                      v.find_first_not_of(kNameBytes) == std::string::npos;
                    return name ? std::string() : std::string("must be a DNS name without a port");
                  })
      .Object("tls", &ServerConfig::tls, TlsSchema(), "HTTPS: certificate, key, lowest version.");
}

ObjectSchema<StorageConfig> StorageSchema() {
  return ObjectSchema<StorageConfig>().String(
      "data_dir", &StorageConfig::data_dir,
      "Directory of the daemon's state (appliance.db). Created with mode 0700 when missing. A relative path "
      "is resolved against the directory of the configuration file.",
      [](const std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); });
}

ObjectSchema<LogConfig> LogSchema() {
  return ObjectSchema<LogConfig>()
      .OneOf("level", &LogConfig::level, {"debug", "info", "warn", "error"}, "Lowest level written.")
      .OneOf("format", &LogConfig::format, {"auto", "json", "text"},
             "json: one JSON object a line; text: readable lines; auto: text on a terminal, json otherwise.");
}

ObjectSchema<LimitsConfig> LimitsSchema() {
  constexpr int64_t kHour = 3'600'000;
  return ObjectSchema<LimitsConfig>()
      .Integer("max_body_bytes", &LimitsConfig::max_body_bytes, 1, int64_t{1} << 30,
               "Largest request body accepted; larger ones get 413.")
      .Integer("max_header_bytes", &LimitsConfig::max_header_bytes, 1024, 1 << 20,
               "Largest request head (request line and headers) accepted; larger ones, or one header line over "
               "8192 bytes, get 431.")
      .Integer("read_timeout_ms", &LimitsConfig::read_timeout_ms, 100, kHour,
               "Time allowed to receive a whole request (head and body), counted from its first byte (from the "
               "connection's accept for the first request). A client that is slower is disconnected.")
      .Integer("write_timeout_ms", &LimitsConfig::write_timeout_ms, 100, kHour,
               "Longest a single write may wait for the client to take bytes.")
      .Integer("idle_timeout_ms", &LimitsConfig::idle_timeout_ms, 100, kHour,
               "How long a keep-alive connection may wait idle for its next request.")
      .Integer("max_connections", &LimitsConfig::max_connections, 1, 4096,
               "Connections served at once; each has a worker thread. Excess connections get 503.")
      .Integer("worker_wait_ms", &LimitsConfig::worker_wait_ms, 0, 60'000,
               "How long a connection arriving while every worker is busy waits for one (an idle keep-alive "
               "connection gives its worker up) before it gets 503; 0: at once.")
      .Integer("max_requests_per_connection", &LimitsConfig::max_requests_per_connection, 1, 1'000'000,
               "Requests served on one keep-alive connection before the server closes it.")
      .Integer("shutdown_grace_ms", &LimitsConfig::shutdown_grace_ms, 0, kHour,
               "On SIGTERM/SIGINT, how long in-flight requests may run before their connections are closed.");
}

ObjectSchema<AuditConfig> AuditSchema() {
  constexpr int64_t kHour = 3'600'000;
  return ObjectSchema<AuditConfig>()
      .Boolean("fail_closed", &AuditConfig::fail_closed,
               "When a request's audit record cannot be committed, answer 503 instead of the response.")
      .Integer("sign_interval_ms", &AuditConfig::sign_interval_ms, 100, kHour,
               "Sign a tree head this often when the log grew; one is also signed at shutdown.")
      .Integer("probe_interval_ms", &AuditConfig::probe_interval_ms, 50, kHour,
               "While the audit store cannot write, retry it this often.")
      .Integer("busy_timeout_ms", &AuditConfig::busy_timeout_ms, 0, 600'000,
               "How long one audit write waits for a locked audit database before it fails.")
      .Integer("commit_window_ms", &AuditConfig::commit_window_ms, 0, 1'000,
               "How long a request's audit record may wait for others to share its commit (0: none).")
      .Boolean("record_probes", &AuditConfig::record_probes,
               "Also record /healthz, /readyz and /metrics requests, and the status reads of a console "
               "session or of a request with no credential (docs/audit.md).")
      .Integer("anonymous_records_per_minute_per_source", &AuditConfig::anonymous_records_per_minute_per_source, 0,
               1'000'000,
               "Requests without a principal (a wrong or missing key, a malformed request, a failed sign-in) "
               "recorded one by one per client address a minute; past it they are counted, one record per "
               "count (docs/audit.md). 0: no bound.")
      .Integer("anonymous_records_per_minute", &AuditConfig::anonymous_records_per_minute, 0, 10'000'000,
               "The same bound for all client addresses together. 0: no bound.")
      .Boolean("record_requests", &AuditConfig::record_requests,
               "Record every API request (on by default); off only to measure the audit log's cost.");
}

ObjectSchema<AuthConfig> AuthSchema() {
  constexpr int64_t kDay = 86'400'000;
  return ObjectSchema<AuthConfig>()
      .Integer("argon2_ops_limit", &AuthConfig::argon2_ops_limit, 1, 20,
               "Argon2id passes over memory per password hash (libsodium's opslimit).")
      .Integer("argon2_mem_limit_kib", &AuthConfig::argon2_mem_limit_kib, 8, 4 * 1024 * 1024,
               "Argon2id memory per password hash, in KiB (libsodium's memlimit / 1024).")
      .Integer("password_min_length", &AuthConfig::password_min_length, 8, 1024,
               "Shortest password accepted for a console user.")
      .Integer("lockout_threshold", &AuthConfig::lockout_threshold, 1, 1000,
               "Consecutive failed logins after which the account is locked.")
      .Integer("lockout_base_ms", &AuthConfig::lockout_base_ms, 1, kDay,
               "Length of the first lock; each further failure doubles it.")
      .Integer("lockout_max_ms", &AuthConfig::lockout_max_ms, 1, 30 * kDay, "Longest lock.")
      .Integer("session_idle_timeout_ms", &AuthConfig::session_idle_timeout_ms, 1000, kDay,
               "A console session unused this long ends.")
      .Integer("session_absolute_timeout_ms", &AuthConfig::session_absolute_timeout_ms, 1000, 30 * kDay,
               "A console session ends this long after login, used or not.")
      .Integer("key_last_used_flush_ms", &AuthConfig::key_last_used_flush_ms, 100, kDay,
               "API key last-use times are written to the database at most this often.")
      .Integer("max_concurrent_streams", &AuthConfig::max_concurrent_streams, 0, 1'000'000,
               "Chat and completion requests in flight at once, over every key and session; 0: no limit.")
      .Integer("usage_flush_ms", &AuthConfig::usage_flush_ms, 10, 60'000,
               "Finished requests' token usage is written to the keys' usage rows together, at most this late.")
      .Integer("login_attempts_per_minute_per_source", &AuthConfig::login_attempts_per_minute_per_source, 0,
               1'000'000, "Console login attempts per minute from one client address (429 beyond); 0: no limit.")
      .Integer("login_attempts_per_minute_per_user", &AuthConfig::login_attempts_per_minute_per_user, 0, 1'000'000,
               "Console login attempts per minute for one user name, known or not (429 beyond); 0: no limit.")
      .Integer("max_concurrent_password_hashes", &AuthConfig::max_concurrent_password_hashes, 1, 1024,
               "Argon2id computations at once (each uses argon2_mem_limit_kib); further ones wait.")
      .Integer("password_hash_wait_ms", &AuthConfig::password_hash_wait_ms, 0, 60'000,
               "How long a login waits for a free Argon2id computation before it is refused with 429.");
}

std::string LineAndColumn(std::string_view text, size_t byte) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + " column " + std::to_string(column);
}

Result<nlohmann::json> ParseJson(std::string_view text, std::string_view origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
    size_t colon = what.find(": ");
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    return Status::InvalidArgument(std::string(origin) + ": invalid JSON at " + LineAndColumn(text, e.byte) + ": " +
                                   reason);
  }
  // JSON allows a key twice in one object, but a file where a later "level" silently wins over
  // an earlier one is a trap for the operator.
  if (const auto duplicate = CheckJsonKeys(text)) {
    return Status::InvalidArgument(std::string(origin) + ": " + duplicate->path + ": duplicate key");
  }
  return j;
}

ObjectSchema<ModelConfig> ModelSchema() {
  return ObjectSchema<ModelConfig>()
      .String("dir", &ModelConfig::dir,
              "Directory of the signed model the embedded engine serves (weights, tokenizer, model.sig). Verified "
              "against model.trust_store before any byte is loaded. Empty: no model; the API answers 503. A "
              "relative path is resolved against the directory of the configuration file.")
      .String("served_id", &ModelConfig::served_id, "The model id clients name in requests and see in /v1/models.",
              [](const std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); })
      .String("trust_store", &ModelConfig::trust_store,
              "The public keys trusted to sign models: a PEM file, or a directory of *.pem files. Relative to the "
              "configuration file's directory when relative.")
      .Integer("max_num_seqs", &ModelConfig::max_num_seqs, 1, 4096, "Sequences the engine runs at once.")
      .Integer("max_num_batched_tokens", &ModelConfig::max_num_batched_tokens, 1, 1 << 20,
               "Tokens per engine step, shared by the running decodes and prefill chunks.")
      .Integer("decode_step_token_budget", &ModelConfig::decode_step_token_budget, 0, 1 << 20,
               "While requests decode, prefill chunks take at most max(this - decodes, this / 2) tokens of a "
               "step, bounding the inter-token gap a newly arrived prompt adds; 0: off.")
      .Integer("memory_budget_bytes", &ModelConfig::memory_budget_bytes, 1 << 20, int64_t{1} << 50,
               "Bytes of sequence state (KDA slots and MLA pages) the engine may hold; requests are admitted "
               "against it.")
      .Integer("default_max_tokens", &ModelConfig::default_max_tokens, 1, 1 << 20,
               "Output cap of a request that names no max_tokens (always capped by the model's context).")
      .Integer("threads", &ModelConfig::threads, 0, 1024, "Kernel threads of the engine; 0: one per hardware thread.")
      .Integer("stream_argument_chunk_bytes", &ModelConfig::stream_argument_chunk_bytes, 1, 1 << 20,
               "Largest piece of a tool call's arguments in one streamed frame.")
      .String("store_id", &ModelConfig::store_id,
              "The model id in the model store whose active version the engine serves; an active version wins "
              "over model.dir. 1-64 characters of a-z, 0-9, '.', '_', '-'.",
              [](const std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); })
      .StringList("import_roots", &ModelConfig::import_roots,
                  "Directories (mount points of removable media) the admin API may import models from.",
                  [](const std::string& v) { return v.starts_with("/") ? std::string() : std::string("must be an absolute path"); })
      .Integer("integrity_interval_s", &ModelConfig::integrity_interval_s, 0, 7 * 86400,
               "Seconds between checks that the served weight bytes still hash to the signed manifest (also run "
               "right after each load, on SIGHUP and when a model file is written); 0: no periodic check.")
      .Integer("integrity_mib_per_second", &ModelConfig::integrity_mib_per_second, 0, 1 << 20,
               "Pace of that check in MiB/s, so it does not compete with serving; 0: as fast as one core hashes.");
}

ObjectSchema<ConsoleConfig> ConsoleSchema() {
  return ObjectSchema<ConsoleConfig>().String(
      "assets_dir", &ConsoleConfig::assets_dir,
      "Directory of the web console's files (index.html and its scripts), served at /console/. Empty: the "
      "console is not served. Relative to the configuration file's directory when relative.");
}

}  // namespace

ObjectSchema<ModelRulesConfig> ModelRulesSchema() {
  return ObjectSchema<ModelRulesConfig>()
      .String("model", &ModelRulesConfig::model, "The served model id the rules apply to (required, unique).")
      .JsonValue("rules", &ModelRulesConfig::rules, "object",
                 "Bounds on sampling parameters: `temperature` [min, max], pinned `top_p`, `presence_penalty`, "
                 "`frequency_penalty`, `n` (null: no pin); `max_stop`, `max_stop_bytes` (the `stop` list) and `vocab_size` "
                 "(ids `logit_bias` may name). Absent keys keep K3's values.",
                 [](const nlohmann::json& rules) {
                   Result<api::ModelRequestRules> parsed = api::ModelRequestRules::FromJson(rules);
                   return parsed.ok() ? std::string() : parsed.status().message();
                 });
}

const ObjectSchema<AppConfig>& AppConfigSchema() {
  static const ObjectSchema<AppConfig> schema =
      ObjectSchema<AppConfig>()
          .Object("server", &AppConfig::server, ServerSchema(), "HTTP listener.")
          .Object("storage", &AppConfig::storage, StorageSchema(), "Where state is kept.")
          .Object("log", &AppConfig::log, LogSchema(), "Logging.")
          .Object("limits", &AppConfig::limits, LimitsSchema(), "Caps and timeouts of the HTTP server.")
          .Object("audit", &AppConfig::audit, AuditSchema(), "The audit log of requests and administrative acts.")
          .Object("model", &AppConfig::model, ModelSchema(), "The model the embedded engine serves.")
          .Object("auth", &AppConfig::auth, AuthSchema(), "Authentication of API clients and console users.")
          .Object("router", &AppConfig::router, router::RouterConfigSchema(),
                  "Backends and the inference router (docs/operations.md).")
          .Object("console", &AppConfig::console, ConsoleSchema(), "The web console (docs/console.md).")
          .ObjectList("request_rules", &AppConfig::request_rules, ModelRulesSchema(),
                      "Per-model request rules; models without an entry get Kimi K3's.");
  return schema;
}

Result<AppConfig> ParseConfig(std::string_view text, std::string_view origin, const std::vector<Override>& overrides,
                              const std::string& base_dir) {
  KIMI_ASSIGN_OR_RETURN(nlohmann::json doc, ParseJson(text, origin));
  AppConfig config;
  const auto& schema = AppConfigSchema();
  KIMI_RETURN_IF_ERROR(schema.Bind(doc, "$", &config).WithContext(origin));
  namespace fs = std::filesystem;
  if (fs::path(config.storage.data_dir).is_relative() && !base_dir.empty()) {
    config.storage.data_dir = (fs::path(base_dir) / config.storage.data_dir).lexically_normal().string();
  }
  for (std::string* path :
       {&config.model.dir, &config.model.trust_store, &config.console.assets_dir, &config.server.tls.cert_file,
        &config.server.tls.key_file, &config.server.tls.admin_client_ca_file}) {
    if (!path->empty() && fs::path(*path).is_relative() && !base_dir.empty()) {
      *path = (fs::path(base_dir) / *path).lexically_normal().string();
    }
  }
  for (const Override& o : overrides) {
    // An override is bound through the same schema as a one-key document.
    nlohmann::json patch = o.value;
    for (auto it = o.keys.rbegin(); it != o.keys.rend(); ++it) patch = nlohmann::json{{*it, patch}};
    KIMI_RETURN_IF_ERROR(schema.Bind(patch, "$", &config).WithContext(o.flag));
  }
  return config;
}

Result<AppConfig> LoadConfigFile(const std::string& path, const std::vector<Override>& overrides) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument("configuration file " + path + " is a directory");
  }
  // A link is followed (an operator's choice); a FIFO or a device is refused, not waited on.
  Result<std::string> text = ReadRegularFile(path, kMaxConfigFileBytes, FinalLink::kFollow);
  if (!text.ok()) return text.status().WithContext("configuration file");
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  KIMI_ASSIGN_OR_RETURN(AppConfig config, ParseConfig(*text, path, overrides, base_dir));
  KIMI_RETURN_IF_ERROR(CheckConfig(config).WithContext(path));
  return config;
}

Status CheckConfig(const AppConfig& config) {
  KIMI_ASSIGN_OR_RETURN(ListenAddress listen, ParseListenAddress(config.server.listen));
  const TlsConfig& tls = config.server.tls;
  if (!tls.admin_client_ca_file.empty() && !config.server.tls_enabled()) {
    return Status::FailedPrecondition("$.server.tls.admin_client_ca_file needs HTTPS: set cert_file and key_file too");
  }
  if (config.server.tls_enabled() || !tls.key_file.empty()) {
    if (tls.cert_file.empty() || tls.key_file.empty()) {
      return Status::FailedPrecondition("$.server.tls: cert_file and key_file go together; set both for HTTPS");
    }
  } else if (!listen.IsLoopback()) {
    return Status::FailedPrecondition("$.server.listen: " + listen.ToString() +
                                      " is not a loopback address, and plain HTTP is allowed on loopback only; "
                                      "set server.tls.cert_file and key_file (kimictl tls selfsigned makes them)");
  } else if (!config.server.allow_plain_http_on_loopback) {
    return Status::FailedPrecondition(
        "$.server.tls is not set and $.server.allow_plain_http_on_loopback is false, so there is nothing to serve; "
        "set server.tls.cert_file and key_file for HTTPS, or allow plain HTTP on " +
        listen.ToString());
  }
  KIMI_RETURN_IF_ERROR(router::CheckRouterConfig(config.router));
  for (size_t i = 0; i < config.request_rules.size(); ++i) {
    const std::string& model = config.request_rules[i].model;
    const std::string path = "$.request_rules[" + std::to_string(i) + "].model";
    if (model.empty()) return Status::InvalidArgument(path + ": required");
    for (size_t j = 0; j < i; ++j) {
      if (config.request_rules[j].model == model) return Status::InvalidArgument(path + ": " + model + " is listed twice");
    }
  }
  return Status::OK();
}

}  // namespace kimi::config
