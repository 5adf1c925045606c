#include "http/handlers.h"

#include <httplib.h>

#include "http/request_auth.h"

namespace kimi::http {

Status HandleHealthz(const Services&, RequestContext&, const httplib::Request&, httplib::Response& res) {
  res.status = 200;
  res.set_content(R"({"status":"ok"})", "application/json");
  return Status::OK();
}

Status HandleReadyz(const Services& services, RequestContext& ctx, const httplib::Request& req,
                    httplib::Response& res) {
  if (services.readiness == nullptr) return Status::Internal("readiness registry not wired");
  KIMI_ASSIGN_OR_RETURN(bool with_detail, CallerHolds(services, req, auth::Permission::kReadinessDetail, ctx));
  bool all_ready = false;
  std::string body = services.readiness->Body(with_detail, &all_ready);
  res.status = all_ready ? 200 : 503;
  res.set_content(body, "application/json");
  return Status::OK();
}

Status HandleMetrics(const Services& services, RequestContext&, const httplib::Request&, httplib::Response& res) {
  if (services.metrics == nullptr) return Status::Internal("metrics registry not wired");
  if (services.before_metrics_render) services.before_metrics_render();
  res.status = 200;
  res.set_content(services.metrics->RenderText(), "text/plain; version=0.0.4; charset=utf-8");
  return Status::OK();
}

}  // namespace kimi::http
