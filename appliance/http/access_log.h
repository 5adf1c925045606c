// The end of every request: one structured access-log line and the HTTP metrics.
//
//   kimi_http_requests_total{route,code}             counter
//   kimi_http_request_duration_seconds{route}        histogram (first byte to response written)
//   kimi_http_connections_active                     gauge
//   kimi_http_connections_rejected_total{reason}     counter (overload)
//   kimi_http_connections_closed_total{reason}       counter (read_timeout, header_too_large, ...)
//   kimi_model_requests_total{model,code}            counter (requests for a served model)
//   kimi_model_request_duration_seconds{model}       histogram (the same, first byte to last)
//
// The kimi_model_* series count client work for a model (the generation routes, once the
// model is resolved, so its label takes only served models' names); the dashboards' history
// reads them (metrics/history.h).
// Thread safety: HttpMetrics holds references into a thread-safe registry; RecordRequest
// may be called from any thread.
#pragma once

#include <string_view>

#include "http/request_context.h"
#include "metrics/history.h"
#include "metrics/metrics.h"

namespace kimi::http {

struct HttpMetrics {
  explicit HttpMetrics(metrics::Registry& registry);
  metrics::Family<metrics::Counter>& requests;
  metrics::Family<metrics::Histogram>& duration;
  metrics::Gauge& connections_active;
  metrics::Family<metrics::Counter>& connections_rejected;
  metrics::Family<metrics::Counter>& connections_closed;
  metrics::Family<metrics::Counter>& model_requests;
  metrics::Family<metrics::Histogram>& model_duration;
};

// Writes the access-log line and updates the request metrics. `path` and the client's
// X-Request-Id are logged as audited text is stored (audit/audit_text.h: escaped, at most
// 256 bytes); the route name, not the path, labels the metrics.
void RecordRequest(HttpMetrics& metrics, const RequestContext& ctx, std::string_view method, std::string_view path,
                   int status);

}  // namespace kimi::http
