// The request path's work counts on /metrics: request bodies parsed by the API layer
// (kimi_request_parses_total), prompts rendered in the chat format (kimi_prompt_renders_total)
// and request prompts tokenised (kimi_prompt_tokenizations_total). Each is counted where the
// work is done (api/request_gate.h, kimi/prompt_work.h) and copied when /metrics is scraped,
// so that one parse, one render and one tokenisation per request can be checked from outside.
// Public header of http/: other folders include it.
// Owns nothing but the series it registers. Thread safety: the refresher returned may be
// called from any thread, one call at a time (the /metrics handler's before-render hook).
#pragma once

#include <functional>

#include "metrics/metrics.h"

namespace kimi::http {

// Registers the three counters in `registry` (which must outlive the function returned) and
// returns the function that brings them up to the process's counts.
std::function<void()> RequestWorkMetricsRefresher(metrics::Registry& registry);

}  // namespace kimi::http
