// Handlers of the daemon's own endpoints: liveness, readiness and metrics.
//
//   GET /healthz  200 {"status":"ok"} while the process can answer at all.
//   GET /readyz   200 when every declared component is ready, else 503; the body lists each
//                 component with its state, and with its reason only for a caller that
//                 presents a credential holding readiness.detail (admin, operator, auditor).
//   GET /metrics  the metrics registry in the Prometheus text format.
// Public header of http/: other folders include it.
// Thread safety: each handler may run on many threads at once; the services are thread-safe.
#pragma once

#include <functional>

#include "http/readiness.h"
#include "http/request_auth.h"
#include "http/routes.h"
#include "metrics/metrics.h"

namespace kimi::http {

// What GET /readyz uses; owned by the daemon, outliving the table.
struct ReadinessServices {
  const Readiness* readiness = nullptr;  // null: 500
  RequestAuthentication authentication;  // who may see the reasons
};

// What GET /metrics uses; owned by the daemon, outliving the table.
struct MetricsServices {
  const metrics::Registry* registry = nullptr;  // null: 500
  // Called before the registry renders, to refresh gauges that mirror other components.
  std::function<void()> before_render;
};

Status HandleHealthz(RequestContext& ctx, const httplib::Request& req, httplib::Response& res);
Status HandleReadyz(const ReadinessServices& services, RequestContext& ctx, const httplib::Request& req,
                    httplib::Response& res);
Status HandleMetrics(const MetricsServices& services, RequestContext& ctx, const httplib::Request& req,
                     httplib::Response& res);

// The three probes, bound to their services.
void AddProbeRoutes(RouteTable& table, ReadinessServices readiness, MetricsServices metrics);

}  // namespace kimi::http
