// Readiness: which components the daemon needs before it can serve traffic, and why each is
// or is not ready. GET /readyz answers 200 only when every declared component is ready; it
// tells anybody which components are ready, and only an operator why (Body()).
//
// A component is declared once at start-up (not ready, with a reason) and then reports its
// state as it changes: the store marks "database" ready when open and not ready when closed;
// the model loader will mark "model". A component that was never declared does not count,
// so every module that gates readiness must Declare() before the server starts.
// When a metrics registry is given, each component's state is also exported as
// kimi_component_ready{component="..."} (1 or 0).
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "http/metrics.h"

namespace kimi::http {

struct ComponentState {
  std::string name;
  bool ready = false;
  std::string detail;  // why not ready, or what is ready ("open: /var/lib/.../appliance.db")
};

class Readiness {
 public:
  explicit Readiness(metrics::Registry* registry = nullptr);
  Readiness(const Readiness&) = delete;
  Readiness& operator=(const Readiness&) = delete;

  // Declares a component as not ready; declaring it again only updates the reason.
  void Declare(const std::string& name, const std::string& reason);
  // Precondition for both: Declare(name) was called (otherwise the component is declared now).
  void MarkReady(const std::string& name, const std::string& detail);
  void MarkNotReady(const std::string& name, const std::string& reason);

  // Every component in declaration order.
  std::vector<ComponentState> Snapshot() const;
  bool AllReady() const;
  // The body of GET /readyz: {"status":"ready"|"not_ready","components":{name:{"ready":bool}}},
  // each component also with its "detail" when with_detail is set. The details name files,
  // key fingerprints and failure reasons, so only a caller holding readiness.detail gets them.
  // *all_ready (may be null) is the status the body states, from the same snapshot.
  std::string Body(bool with_detail, bool* all_ready = nullptr) const;

 private:
  void Set(const std::string& name, bool ready, const std::string& detail);

  metrics::Family<metrics::Gauge>* gauge_ = nullptr;
  mutable std::mutex mu_;
  std::vector<ComponentState> components_;  // guarded by mu_
};

}  // namespace kimi::http
