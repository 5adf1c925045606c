// Handlers of the daemon's own endpoints: liveness, readiness and metrics.
//
//   GET /healthz  200 {"status":"ok"} while the process can answer at all.
//   GET /readyz   200 when every declared component is ready, else 503; the body lists each
//                 component with its state, and with its reason only for a caller that
//                 presents a credential holding readiness.detail (admin, operator, auditor).
//   GET /metrics  the metrics registry in the Prometheus text format.
//
// Thread safety: each handler may run on many threads at once.
#pragma once

#include "http/routes.h"

namespace kimi::http {

Status HandleHealthz(const Services& services, RequestContext& ctx, const httplib::Request& req,
                     httplib::Response& res);
Status HandleReadyz(const Services& services, RequestContext& ctx, const httplib::Request& req,
                    httplib::Response& res);
Status HandleMetrics(const Services& services, RequestContext& ctx, const httplib::Request& req,
                     httplib::Response& res);

}  // namespace kimi::http
