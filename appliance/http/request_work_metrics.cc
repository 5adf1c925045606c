#include "http/request_work_metrics.h"

#include "api/request_gate.h"
#include "kimi/prompt_work.h"

namespace kimi::http {

std::function<void()> RequestWorkMetricsRefresher(metrics::Registry& registry) {
  metrics::Counter& parses =
      registry.AddCounter("kimi_request_parses_total", "API request bodies parsed and validated (one per request).")
          .WithLabels({});
  metrics::Counter& renders =
      registry.AddCounter("kimi_prompt_renders_total", "Prompts rendered in the K3 chat format.").WithLabels({});
  metrics::Counter& tokenizations =
      registry.AddCounter("kimi_prompt_tokenizations_total", "Request prompts tokenised for the engine.").WithLabels({});
  return [&parses, &renders, &tokenizations] {
    parses.RaiseTo(static_cast<double>(api::RequestParses()));
    const PromptWorkCounts work = PromptWork();
    renders.RaiseTo(static_cast<double>(work.renders));
    tokenizations.RaiseTo(static_cast<double>(work.tokenizations));
  };
}

}  // namespace kimi::http
