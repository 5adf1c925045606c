#include "http/readiness.h"

#include <nlohmann/json.hpp>

namespace kimi::http {

Readiness::Readiness(metrics::Registry* registry) {
  if (registry != nullptr) {
    gauge_ = &registry->AddGauge("kimi_component_ready", "1 when the component is ready to serve, else 0.",
                                 {"component"});
  }
}

void Readiness::Declare(const std::string& name, const std::string& reason) { Set(name, false, reason); }
void Readiness::MarkReady(const std::string& name, const std::string& detail) { Set(name, true, detail); }
void Readiness::MarkNotReady(const std::string& name, const std::string& reason) { Set(name, false, reason); }

void Readiness::Set(const std::string& name, bool ready, const std::string& detail) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool found = false;
    for (ComponentState& c : components_) {
      if (c.name == name) {
        c.ready = ready;
        c.detail = detail;
        found = true;
      }
    }
    if (!found) components_.push_back(ComponentState{name, ready, detail});
  }
  if (gauge_ != nullptr) gauge_->WithLabels({name}).Set(ready ? 1 : 0);
}

std::vector<ComponentState> Readiness::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return components_;
}

bool Readiness::AllReady() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const ComponentState& c : components_) {
    if (!c.ready) return false;
  }
  return true;
}

std::string Readiness::Body(bool with_detail, bool* all_ready_out) const {
  bool all_ready = true;
  nlohmann::ordered_json components = nlohmann::ordered_json::object();
  for (const ComponentState& c : Snapshot()) {
    all_ready = all_ready && c.ready;
    components[c.name] = {{"ready", c.ready}};
    if (with_detail) components[c.name]["detail"] = c.detail;
  }
  nlohmann::ordered_json body;
  body["status"] = all_ready ? "ready" : "not_ready";
  body["components"] = std::move(components);
  if (all_ready_out != nullptr) *all_ready_out = all_ready;
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kimi::http
