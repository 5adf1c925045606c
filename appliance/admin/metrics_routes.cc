#include "admin/metrics_routes.h"

#include <httplib.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "admin/reply.h"
#include "kimi/utc_time.h"
#include "metrics/history.h"

namespace kimi::admin {
namespace {

using http::RequestContext;
using nlohmann::json;

struct Range {
  const char* name;
  int64_t ms;
};
constexpr Range kRanges[] = {{"15m", 15 * 60'000}, {"1h", 3'600'000}, {"6h", 6 * 3'600'000}, {"24h", 24 * 3'600'000}};

// A figure, or null when there is none (no observation in the interval).
json Figure(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json QuantilesJson(const metrics::Quantiles& q) {
  return json{{"p50", Figure(q.p50)}, {"p90", Figure(q.p90)}, {"p99", Figure(q.p99)}};
}

// The share of requests answered 5xx; null without requests.
json ErrorRate(double errors, double requests) { return requests > 0 ? json(errors / requests) : json(nullptr); }

json PointJson(const metrics::HistoryPoint& p, const std::string& model) {
  const double s = p.seconds > 0 ? p.seconds : 1;
  json models = json::array();
  for (const metrics::ModelPoint& m : p.models) {
    if (!model.empty() && m.model != model) continue;
    models.push_back({{"model", m.model},
                      {"requests", m.requests},
                      {"requests_per_s", m.requests / s},
                      {"error_rate", ErrorRate(m.errors, m.requests)},
                      {"latency_s", QuantilesJson(m.latency)}});
  }
  return json{{"time", FormatUtcMillis(p.end_ms)},
              {"time_ms", p.end_ms},
              {"seconds", p.seconds},
              {"requests", p.requests},
              {"requests_per_s", p.requests / s},
              {"tokens_per_s", p.tokens / s},
              {"error_rate", ErrorRate(p.errors, p.requests)},
              {"ttft_s", QuantilesJson(p.ttft)},
              {"itl_s", QuantilesJson(p.itl)},
              {"e2e_s", QuantilesJson(p.e2e)},
              {"queued", p.queued},
              {"running", p.running},
              {"memory_used_bytes", p.memory_used},
              {"memory_budget_bytes", p.memory_budget},
              {"models", std::move(models)}};
}

Status HandleMetricsHistory(const MetricsHistoryServices& services, RequestContext& ctx, const httplib::Request& req,
                            httplib::Response& res) {
  if (services.history == nullptr) return Status::Unavailable("the metrics history is not kept by this daemon");
  const std::string asked = req.has_param("range") ? req.get_param_value("range") : "1h";
  const Range* range = nullptr;
  for (const Range& r : kRanges) {
    if (asked == r.name) range = &r;
  }
  if (range == nullptr) {
    ctx.error_param = "range";
    return Status::InvalidArgument("range must be one of 15m, 1h, 6h, 24h");
  }
  const std::string model = req.has_param("model") ? req.get_param_value("model") : "";
  const int64_t now = services.now_ms ? services.now_ms() : UnixMillisNow();
  json points = json::array();
  for (const metrics::HistoryPoint& p : services.history->Points(now, range->ms)) points.push_back(PointJson(p, model));
  ReplyJson(res, 200,
            json{{"range", range->name},
                 {"range_s", range->ms / 1000},
                 {"resolution_s", services.history->ResolutionMs(range->ms) / 1000},
                 {"now", FormatUtcMillis(now)},
                 {"now_ms", now},
                 {"model", model},
                 {"points", std::move(points)}});
  return Status::OK();
}

}  // namespace

void AddMetricsRoutes(http::RouteTable& table, MetricsHistoryServices services) {
  using P = auth::Permission;
  // A status read (routes.h): the overview polls it with the console's session.
  table.Add({"GET", "/admin/v1/metrics/history", "admin_metrics_history",
             http::BindRoute(std::move(services), &HandleMetricsHistory), false, P::kMetricsRead,
             /*body_has_password=*/false, /*status_read=*/true});
}

}  // namespace kimi::admin
