// BuildRouter: the Router the daemon runs, from the `router` configuration section: one
// UpstreamBackend (with its health thread) per upstream entry, the embedded engine backend
// where the configuration places it (or alone, when the list is empty).
// Public header of router/: other folders include it.
// Thread safety: call once at start-up.
#pragma once

#include <memory>

#include "api/backend.h"
#include "config/router_config.h"
#include "kimi/status.h"
#include "metrics/metrics.h"
#include "router/router.h"

namespace kimi::router {

// `embedded` may be null when the configuration names no embedded backend; `metrics` may be
// null. Errors: InvalidArgument from CheckRouterConfig; FailedPrecondition when the
// configuration needs the embedded backend and there is none.
// `on_backend_failure` (may be empty): RouterOptions::on_backend_failure.
Result<std::unique_ptr<Router>> BuildRouter(
    const RouterConfig& config, std::shared_ptr<api::Backend> embedded, metrics::Registry* metrics,
    std::function<void(const std::string& backend, const Status& error, bool breaker_opened)> on_backend_failure = {});

}  // namespace kimi::router
