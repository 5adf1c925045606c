#include "metrics/history_sampler.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

namespace kimi::metrics {
namespace {

// The index of label `name` in a family's label names, or -1.
int LabelIndex(const std::vector<std::string>& names, const char* name) {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : int(it - names.begin());
}

// The value of the series whose label `label` is `value` (summed over the other labels).
double ValueWhere(const Registry& registry, const char* family, const char* label, const char* value) {
  std::vector<std::string> names;
  std::vector<SeriesReading> series = registry.Read(family, &names);
  const int at = LabelIndex(names, label);
  double total = 0;
  for (const SeriesReading& s : series) {
    if (at >= 0 && s.labels[size_t(at)] == value) total += s.value;
  }
  return total;
}

Buckets BucketsOf(const Histogram::Snapshot& s) {
  return Buckets{s.bounds, std::vector<double>(s.cumulative.begin(), s.cumulative.end())};
}

// The sum over every series of a histogram family.
Buckets HistogramOf(const Registry& registry, const char* family) {
  Buckets total;
  for (const SeriesReading& s : registry.Read(family)) {
    if (total.cumulative.empty()) {
      total = BucketsOf(s.histogram);
    } else if (total.cumulative.size() == s.histogram.cumulative.size()) {
      for (size_t i = 0; i < total.cumulative.size(); ++i) total.cumulative[i] += double(s.histogram.cumulative[i]);
    }
  }
  return total;
}

}  // namespace

HistoryReading ReadHistory(const Registry& registry) {
  HistoryReading r;
  std::vector<std::string> names;
  std::vector<SeriesReading> requests = registry.Read(kModelRequestsFamily, &names);
  const int model_at = LabelIndex(names, "model");
  const int code_at = LabelIndex(names, "code");
  for (const SeriesReading& s : requests) {
    if (model_at < 0 || code_at < 0) break;
    ModelReading& m = r.models[s.labels[size_t(model_at)]];
    const bool error = std::atoi(s.labels[size_t(code_at)].c_str()) >= 500;
    m.requests += s.value;
    if (error) m.errors += s.value;
    r.requests += s.value;
    if (error) r.errors += s.value;
  }
  std::vector<SeriesReading> durations = registry.Read(kModelDurationFamily, &names);
  const int duration_model_at = LabelIndex(names, "model");
  for (const SeriesReading& s : durations) {
    if (duration_model_at < 0) break;
    r.models[s.labels[size_t(duration_model_at)]].latency = BucketsOf(s.histogram);
  }
  r.e2e = HistogramOf(registry, kModelDurationFamily);
  r.tokens = ValueWhere(registry, "kimi_engine_tokens", "kind", "generated");
  r.ttft = HistogramOf(registry, "kimi_engine_time_to_first_token_seconds");
  r.itl = HistogramOf(registry, "kimi_engine_inter_token_latency_seconds");
  r.queued = ValueWhere(registry, "kimi_engine_requests", "state", "waiting");
  r.running = ValueWhere(registry, "kimi_engine_requests", "state", "running");
  r.memory_used = ValueWhere(registry, "kimi_engine_memory_bytes", "kind", "used");
  r.memory_budget = ValueWhere(registry, "kimi_engine_memory_bytes", "kind", "budget");
  return r;
}

HistorySampler::HistorySampler(MetricsHistory* history, const Registry* registry, std::function<void()> refresh,
                               std::function<int64_t()> now_ms)
    : history_(history), registry_(registry), refresh_(std::move(refresh)), now_ms_(std::move(now_ms)) {}

HistorySampler::~HistorySampler() { Stop(); }

void HistorySampler::SampleOnce() {
  if (refresh_) refresh_();
  history_->Record(now_ms_(), ReadHistory(*registry_));
}

void HistorySampler::Start() {
  thread_ = std::thread([this] {
    const auto interval = std::chrono::milliseconds(history_->options().interval_ms);
    auto next = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      lock.unlock();
      SampleOnce();
      lock.lock();
      // Fixed steps from the start, so that a slow refresh does not stretch the intervals.
      next += interval;
      wake_.wait_until(lock, next, [this] { return stopping_; });
    }
  });
}

void HistorySampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace kimi::metrics
