#include "http/handlers.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

namespace kimi::http {

Status HandleHealthz(const Services&, RequestContext&, const httplib::Request&, httplib::Response& res) {
  res.status = 200;
  res.set_content(R"({"status":"ok"})", "application/json");
  return Status::OK();
}

Status HandleReadyz(const Services& services, RequestContext&, const httplib::Request&, httplib::Response& res) {
  if (services.readiness == nullptr) return Status::Internal("readiness registry not wired");
  bool all_ready = true;
  nlohmann::ordered_json components = nlohmann::ordered_json::object();
  for (const ComponentState& c : services.readiness->Snapshot()) {
    all_ready = all_ready && c.ready;
    components[c.name] = {{"ready", c.ready}, {"detail", c.detail}};
  }
  nlohmann::ordered_json body;
  body["status"] = all_ready ? "ready" : "not_ready";
  body["components"] = std::move(components);
  res.status = all_ready ? 200 : 503;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
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
