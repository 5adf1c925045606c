#include "http/readiness.h"

#include <nlohmann/json.hpp>

#include "kimi/utc_time.h"

namespace kimi::http {

Readiness::Readiness(metrics::Registry* registry, std::function<int64_t()> now_ms)
    : now_ms_(now_ms ? std::move(now_ms) : std::function<int64_t()>(UnixMillisNow)) {
  if (registry != nullptr) {
    gauge_ = &registry->AddGauge("kimi_component_ready", "1 when the component is ready to serve, else 0.",
                                 {"component"});
  }
}

void Readiness::Declare(const std::string& name, const std::string& reason) { Set(name, false, reason, Change::kState); }
void Readiness::MarkReady(const std::string& name, const std::string& detail) { Set(name, true, detail, Change::kState); }
void Readiness::MarkNotReady(const std::string& name, const std::string& reason) {
  Set(name, false, reason, Change::kFailedState);
}
void Readiness::MarkPending(const std::string& name, const std::string& reason) { Set(name, false, reason, Change::kState); }
void Readiness::RecordFailure(const std::string& name, const std::string& reason) {
  Set(name, false, reason, Change::kFailureOnly);
}

void Readiness::Set(const std::string& name, bool ready, const std::string& detail, Change change) {
  const int64_t now = now_ms_();
  bool ready_now = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ComponentState* c = nullptr;
    for (ComponentState& each : components_) {
      if (each.name == name) c = &each;
    }
    if (c == nullptr) {
      // A failure recorded before any state: the component is not ready until it says so.
      components_.push_back(ComponentState{name, false, change == Change::kFailureOnly ? "" : detail, now, {}});
      c = &components_.back();
    }
    if (change != Change::kState) c->last_failure = ComponentFailure{detail, now};
    if (change != Change::kFailureOnly) {
      if (c->ready != ready) c->since_unix_ms = now;
      c->ready = ready;
      c->detail = detail;
    }
    ready_now = c->ready;
  }
  if (gauge_ != nullptr) gauge_->WithLabels({name}).Set(ready_now ? 1 : 0);
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
    nlohmann::ordered_json& out = components[c.name];
    out["ready"] = c.ready;
    if (!with_detail) continue;
    out["detail"] = c.detail;
    out["since"] = FormatUtcMillis(c.since_unix_ms);
    if (c.last_failure) {
      out["last_failure"] = {{"reason", c.last_failure->reason}, {"at", FormatUtcMillis(c.last_failure->at_unix_ms)}};
    }
  }
  nlohmann::ordered_json body;
  body["status"] = all_ready ? "ready" : "not_ready";
  body["components"] = std::move(components);
  if (all_ready_out != nullptr) *all_ready_out = all_ready;
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kimi::http
