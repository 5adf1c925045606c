#include "config/router_config.h"

#include <set>

namespace kimi::router {
namespace {

constexpr int64_t kHourMs = 3'600'000;

std::string CheckUrl(const std::string& url) {
  const std::string scheme = "http://";
  if (url.empty()) return "";  // required for upstreams: CheckRouterConfig says so with the name
  if (url.rfind(scheme, 0) != 0) return "\"" + url + "\" must start with http:// (this build has no TLS client)";
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.empty() || rest.find('/') != std::string::npos) return "\"" + url + "\" must be http://host:port, no path";
  return "";
}

config::ObjectSchema<BackendConfig> BackendSchema() {
  return config::ObjectSchema<BackendConfig>()
      .String("name", &BackendConfig::name, "Name in metrics, logs and audit records (upstreams appear as upstream:NAME).")
      .OneOf("kind", &BackendConfig::kind, {"embedded", "upstream"},
             "embedded: the engine in this process; upstream: a kimi-engine serve worker or a vLLM server.")
      .String("url", &BackendConfig::url, "Upstream only: http://host:port of its OpenAI-compatible server.", CheckUrl)
      .StringList("models", &BackendConfig::models,
                  "Upstream only: model ids clients may ask it for; empty: the ids its GET /v1/models lists.")
      .String("upstream_model", &BackendConfig::upstream_model,
              "Upstream only: the model name it serves them under (vLLM --served-model-name); empty: the same.")
      .Integer("connect_timeout_ms", &BackendConfig::connect_timeout_ms, 1, 600'000,
               "Upstream only: how long a connection may take before the request goes elsewhere.")
      .Integer("timeout_ms", &BackendConfig::timeout_ms, 1, kHourMs,
               "Upstream only: longest wait for the first byte, then for each event (keep-alive comments do not count).")
      .Integer("request_timeout_ms", &BackendConfig::request_timeout_ms, 0, 24 * kHourMs,
               "Longest a whole request may run on this backend; 0 for no bound.")
      .Integer("health_interval_ms", &BackendConfig::health_interval_ms, 100, kHourMs,
               "Upstream only: how often GET /health and GET /v1/models are asked.")
      .Integer("keep_alive_ms", &BackendConfig::keep_alive_ms, 0, kHourMs,
               "Upstream only: how long an idle connection is kept for the next request; keep it under the "
               "server's own keep-alive timeout (5 s for vLLM's uvicorn and kimi-engine serve); 0: no reuse.")
      .Boolean("send_priority", &BackendConfig::send_priority,
               "Upstream only: send each request's workload-class priority as vLLM's `priority` field "
               "(for a server started with --scheduling-policy priority; docs/policies.md).")
      .Boolean("send_cache_salt", &BackendConfig::send_cache_salt,
               "Upstream only: send each request's caller (its API key or console user, hashed) as vLLM's "
               "`cache_salt`, so that the server's prefix cache is shared only by one caller's requests "
               "(kimi-engine serve and vLLM's V1 engine read it).");
}

}  // namespace

config::ObjectSchema<RouterConfig> RouterConfigSchema() {
  return config::ObjectSchema<RouterConfig>()
      .ObjectList("backends", &RouterConfig::backends, BackendSchema(),
                  "Backends requests are routed to; empty: the embedded engine alone.")
      .Integer("max_attempts", &RouterConfig::max_attempts, 1, 16,
               "Backends one request may try; a retry happens only before the first byte was streamed.")
      .Integer("breaker_failures", &RouterConfig::breaker_failures, 1, 1000,
               "Consecutive failures of a backend that open its circuit breaker.")
      .Integer("breaker_cooldown_ms", &RouterConfig::breaker_cooldown_ms, 1, kHourMs,
               "How long an open breaker keeps requests away before one probe request is let through.")
      .Integer("default_max_tokens", &RouterConfig::default_max_tokens, 1, 1 << 22,
               "max_tokens assumed, for load balancing, of a request that names none.");
}

Status CheckRouterConfig(const RouterConfig& config) {
  std::set<std::string> names;
  int embedded = 0;
  for (size_t i = 0; i < config.backends.size(); ++i) {
    const BackendConfig& b = config.backends[i];
    std::string path = "$.router.backends[" + std::to_string(i) + "]";
    if (b.name.empty()) return Status::InvalidArgument(path + ".name: required");
    for (char c : b.name) {
      bool fine = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-';
      if (!fine) return Status::InvalidArgument(path + ".name: \"" + b.name + "\" may use only A-Z a-z 0-9 . _ -");
    }
    if (!names.insert(b.name).second) {
      return Status::InvalidArgument(path + ".name: \"" + b.name + "\" names two backends");
    }
    if (b.kind == "embedded") {
      if (++embedded > 1) return Status::InvalidArgument(path + ": only one embedded backend can exist");
      if (!b.url.empty() || !b.models.empty() || !b.upstream_model.empty()) {
        return Status::InvalidArgument(path + ": an embedded backend takes no url, models or upstream_model "
                                              "(it serves the model it loaded)");
      }
    } else if (b.url.empty()) {
      return Status::InvalidArgument(path + ".url: required for an upstream backend");
    }
  }
  return Status::OK();
}

}  // namespace kimi::router
