// The daemon's figures on /metrics that no module owns: the process's start time and build,
// and the engine's counters and latency histograms, read from the runtime when scraped.
//
// Thread safety: the registration functions at start-up; the refresher on any one thread at a
// time (the /metrics handler's before_metrics_render).
#pragma once

#include <functional>

#include "api/embedded_backend.h"
#include "metrics/metrics.h"

namespace kimi::daemon {

// process_start_time_seconds and kimi_build_info.
void RegisterProcessMetrics(metrics::Registry& registry);

// Registers the kimi_engine_* series; the returned function copies the engine's counters into
// them (nothing while no model is loaded). `registry` and `backend` outlive the function.
std::function<void()> EngineMetricsRefresher(metrics::Registry& registry,
                                             const api::EmbeddedBackend& backend);

}  // namespace kimi::daemon
