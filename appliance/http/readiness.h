// Readiness: which components the daemon needs before it can serve traffic, and why each is
// or is not ready. GET /readyz answers 200 only when every declared component is ready; it
// tells anybody which components are ready, and only an operator why (Body()).
//
// A component is declared once at start-up (not ready, with a reason) and then reports its
// state as it changes: the store marks "database" ready when open and not ready when closed;
// the model loader marks "model". A component that was never declared does not count, so
// every module that gates readiness must Declare() before the server starts.
//
// What the operator needs when something broke: the current state and since when, and the
// component's last failure (what failed, when) — kept after the component recovered, so a
// failure that healed by itself is still visible. Three ways to be not ready: Declare() and
// MarkPending() are a step on the way (starting, loading, shutting down) and are not
// failures; MarkNotReady() is a failure. RecordFailure() notes a failure that leaves the
// component serving (a TLS reload that kept the old certificate).
// When a metrics registry is given, each component's state is also exported as
// kimi_component_ready{component="..."} (1 or 0).
// Public header of http/: other folders include it.
// Thread safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace kimi::http {

struct ComponentFailure {
  std::string reason;  // what failed, as the operator needs it (names the file, the digest)
  int64_t at_unix_ms = 0;
};

struct ComponentState {
  std::string name;
  bool ready = false;
  std::string detail;  // why not ready, or what is ready ("open: /var/lib/.../appliance.db")
  int64_t since_unix_ms = 0;  // when it became ready or not ready
  std::optional<ComponentFailure> last_failure;
};

class Readiness {
 public:
  // `now_ms` (tests): the clock of since/at; default the system clock (UnixMillisNow).
  explicit Readiness(metrics::Registry* registry = nullptr, std::function<int64_t()> now_ms = {});
  Readiness(const Readiness&) = delete;
  Readiness& operator=(const Readiness&) = delete;

  // Declares a component as not ready; declaring it again only updates the reason.
  void Declare(const std::string& name, const std::string& reason);
  // Precondition for both: Declare(name) was called (otherwise the component is declared now).
  void MarkReady(const std::string& name, const std::string& detail);
  // Not ready because something failed: `reason` also becomes the last failure.
  void MarkNotReady(const std::string& name, const std::string& reason);
  // Not ready on the way somewhere (loading, verifying, shutting down): not a failure.
  void MarkPending(const std::string& name, const std::string& reason);
  // A failure that does not change the component's state; the last failure is `reason`.
  void RecordFailure(const std::string& name, const std::string& reason);

  // Every component in declaration order.
  std::vector<ComponentState> Snapshot() const;
  bool AllReady() const;
  // The body of GET /readyz: {"status":"ready"|"not_ready","components":{name:{"ready":bool}}}.
  // With with_detail, each component also carries "detail", "since" (UTC, when it became
  // ready or not ready) and, once anything failed, "last_failure": {"reason", "at"}. The
  // details name files, key fingerprints and failure reasons, so only a caller holding
  // readiness.detail gets them.
  // *all_ready (may be null) is the status the body states, from the same snapshot.
  std::string Body(bool with_detail, bool* all_ready = nullptr) const;

 private:
  enum class Change { kState, kFailedState, kFailureOnly };
  void Set(const std::string& name, bool ready, const std::string& detail, Change change);

  metrics::Family<metrics::Gauge>* gauge_ = nullptr;
  const std::function<int64_t()> now_ms_;
  mutable std::mutex mu_;
  std::vector<ComponentState> components_;  // guarded by mu_
};

}  // namespace kimi::http
