#include "http/access_log.h"

#include <chrono>
#include <cmath>
#include <string>

#include "audit/audit_text.h"
#include "kimi/log.h"

namespace kimi::http {

HttpMetrics::HttpMetrics(metrics::Registry& registry)
    : requests(registry.AddCounter("kimi_http_requests_total", "HTTP requests answered, by route and status code.",
                                   {"route", "code"})),
      duration(registry.AddHistogram("kimi_http_request_duration_seconds",
                                     "Time from a request's first byte to its response written, by route.", {"route"},
                                     metrics::DefaultLatencyBuckets())),
      connections_active(registry.AddGauge("kimi_http_connections_active", "Connections being served now.")
                             .WithLabels(std::initializer_list<std::string_view>{})),
      connections_rejected(registry.AddCounter("kimi_http_connections_rejected_total",
                                               "Connections refused with 503 because every worker was busy.",
                                               {"reason"})),
      connections_closed(registry.AddCounter("kimi_http_connections_closed_total",
                                             "Connections the server closed because of a limit, by reason.",
                                             {"reason"})),
      model_requests(registry.AddCounter(metrics::kModelRequestsFamily,
                                         "Requests for a served model answered, by model and status code.",
                                         {"model", "code"})),
      model_duration(registry.AddHistogram(metrics::kModelDurationFamily,
                                           "Requests for a served model: first byte to response written, by model.",
                                           {"model"}, metrics::DefaultLatencyBuckets())) {}

void RecordRequest(HttpMetrics& metrics, const RequestContext& ctx, std::string_view method, std::string_view path,
                   int status) {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.start).count();
  metrics.requests.WithLabels({ctx.route, std::to_string(status)}).Increment();
  metrics.duration.WithLabels({ctx.route}).Observe(seconds);
  if (!ctx.audit.model.empty()) {
    metrics.model_requests.WithLabels({ctx.audit.model, std::to_string(status)}).Increment();
    metrics.model_duration.WithLabels({ctx.audit.model}).Observe(seconds);
  }
  // The path arrives percent-decoded: bounded and escaped like audited text, so that neither
  // its length nor a control character in it reaches the log line raw.
  const std::string logged_path = audit::AuditText(path);
  log::Info("request", {{"method", method.empty() ? std::string_view("-") : method},
                        {"path", logged_path},
                        {"status", status},
                        {"duration_ms", std::round(seconds * 1e6) / 1e3},  // microsecond precision
                        {"request_id", ctx.request_id},
                        // The client's own id, as bounded and escaped as in its audit record.
                        {"client_request_id", audit::AuditText(ctx.client_request_id)},
                        {"remote", ctx.remote_addr},
                        {"route", ctx.route}});
}

}  // namespace kimi::http
