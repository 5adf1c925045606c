// The `router` section of the daemon's configuration: which backends serve requests and how
// the router treats them. It is one schema piece (config/schema.h) that the root schema
// includes with one .Object("router", ...) line; docs/operations.md documents every key.
//
//   "router": {
//     "backends": [
//       {"name": "local", "kind": "embedded"},
//       {"name": "vllm-a", "kind": "upstream", "url": "http://10.0.0.5:8000", "models": ["kimi-k3"],
//        "timeout_ms": 60000, "request_timeout_ms": 0}
//     ],
//     "max_attempts": 2, "breaker_failures": 3, "breaker_cooldown_ms": 10000
//   }
//
// An empty backend list means the embedded engine alone. CheckRouterConfig() holds the
// rules that involve several keys. Plain data in config/, so that the configuration depends
// on nothing above it; router/ (namespace router, as here) builds the router from it.
// Public header of config/: other folders include it.
// Thread safety: values; the schema is immutable and shared.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/schema.h"
#include "kimi/status.h"

namespace kimi::router {

struct BackendConfig {
  std::string name;
  std::string kind = "upstream";  // "embedded" | "upstream"
  std::string url;                // upstream: "http://host:port"
  std::vector<std::string> models;  // upstream: model ids it serves; empty: what its /v1/models lists
  std::string upstream_model;     // upstream: the name it serves them under, "" for the same
  int64_t connect_timeout_ms = 2'000;
  int64_t timeout_ms = 60'000;    // upstream: longest wait for the first byte, then for each event
  int64_t request_timeout_ms = 0; // any kind: whole-request bound, 0 for none
  int64_t health_interval_ms = 5'000;
  int64_t keep_alive_ms = 4'000;  // upstream: how long an idle connection is kept for reuse
  bool send_priority = false;     // upstream: send the request's priority as vLLM's `priority`
  bool send_cache_salt = false;   // upstream: send the request's caller, hashed, as vLLM's `cache_salt`
};

struct RouterConfig {
  std::vector<BackendConfig> backends;
  int64_t max_attempts = 2;
  int64_t breaker_failures = 3;
  int64_t breaker_cooldown_ms = 10'000;
  int64_t default_max_tokens = 4'096;
};

config::ObjectSchema<RouterConfig> RouterConfigSchema();

// Names present, unique and made of [A-Za-z0-9._-]; at most one embedded backend, which takes
// no url or models; every upstream has an http://host:port url.
Status CheckRouterConfig(const RouterConfig& config);

}  // namespace kimi::router
