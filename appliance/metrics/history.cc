#include "metrics/history.h"

#include <algorithm>
#include <cmath>

namespace kimi::metrics {
namespace {

// now - before for a counter; a counter that went down restarted, so all of `now` is new.
double Grown(double now, double before) { return now >= before ? now - before : now; }

Buckets Grown(const Buckets& now, const Buckets& before) {
  Buckets out{now.bounds, now.cumulative};
  const bool comparable = before.bounds == now.bounds && before.cumulative.size() == now.cumulative.size();
  if (!comparable) return out;
  const bool restarted = !now.cumulative.empty() && now.cumulative.back() < before.cumulative.back();
  if (restarted) return out;
  for (size_t i = 0; i < out.cumulative.size(); ++i) out.cumulative[i] = std::max(0.0, now.cumulative[i] - before.cumulative[i]);
  return out;
}

// Adds the observations of `next` to `into`. Buckets of other bounds cannot be added: the
// histogram was registered anew (another model's engine), so the newer one is kept.
void Add(const Buckets& next, Buckets* into) {
  if (next.cumulative.empty()) return;
  const bool same_shape = into->bounds == next.bounds && into->cumulative.size() == next.cumulative.size();
  if (into->cumulative.empty() || !same_shape) {
    *into = next;
    return;
  }
  for (size_t i = 0; i < next.cumulative.size(); ++i) into->cumulative[i] += next.cumulative[i];
}

Quantiles QuantilesOf(const Buckets& b) { return {QuantileOf(0.5, b), QuantileOf(0.9, b), QuantileOf(0.99, b)}; }

}  // namespace

double QuantileOf(double q, const Buckets& b) {
  if (b.cumulative.empty() || !(b.cumulative.back() > 0)) return kNoValue;
  const double rank = q * b.cumulative.back();
  double prev_le = 0;
  double prev_count = 0;
  for (size_t i = 0; i < b.cumulative.size(); ++i) {
    const double count = b.cumulative[i];
    if (count >= rank) {
      if (i >= b.bounds.size()) return prev_le;  // the +Inf bucket: its lower bound is all we know
      const double le = b.bounds[i];
      const double in_bucket = count - prev_count;
      return in_bucket > 0 ? prev_le + (le - prev_le) * ((rank - prev_count) / in_bucket) : le;
    }
    prev_le = i < b.bounds.size() ? b.bounds[i] : prev_le;
    prev_count = count;
  }
  return prev_le;
}

MetricsHistory::MetricsHistory(HistoryOptions options) : options_(options) {}

MetricsHistory::Interval MetricsHistory::Difference(const HistoryReading& now, const HistoryReading& before,
                                                    double seconds) {
  Interval d;
  d.seconds = seconds;
  d.requests = Grown(now.requests, before.requests);
  d.errors = Grown(now.errors, before.errors);
  d.tokens = Grown(now.tokens, before.tokens);
  d.ttft = Grown(now.ttft, before.ttft);
  d.itl = Grown(now.itl, before.itl);
  d.e2e = Grown(now.e2e, before.e2e);
  d.queued = now.queued;
  d.running = now.running;
  d.memory_used = now.memory_used;
  d.memory_budget = now.memory_budget;
  for (const auto& [model, m] : now.models) {
    auto old = before.models.find(model);
    const ModelReading zero;
    const ModelReading& o = old == before.models.end() ? zero : old->second;
    ModelReading grown{Grown(m.requests, o.requests), Grown(m.errors, o.errors), Grown(m.latency, o.latency)};
    if (grown.requests > 0) d.models.emplace(model, std::move(grown));
  }
  return d;
}

void MetricsHistory::Merge(const Interval& next, Interval* into) {
  into->seconds += next.seconds;
  into->requests += next.requests;
  into->errors += next.errors;
  into->tokens += next.tokens;
  Add(next.ttft, &into->ttft);
  Add(next.itl, &into->itl);
  Add(next.e2e, &into->e2e);
  // A coarse point shows the highest queue and memory of its intervals: the peak is what an
  // operator looks for over a day.
  into->queued = std::max(into->queued, next.queued);
  into->running = std::max(into->running, next.running);
  into->memory_used = std::max(into->memory_used, next.memory_used);
  into->memory_budget = next.memory_budget;
  for (const auto& [model, m] : next.models) {
    ModelReading& to = into->models[model];
    to.requests += m.requests;
    to.errors += m.errors;
    Add(m.latency, &to.latency);
  }
}

HistoryPoint MetricsHistory::PointOf(int64_t end_ms, const Interval& d) const {
  HistoryPoint p;
  p.end_ms = end_ms;
  p.seconds = d.seconds;
  p.requests = d.requests;
  p.errors = d.errors;
  p.tokens = d.tokens;
  p.ttft = QuantilesOf(d.ttft);
  p.itl = QuantilesOf(d.itl);
  p.e2e = QuantilesOf(d.e2e);
  p.queued = d.queued;
  p.running = d.running;
  p.memory_used = d.memory_used;
  p.memory_budget = d.memory_budget;
  for (const auto& [model, m] : d.models) {
    if (p.models.size() >= options_.max_models) break;
    p.models.push_back(ModelPoint{model, m.requests, m.errors, QuantilesOf(m.latency)});
  }
  return p;
}

void MetricsHistory::Record(int64_t now_ms, const HistoryReading& reading) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_baseline_ || now_ms <= last_ms_) {
    // The first reading, or a clock that went back: a new baseline, no point.
    has_baseline_ = true;
    last_ = reading;
    last_ms_ = now_ms;
    return;
  }
  const Interval d = Difference(reading, last_, double(now_ms - last_ms_) / 1000.0);
  last_ = reading;
  last_ms_ = now_ms;
  fine_.push_back(PointOf(now_ms, d));
  while (fine_.size() > options_.fine_points) fine_.pop_front();
  if (pending_count_ == 0) {
    pending_ = d;
  } else {
    Merge(d, &pending_);
  }
  if (++pending_count_ >= options_.coarse_every) {
    coarse_.push_back(PointOf(now_ms, pending_));
    while (coarse_.size() > options_.coarse_points) coarse_.pop_front();
    pending_ = Interval{};
    pending_count_ = 0;
  }
}

int64_t MetricsHistory::ResolutionMs(int64_t range_ms) const {
  const int64_t fine_span = options_.interval_ms * int64_t(options_.fine_points);
  return range_ms <= fine_span ? options_.interval_ms : options_.interval_ms * int64_t(options_.coarse_every);
}

std::vector<HistoryPoint> MetricsHistory::Points(int64_t now_ms, int64_t range_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::deque<HistoryPoint>& ring = ResolutionMs(range_ms) == options_.interval_ms ? fine_ : coarse_;
  std::vector<HistoryPoint> out;
  for (const HistoryPoint& p : ring) {
    if (p.end_ms > now_ms - range_ms && p.end_ms <= now_ms) out.push_back(p);
  }
  return out;
}

}  // namespace kimi::metrics
