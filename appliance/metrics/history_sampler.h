// HistorySampler: the thread that feeds MetricsHistory (history.h). Every interval it brings
// the registry's scraped figures up to date (the same refresh GET /metrics runs), reads the
// families the dashboards draw into a HistoryReading (ReadHistory) and records it. Owned by
// the daemon: started when the server starts, stopped before the parts it reads close.
// Public header of metrics/: other folders include it.
// Thread safety: Start() and Stop() from one thread (the daemon's); the sampling thread
// touches only the registry, the refresh function and the history, all thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "metrics/history.h"
#include "metrics/metrics.h"

namespace kimi::metrics {

// The dashboards' figures in `registry` now: kimi_model_* (requests, 5xx, latency per model),
// kimi_engine_tokens{kind="generated"}, the engine's time-to-first-token and inter-token
// histograms, kimi_engine_requests and kimi_engine_memory_bytes. Absent families read as zero.
HistoryReading ReadHistory(const Registry& registry);

class HistorySampler {
 public:
  // `refresh` (may be empty) runs before each reading; `now_ms` gives Unix milliseconds. All
  // three outlive the sampler.
  HistorySampler(MetricsHistory* history, const Registry* registry, std::function<void()> refresh,
                 std::function<int64_t()> now_ms);
  ~HistorySampler();  // stops
  HistorySampler(const HistorySampler&) = delete;
  HistorySampler& operator=(const HistorySampler&) = delete;

  // Takes the first reading now, then one every history->options().interval_ms.
  void Start();
  // Wakes the thread and joins it; returns at once if it never started.
  void Stop();
  // One reading recorded now (what the thread does each interval).
  void SampleOnce();

 private:
  MetricsHistory* const history_;
  const Registry* const registry_;
  const std::function<void()> refresh_;
  const std::function<int64_t()> now_ms_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace kimi::metrics
