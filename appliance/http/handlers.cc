#include "http/handlers.h"

#include <httplib.h>

namespace kimi::http {

Status HandleHealthz(RequestContext&, const httplib::Request&, httplib::Response& res) {
  res.status = 200;
  res.set_content(R"({"status":"ok"})", "application/json");
  return Status::OK();
}

Status HandleReadyz(const ReadinessServices& services, RequestContext& ctx, const httplib::Request& req,
                    httplib::Response& res) {
  if (services.readiness == nullptr) return Status::Internal("readiness registry not wired");
  KIMI_ASSIGN_OR_RETURN(bool with_detail,
                        CallerHolds(services.authentication, req, auth::Permission::kReadinessDetail, ctx));
  bool all_ready = false;
  std::string body = services.readiness->Body(with_detail, &all_ready);
  res.status = all_ready ? 200 : 503;
  res.set_content(body, "application/json");
  return Status::OK();
}

Status HandleMetrics(const MetricsServices& services, RequestContext&, const httplib::Request&,
                     httplib::Response& res) {
  if (services.registry == nullptr) return Status::Internal("metrics registry not wired");
  if (services.before_render) services.before_render();
  res.status = 200;
  res.set_content(services.registry->RenderText(), "text/plain; version=0.0.4; charset=utf-8");
  return Status::OK();
}

void AddProbeRoutes(RouteTable& table, ReadinessServices readiness, MetricsServices metrics) {
  using P = auth::Permission;
  table.Add({"GET", "/healthz", "healthz", &HandleHealthz, /*probe=*/true, P::kPublic});
  table.Add({"GET", "/readyz", "readyz", BindRoute(std::move(readiness), &HandleReadyz), /*probe=*/true, P::kPublic});
  table.Add({"GET", "/metrics", "metrics", BindRoute(std::move(metrics), &HandleMetrics), /*probe=*/true,
             P::kMetricsRead});
}

}  // namespace kimi::http
