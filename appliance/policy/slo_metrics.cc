#include "policy/slo_metrics.h"

namespace kimi::policy {
namespace {

constexpr const char* kClasses[] = {"chat", "agentic"};

double Seconds(int64_t ms) { return double(ms) / 1000.0; }

}  // namespace

std::string TtftTierLabel(const TtftTarget& tier) { return "le_" + std::to_string(tier.max_prompt_tokens); }

SloMetrics::SloMetrics(metrics::Registry* registry)
    : ttft_target_(registry->AddGauge("kimi_slo_ttft_target_seconds",
                                      "Time-to-first-token target of the active policy, by prompt-length tier.", {"tier"})),
      ttft_requests_(registry->AddCounter("kimi_slo_ttft_requests_total",
                                          "Served requests judged against their tier's time-to-first-token target.",
                                          {"tier"})),
      ttft_met_(registry->AddCounter("kimi_slo_ttft_met_total",
                                     "Served requests whose time to first token met their tier's target.", {"tier"})),
      itl_target_(registry->AddGauge("kimi_slo_itl_target_seconds",
                                     "Inter-token latency target of the active policy, by workload class.", {"class"})),
      itl_gaps_(registry->AddCounter("kimi_slo_itl_gaps_total",
                                     "Inter-token gaps of served requests, by workload class.", {"class"})),
      itl_met_(registry->AddCounter("kimi_slo_itl_met_total",
                                    "Inter-token gaps that met their workload class's target.", {"class"})) {}

void SloMetrics::PublishTargets(const Policy& policy) {
  for (const TtftTarget& tier : policy.service_levels.ttft_targets) {
    const std::string label = TtftTierLabel(tier);
    ttft_target_.WithLabels({label}).Set(Seconds(tier.target_ms));
    // Present from the start (at zero), so the console can show a tier before its first request.
    ttft_requests_.WithLabels({label});
    ttft_met_.WithLabels({label});
  }
  for (const char* name : kClasses) {
    itl_target_.WithLabels({name}).Set(Seconds(policy.ItlTargetMs(name)));
    itl_gaps_.WithLabels({name});
    itl_met_.WithLabels({name});
  }
}

void SloMetrics::Record(const Policy& policy, const ServedTiming& timing) {
  PublishTargets(policy);
  if (const TtftTarget* tier = policy.TtftTier(timing.prompt_tokens)) {
    const std::string label = TtftTierLabel(*tier);
    ttft_requests_.WithLabels({label}).Increment();
    if (timing.ttft_seconds <= Seconds(tier->target_ms)) ttft_met_.WithLabels({label}).Increment();
  }
  const std::string& name = timing.workload_class.empty() ? policy.service_levels.default_class : timing.workload_class;
  const double target = Seconds(policy.ItlTargetMs(name));
  int64_t met = 0;
  for (double gap : timing.gaps_seconds) met += gap <= target ? 1 : 0;
  if (!timing.gaps_seconds.empty()) {
    itl_gaps_.WithLabels({name}).Increment(double(timing.gaps_seconds.size()));
    itl_met_.WithLabels({name}).Increment(double(met));
  }
}

}  // namespace kimi::policy
