// SloMeasuringBackend: a Backend that wraps the daemon's backend (the router, whatever it
// chooses) and times every request as the appliance sees it: from the Generate() call to the
// first output event (TTFT) and between consecutive output events, the moment each event is
// emitted by the backend, before any response encoding. Inter-token gaps are per token where
// the backend counts tokens (StreamEvent::tokens, as the embedded engine does): the interval
// between two output events is that many gaps of an equal share (tokens that released no
// output, such as held-back bytes or markup, count on the next output event; a second event
// released by the same token adds none). A backend that does not count gives one gap per
// output event. The tokens up to the first output event are its TTFT, not gaps. When the
// request finishes (its kFinish event) the timing goes to SloMetrics with the prompt tokens
// the backend reported, judged against the policy active then. A request that fails or is
// cancelled before its finish is not counted (it was not served).
// Public header of policy/: other folders include it.
// Owns: nothing; the inner backend, policy service and metrics outlive it. Thread safety: as
// Backend; each Generate() keeps its timing on its own stack.
#pragma once

#include <chrono>
#include <functional>

#include "api/backend.h"
#include "policy/policy_service.h"
#include "policy/slo_metrics.h"

namespace kimi::policy {

class SloMeasuringBackend : public api::Backend {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // `clock`: null for std::chrono::steady_clock::now (tests pass their own).
  SloMeasuringBackend(api::Backend* inner, const PolicyService* policies, SloMetrics* metrics, Clock clock = nullptr);

  std::string_view name() const override { return inner_->name(); }
  std::vector<std::string> Models() const override { return inner_->Models(); }
  bool Healthy(std::string_view model) const override { return inner_->Healthy(model); }
  std::string UnavailableReason(std::string_view model) const override { return inner_->UnavailableReason(model); }
  Status Generate(const api::BackendRequest& request, api::EventSink& sink, api::BackendOutcome* outcome) override;

 private:
  api::Backend* inner_;
  const PolicyService* policies_;
  SloMetrics* metrics_;
  Clock clock_;
};

}  // namespace kimi::policy
