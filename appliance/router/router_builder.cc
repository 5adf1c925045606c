#include "router/router_builder.h"

#include "upstream/upstream_backend.h"

namespace kimi::router {

Result<std::unique_ptr<Router>> BuildRouter(
    const RouterConfig& config, std::shared_ptr<api::Backend> embedded, metrics::Registry* metrics,
    std::function<void(const std::string& backend, const Status& error, bool breaker_opened)> on_backend_failure) {
  KIMI_RETURN_IF_ERROR(CheckRouterConfig(config));
  std::vector<RoutedBackend> routed;
  auto need_embedded = [&]() -> Status {
    if (embedded == nullptr) {
      return Status::FailedPrecondition("router: the configuration routes to the embedded engine, which is not loaded");
    }
    return Status::OK();
  };
  if (config.backends.empty()) {
    KIMI_RETURN_IF_ERROR(need_embedded());
    routed.push_back(RoutedBackend{embedded, 0});
  }
  for (const BackendConfig& b : config.backends) {
    if (b.kind == "embedded") {
      KIMI_RETURN_IF_ERROR(need_embedded());
      routed.push_back(RoutedBackend{embedded, b.request_timeout_ms});
      continue;
    }
    upstream::UpstreamOptions o;
    o.name = "upstream:" + b.name;
    o.url = b.url;
    o.models = b.models;
    o.upstream_model = b.upstream_model;
    o.connect_timeout_ms = b.connect_timeout_ms;
    o.timeout_ms = b.timeout_ms;
    o.health_interval_ms = b.health_interval_ms;
    o.keep_alive_ms = b.keep_alive_ms;
    o.send_priority = b.send_priority;
    o.send_cache_salt = b.send_cache_salt;
    o.request_timeout_ms = b.request_timeout_ms;
    routed.push_back(RoutedBackend{std::make_shared<upstream::UpstreamBackend>(std::move(o)), b.request_timeout_ms});
  }
  RouterOptions options;
  options.max_attempts = static_cast<int>(config.max_attempts);
  options.breaker_failure_threshold = static_cast<int>(config.breaker_failures);
  options.breaker_cooldown_ms = config.breaker_cooldown_ms;
  options.default_max_tokens = config.default_max_tokens;
  options.on_backend_failure = std::move(on_backend_failure);
  return std::make_unique<Router>(std::move(routed), std::move(options), metrics);
}

}  // namespace kimi::router
