#include "policy/slo_backend.h"

#include <vector>

namespace kimi::policy {
namespace {

using TimePoint = std::chrono::steady_clock::time_point;

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

bool IsOutput(api::StreamEventKind kind) {
  return kind == api::StreamEventKind::kReasoning || kind == api::StreamEventKind::kAnswer ||
         kind == api::StreamEventKind::kToolCallArguments;
}

// Notes when each output event passes, then hands it on.
class TimingSink : public api::EventSink {
 public:
  TimingSink(api::EventSink& next, const SloMeasuringBackend::Clock& clock, TimePoint start)
      : next_(next), clock_(clock), start_(start) {}

  bool Emit(const api::StreamEvent& event) override {
    if (event.tokens >= 0) {
      counts_tokens_ = true;
      unmeasured_tokens_ += event.tokens;
    }
    if (IsOutput(event.kind)) {
      const TimePoint now = clock_();
      if (!first_) {
        first_ = true;
        ttft_seconds_ = Seconds(now - start_);
        last_ = now;
      } else if (!counts_tokens_) {
        gaps_.push_back(Seconds(now - last_));
        last_ = now;
      } else if (unmeasured_tokens_ > 0) {
        // The tokens since the previous output event arrived somewhere in this interval: each
        // is one inter-token gap, of an equal share of it.
        const double share = Seconds(now - last_) / double(unmeasured_tokens_);
        gaps_.insert(gaps_.end(), size_t(unmeasured_tokens_), share);
        last_ = now;
      }
      unmeasured_tokens_ = 0;
    } else if (event.kind == api::StreamEventKind::kFinish) {
      finished_ = true;
      prompt_tokens_ = event.usage.prompt_tokens;
      if (!first_) ttft_seconds_ = Seconds(clock_() - start_);  // nothing but the finish came
    }
    return next_.Emit(event);
  }
  void SetCanceller(std::function<void()> cancel) override { next_.SetCanceller(std::move(cancel)); }

  bool finished() const { return finished_; }
  ServedTiming Timing(std::string workload_class) const {
    return ServedTiming{std::move(workload_class), prompt_tokens_, ttft_seconds_, gaps_};
  }

 private:
  api::EventSink& next_;
  const SloMeasuringBackend::Clock& clock_;
  const TimePoint start_;
  bool first_ = false;
  bool finished_ = false;
  bool counts_tokens_ = false;     // the backend says how many tokens each event accounts for
  int64_t unmeasured_tokens_ = 0;  // tokens since the last output event
  TimePoint last_;
  double ttft_seconds_ = 0;
  int64_t prompt_tokens_ = 0;
  std::vector<double> gaps_;
};

}  // namespace

SloMeasuringBackend::SloMeasuringBackend(api::Backend* inner, const PolicyService* policies, SloMetrics* metrics,
                                         Clock clock)
    : inner_(inner), policies_(policies), metrics_(metrics), clock_(clock ? std::move(clock) : [] {
        return std::chrono::steady_clock::now();
      }) {}

Status SloMeasuringBackend::Generate(const api::BackendRequest& request, api::EventSink& sink,
                                     api::BackendOutcome* outcome) {
  TimingSink timing(sink, clock_, clock_());
  Status generated = inner_->Generate(request, timing, outcome);
  if (generated.ok() && timing.finished()) {
    if (std::shared_ptr<const ActivePolicy> active = policies_->Active()) {
      metrics_->Record(active->policy, timing.Timing(request.workload_class));
    }
  }
  return generated;
}

}  // namespace kimi::policy
