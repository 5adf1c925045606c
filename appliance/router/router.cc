#include "router/router.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "api/prompt_estimate.h"
#include "kimi/log.h"

namespace kimi::router {
namespace {

// What a finished attempt says about its backend, and the `outcome` label it is counted under.
enum class Verdict {
  kOk,           // answered
  kClientError,  // answered with a refusal of the request: the backend is fine
  kOverloaded,   // refused for load: try another, but the backend is not broken
  kCancelled,    // the client went away: says nothing about the backend
  kTimeout,      // the backend's failure
  kFailed,       // the backend's failure
};

std::string_view VerdictLabel(Verdict v) {
  switch (v) {
    case Verdict::kOk: return "ok";
    case Verdict::kClientError: return "client_error";
    case Verdict::kOverloaded: return "overloaded";
    case Verdict::kCancelled: return "cancelled";
    case Verdict::kTimeout: return "timeout";
    case Verdict::kFailed: return "failed";
  }
  return "failed";
}

Verdict Classify(const Status& s, bool client_gone) {
  if (s.ok()) return Verdict::kOk;
  // Cancelled: the client left, seen at an Emit() or by the canceller between events. Neither
  // the backend's failure nor a reason to run the request again elsewhere.
  if (client_gone || s.code() == Status::Code::kCancelled) return Verdict::kCancelled;
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotFound:
    case Status::Code::kFailedPrecondition:
    case Status::Code::kUnimplemented:
    case Status::Code::kPermissionDenied:
    case Status::Code::kUnauthenticated:
    case Status::Code::kAlreadyExists: return Verdict::kClientError;
    case Status::Code::kResourceExhausted: return Verdict::kOverloaded;
    case Status::Code::kDeadlineExceeded: return Verdict::kTimeout;
    default: return Verdict::kFailed;
  }
}

bool Retryable(Verdict v) { return v == Verdict::kOverloaded || v == Verdict::kTimeout || v == Verdict::kFailed; }

// Passes events to the client's sink, counting them, and ends the request at its deadline by
// answering false, as a departed client would, so every backend's cancel path applies.
class GuardedSink final : public api::EventSink {
 public:
  // `attempt` is the chosen backend's own outcome, `outcome` (may be null) the router's.
  GuardedSink(api::EventSink& inner, int64_t deadline_ms, std::function<int64_t()> now,
              const api::BackendOutcome& attempt, api::BackendOutcome* outcome)
      : inner_(inner), deadline_ms_(deadline_ms), now_(std::move(now)), attempt_(attempt), outcome_(outcome) {}

  bool Emit(const api::StreamEvent& event) override {
    if (deadline_ms_ > 0 && now_() > deadline_ms_) {
      timed_out = true;
      return false;
    }
    // The model version the backend serves with is known to whoever reads the router's
    // outcome at the first event, as the backend contract promises.
    if (emitted == 0) NoteServedVersion(attempt_, outcome_);
    if (!inner_.Emit(event)) {
      client_gone = true;
      return false;
    }
    ++emitted;
    return true;
  }
  void SetCanceller(std::function<void()> cancel) override { inner_.SetCanceller(std::move(cancel)); }

  size_t emitted = 0;
  bool timed_out = false;
  bool client_gone = false;

  static void NoteServedVersion(const api::BackendOutcome& attempt, api::BackendOutcome* outcome) {
    if (outcome == nullptr) return;
    outcome->model_digest = attempt.model_digest;
    outcome->model_version = attempt.model_version;
  }

 private:
  api::EventSink& inner_;
  int64_t deadline_ms_;
  std::function<int64_t()> now_;
  const api::BackendOutcome& attempt_;
  api::BackendOutcome* outcome_;
};

std::string Shorten(std::string text, size_t limit = 160) {
  if (text.size() > limit) {
    text.resize(limit);
    text += "...";
  }
  return text;
}

}  // namespace

struct Router::Slot {
  Slot(RoutedBackend routed, const RouterOptions& options)
      : backend(std::move(routed.backend)),
        name(backend->name()),
        request_timeout_ms(routed.request_timeout_ms),
        breaker(options.breaker_failure_threshold, options.breaker_cooldown_ms) {}

  std::shared_ptr<api::Backend> backend;
  std::string name;
  int64_t request_timeout_ms;
  CircuitBreaker breaker;
  std::atomic<int64_t> outstanding_tokens{0};
  metrics::Gauge* outstanding_gauge = nullptr;
  metrics::Gauge* inflight_gauge = nullptr;
  metrics::Gauge* breaker_gauge = nullptr;

  void Begin(int64_t tokens) {
    outstanding_tokens.fetch_add(tokens);
    if (outstanding_gauge != nullptr) outstanding_gauge->Add(static_cast<double>(tokens));
    if (inflight_gauge != nullptr) inflight_gauge->Add(1);
  }
  void End(int64_t tokens) {
    outstanding_tokens.fetch_sub(tokens);
    if (outstanding_gauge != nullptr) outstanding_gauge->Add(-static_cast<double>(tokens));
    if (inflight_gauge != nullptr) inflight_gauge->Add(-1);
  }
  void PublishBreaker() {
    if (breaker_gauge != nullptr) breaker_gauge->Set(static_cast<double>(breaker.state()));
  }
};

int64_t EstimateRequestTokens(const ServingRequest& request, int64_t default_max_tokens) {
  return api::EstimatePromptTokens(request) + request.generation.max_tokens.value_or(default_max_tokens);
}

Router::Router(std::vector<RoutedBackend> backends, RouterOptions options, metrics::Registry* metrics)
    : options_(std::move(options)) {
  if (!options_.now_ms) {
    options_.now_ms = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  if (options_.max_attempts < 1) options_.max_attempts = 1;
  for (RoutedBackend& b : backends) slots_.push_back(std::make_unique<Slot>(std::move(b), options_));
  if (metrics == nullptr) return;
  requests_ = &metrics->AddCounter("kimi_router_requests_total",
                                   "Attempts the router sent to each backend, by how they ended.", {"backend", "outcome"});
  retries_ = &metrics->AddCounter("kimi_router_retries_total",
                                  "Requests sent to another backend after this one failed before the first byte.",
                                  {"backend"});
  unroutable_ = &metrics->AddCounter("kimi_router_unroutable_total",
                                     "Requests no backend could take (unknown_model, unavailable).", {"reason"});
  breaker_opens_ = &metrics->AddCounter("kimi_router_breaker_opens_total",
                                        "Times a backend's circuit breaker opened.", {"backend"});
  auto& outstanding = metrics->AddGauge("kimi_router_outstanding_tokens",
                                        "Estimated prompt + max_tokens of the requests each backend is running.",
                                        {"backend"});
  auto& inflight = metrics->AddGauge("kimi_router_inflight_requests", "Requests each backend is running.", {"backend"});
  auto& breaker = metrics->AddGauge("kimi_router_breaker_state",
                                    "Circuit breaker of each backend: 0 closed, 1 open, 2 half-open.", {"backend"});
  for (auto& slot : slots_) {
    slot->outstanding_gauge = &outstanding.WithLabels({slot->name});
    slot->inflight_gauge = &inflight.WithLabels({slot->name});
    slot->breaker_gauge = &breaker.WithLabels({slot->name});
    slot->PublishBreaker();
  }
}

Router::~Router() = default;

int64_t Router::Now() const { return options_.now_ms(); }

std::vector<std::string> Router::Models() const {
  std::vector<std::string> models;
  for (const auto& slot : slots_) {
    for (std::string& m : slot->backend->Models()) {
      if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(std::move(m));
    }
  }
  return models;
}

bool Router::Healthy(std::string_view model) const {
  int64_t now = Now();
  for (const auto& slot : slots_) {
    if (slot->backend->Healthy(model) && slot->breaker.WouldAdmit(now)) return true;
  }
  return false;
}

// What a slot is to a request for `model` now, in the words of the decision line; *admits
// when it would take the request.
std::string Router::SlotState(const Slot& slot, std::string_view model, int64_t now, bool* admits) const {
  *admits = false;
  if (!slot.backend->Healthy(model)) return "not serving";
  if (!slot.breaker.WouldAdmit(now)) return "breaker " + std::string(BreakerStateName(slot.breaker.state()));
  *admits = true;
  return std::to_string(slot.outstanding_tokens.load()) + " tokens outstanding";
}

std::string Router::UnavailableReason(std::string_view model) const {
  const int64_t now = Now();
  std::string states;
  for (const auto& slot : slots_) {
    bool admits = false;
    std::string state = SlotState(*slot, model, now, &admits);
    states += (states.empty() ? "" : ", ") + slot->name + " (" + state + ")";
  }
  return "no backend can take model " + std::string(model) + " now: " + states;
}

Router::Slot* Router::Choose(const std::string& model, const std::vector<Slot*>& excluded, std::string* considered) {
  int64_t now = Now();
  std::vector<Slot*> candidates;
  for (const auto& slot : slots_) {
    if (std::find(excluded.begin(), excluded.end(), slot.get()) != excluded.end()) continue;
    bool admits = false;
    const std::string state = SlotState(*slot, model, now, &admits);
    if (admits) candidates.push_back(slot.get());
    *considered += (considered->empty() ? "" : ", ") + slot->name + " (" + state + ")";
  }
  // Stable: equal loads keep the configuration's order.
  std::stable_sort(candidates.begin(), candidates.end(), [](const Slot* a, const Slot* b) {
    return a->outstanding_tokens.load() < b->outstanding_tokens.load();
  });
  for (Slot* slot : candidates) {
    if (slot->breaker.TryAcquire(now)) {
      slot->PublishBreaker();
      return slot;
    }
  }
  return nullptr;
}

Status Router::Generate(const api::BackendRequest& request, api::EventSink& sink, api::BackendOutcome* outcome) {
  const int64_t tokens = EstimateRequestTokens(request.serving, options_.default_max_tokens);
  std::vector<Slot*> tried;
  std::string decision;
  Status last;
  while (static_cast<int>(tried.size()) < options_.max_attempts) {
    std::string considered;
    Slot* slot = Choose(request.model, tried, &considered);
    if (slot == nullptr) {
      if (!tried.empty()) decision += "; no other backend to retry on among: " + considered;
      else decision = "no backend could take model " + request.model + " among: " + considered;
      break;
    }
    tried.push_back(slot);
    decision += (tried.size() == 1 ? "" : "; retried on ") + slot->name +
                (tried.size() == 1 ? " chosen for " + std::to_string(tokens) + " tokens among: " + considered : "");

    // Filled before the attempt too, so whoever reads it at the first event (a streamed
    // response's audit record) already sees who serves the request.
    if (outcome != nullptr) {
      outcome->backend = slot->name;
      outcome->attempts = static_cast<int>(tried.size());
      outcome->decision = decision;
    }
    int64_t start = Now();
    api::BackendOutcome attempt;
    GuardedSink guarded(sink, slot->request_timeout_ms > 0 ? start + slot->request_timeout_ms : 0, options_.now_ms,
                        attempt, outcome);
    slot->Begin(tokens);
    Status s = slot->backend->Generate(request, guarded, &attempt);
    slot->End(tokens);
    GuardedSink::NoteServedVersion(attempt, outcome);
    if (guarded.timed_out) {
      s = Status::DeadlineExceeded("backend " + slot->name + " exceeded its request timeout of " +
                                   std::to_string(slot->request_timeout_ms) + " ms");
    }

    Verdict verdict = Classify(s, guarded.client_gone);
    switch (verdict) {
      case Verdict::kOk:
      case Verdict::kClientError: slot->breaker.RecordSuccess(); break;
      case Verdict::kOverloaded:
      case Verdict::kCancelled: slot->breaker.Release(); break;
      case Verdict::kTimeout:
      case Verdict::kFailed: {
        const bool opened = slot->breaker.RecordFailure(Now());
        if (opened) {
          log::Warn("circuit breaker opened", {{"backend", slot->name}, {"error", s.ToString()}});
          if (breaker_opens_ != nullptr) breaker_opens_->WithLabels({slot->name}).Increment();
        }
        if (options_.on_backend_failure) options_.on_backend_failure(slot->name, s, opened);
        break;
      }
    }
    slot->PublishBreaker();
    if (requests_ != nullptr) requests_->WithLabels({slot->name, VerdictLabel(verdict)}).Increment();

    if (outcome != nullptr) {
      outcome->backend = slot->name;
      outcome->attempts = static_cast<int>(tried.size());
    }
    // A request the upstream refused as the client's (400, 413, 422) is answered in the
    // upstream's words, which may quote the request (vLLM's validation errors do): the client
    // gets them, the audit record only the refusal's kind, as it holds no prompt text. A backend
    // that refused it itself, before any server saw it, says why in words of its own.
    if (verdict == Verdict::kClientError) {
      decision += ": " + std::string(Status::CodeName(s.code())) +
                  (attempt.decision.empty() ? " (the upstream's words went to the client)" : " (" + attempt.decision + ")");
    } else if (!s.ok()) {
      decision += ": " + Shorten(s.ToString());
    }
    if (s.ok() || guarded.emitted > 0 || !Retryable(verdict)) {
      if (!s.ok() && guarded.emitted > 0 && Retryable(verdict)) decision += " (after the first byte: not retried)";
      if (outcome != nullptr) outcome->decision = decision;
      return s;
    }
    if (retries_ != nullptr) retries_->WithLabels({slot->name}).Increment();
    last = s;
  }
  if (outcome != nullptr) {
    outcome->decision = decision;
    if (tried.empty()) {
      outcome->backend.clear();  // no backend took it: the decision line says why
      outcome->attempts = 0;
      outcome->model_digest.clear();
      outcome->model_version = 0;
    }
  }
  if (!tried.empty()) return last;

  bool known = false;
  bool all_ready = true;
  for (const auto& slot : slots_) {
    std::vector<std::string> models = slot->backend->Models();
    if (models.empty()) all_ready = false;
    if (std::find(models.begin(), models.end(), request.model) != models.end()) known = true;
  }
  if (!known && all_ready) {
    if (unroutable_ != nullptr) unroutable_->WithLabels({"unknown_model"}).Increment();
    return Status::NotFound("The model `" + request.model + "` does not exist");
  }
  if (unroutable_ != nullptr) unroutable_->WithLabels({"unavailable"}).Increment();
  return Status::Unavailable("no backend is available for model " + request.model + " now");
}

BreakerState Router::breaker_state(std::string_view backend) const {
  for (const auto& slot : slots_) {
    if (slot->name == backend) return slot->breaker.state();
  }
  return BreakerState::kClosed;
}

int64_t Router::outstanding_tokens(std::string_view backend) const {
  for (const auto& slot : slots_) {
    if (slot->name == backend) return slot->outstanding_tokens.load();
  }
  return 0;
}

}  // namespace kimi::router
