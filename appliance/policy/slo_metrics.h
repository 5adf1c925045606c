// Service-level attainment on /metrics: for every served request, whether its time to first
// token met the target of its prompt-length tier, and whether each inter-token gap met the
// target of its workload class (policies/schema.json "service_levels"). The console's
// overview reads exactly these series (docs/policies.md "Service levels"):
//
//   kimi_slo_ttft_target_seconds{tier="le_<max_prompt_tokens>"}  gauge, the active target
//   kimi_slo_ttft_requests_total{tier}, kimi_slo_ttft_met_total{tier}  counters
//   kimi_slo_itl_target_seconds{class="chat"|"agentic"}  gauge, the active target
//   kimi_slo_itl_gaps_total{class}, kimi_slo_itl_met_total{class}  counters, one per gap
//
// A request is judged against the policy active when it ends. A prompt longer than the
// largest tier counts in no tier. Targets are republished on each record and on each scrape
// (PublishTargets), so a policy change shows on the next scrape.
// Public header of policy/: other folders include it.
// Owns: nothing; its series live in the registry given. Thread safety: every method may be
// called from any thread (the registry's series are atomic).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "metrics/metrics.h"
#include "policy/policy.h"

namespace kimi::policy {

// What the appliance saw of one served request.
struct ServedTiming {
  std::string workload_class;   // "" for the policy's default class
  int64_t prompt_tokens = 0;    // usage.prompt_tokens as the backend reported it
  double ttft_seconds = 0;      // backend call to its first output event
  std::span<const double> gaps_seconds;  // between consecutive tokens (SloMeasuringBackend)
};

// A tier's label: "le_<max_prompt_tokens>".
std::string TtftTierLabel(const TtftTarget& tier);

class SloMetrics {
 public:
  explicit SloMetrics(metrics::Registry* registry);
  SloMetrics(const SloMetrics&) = delete;
  SloMetrics& operator=(const SloMetrics&) = delete;

  // Sets the target gauges of `policy`'s tiers and classes.
  void PublishTargets(const Policy& policy);
  // Counts one served request against `policy`'s targets.
  void Record(const Policy& policy, const ServedTiming& timing);

 private:
  metrics::Family<metrics::Gauge>& ttft_target_;
  metrics::Family<metrics::Counter>& ttft_requests_;
  metrics::Family<metrics::Counter>& ttft_met_;
  metrics::Family<metrics::Gauge>& itl_target_;
  metrics::Family<metrics::Counter>& itl_gaps_;
  metrics::Family<metrics::Counter>& itl_met_;
};

}  // namespace kimi::policy
