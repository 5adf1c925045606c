#include "auth/usage_meter.h"

#include <algorithm>
#include <ctime>
#include <string_view>

#include "kimi/log.h"

namespace kimi::auth {
namespace {

constexpr int64_t kDayMs = 86'400'000;

std::tm UtcTm(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm;
}

int64_t MonthStart(int year_since_1900, int month) {
  std::tm tm{};
  tm.tm_year = year_since_1900 + month / 12;
  tm.tm_mon = month % 12;
  tm.tm_mday = 1;
  return int64_t{timegm(&tm)} * 1000;
}

int64_t SecondsUntil(int64_t from_ms, int64_t to_ms) { return std::max<int64_t>(1, (to_ms - from_ms + 999) / 1000); }

}  // namespace

int64_t UtcDayStartMs(int64_t unix_ms) { return unix_ms - unix_ms % kDayMs; }

int64_t UtcMonthStartMs(int64_t unix_ms) {
  std::tm tm = UtcTm(unix_ms);
  return MonthStart(tm.tm_year, tm.tm_mon);
}

int64_t NextUtcMonthStartMs(int64_t unix_ms) {
  std::tm tm = UtcTm(unix_ms);
  return MonthStart(tm.tm_year, tm.tm_mon + 1);
}

UsageMeter::UsageMeter(AuthStore* store, int64_t max_streams, std::function<int64_t()> clock_ms,
                       int64_t usage_flush_ms)
    : store_(store), max_streams_(max_streams), clock_ms_(std::move(clock_ms)) {
  if (store_ == nullptr) return;
  ledger_ = std::make_unique<UsageLedger>(store_, usage_flush_ms);
  Result<std::map<std::string, std::pair<double, int64_t>>> buckets = store_->LoadRateBuckets(BucketKind::kTokens);
  if (buckets.ok()) {
    tokens_per_minute_.Restore(*buckets);
  } else {
    log::Warn("cannot restore the tokens-per-minute buckets; they start full", {{"error", buckets.status().ToString()}});
  }
}

UsageMeter::Lease::~Lease() {
  if (Status s = Finish(); !s.ok()) {
    log::Warn("cannot record a request's token usage", {{"key_id", key_id_}, {"error", s.ToString()}});
  }
  meter_->Release(key_id_, held_tokens_);
}

void UsageMeter::Lease::Count(int64_t prompt_tokens, int64_t completion_tokens) {
  counted_ = true;
  prompt_tokens_ = prompt_tokens;
  completion_tokens_ = completion_tokens;
}

Status UsageMeter::Lease::Finish() {
  if (finished_ || !counted_ || key_id_.empty() || meter_->store_ == nullptr) return Status::OK();
  finished_ = true;
  int64_t now = meter_->clock_ms_();
  meter_->tokens_per_minute_.Charge(key_id_, tokens_per_minute_, prompt_tokens_ + completion_tokens_, now);
  Status added = meter_->ledger_->Add(key_id_, UtcDayStartMs(now), UtcMonthStartMs(now), prompt_tokens_,
                                      completion_tokens_);
  // The counts stand in for what the request held from here on.
  meter_->Unhold(key_id_, held_tokens_);
  held_tokens_ = 0;
  return added;
}

Status UsageMeter::FlushUsage() { return ledger_ == nullptr ? Status::OK() : ledger_->Flush(); }

Status UsageMeter::Close() { return ledger_ == nullptr ? Status::OK() : ledger_->Close(); }

UsageLedgerStats UsageMeter::UsageStats() const { return ledger_ == nullptr ? UsageLedgerStats{} : ledger_->Stats(); }

Status UsageMeter::SaveBuckets() {
  if (store_ == nullptr) return Status::OK();
  return store_->SaveRateBuckets(BucketKind::kTokens, tokens_per_minute_.Snapshot());
}

Result<std::unique_ptr<UsageMeter::Lease>> UsageMeter::Begin(const Principal& principal, int64_t* retry_after_s,
                                                             int64_t most_tokens) {
  const bool is_key = principal.kind == Principal::Kind::kApiKey;
  const KeyLimits& limits = principal.limits;
  std::string key_id = is_key ? principal.id : std::string();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (max_streams_ > 0 && in_flight_ >= max_streams_) {
      *retry_after_s = 1;
      return Status::ResourceExhausted("the appliance's limit of " + std::to_string(max_streams_) +
                                       " concurrent generation requests (auth.max_concurrent_streams) is reached; "
                                       "retry shortly");
    }
    if (is_key && limits.max_concurrent_streams > 0 && per_key_[key_id].streams >= limits.max_concurrent_streams) {
      *retry_after_s = 1;
      return Status::ResourceExhausted("this API key's limit of " + std::to_string(limits.max_concurrent_streams) +
                                       " concurrent streams (max_concurrent_streams) is reached; retry when one ends");
    }
    ++in_flight_;
    if (is_key) ++per_key_[key_id].streams;
  }
  // From here the slots belong to the lease, so every refusal below releases them.
  std::unique_ptr<Lease> lease(new Lease(this, key_id, limits.tokens_per_minute, 0));
  if (!is_key) return lease;
  const bool quotas = store_ != nullptr && (limits.tokens_per_day > 0 || limits.tokens_per_month > 0);
  const int64_t now = clock_ms_();
  // The first read of a key's usage may load it from the database: not under the lock.
  if (quotas) KIMI_RETURN_IF_ERROR(ledger_->Read(key_id, UtcDayStartMs(now), UtcMonthStartMs(now)).status());
  // The checks and the holding are one step under the lock, and a lease gives back what it held
  // only after its counts are in the usage: so requests admitted at once see each other's
  // holds, and nothing is counted in neither.
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t held_by_others = per_key_[key_id].held_tokens;
  const std::string in_flight_note =
      held_by_others > 0 ? ", up to " + std::to_string(held_by_others) + " more held by its requests in flight" : "";
  if (!tokens_per_minute_.HasOne(key_id, limits.tokens_per_minute, now, retry_after_s, held_by_others)) {
    return Status::ResourceExhausted("this API key's limit of " + std::to_string(limits.tokens_per_minute) +
                                     " tokens per minute (tokens_per_minute) is used up" + in_flight_note +
                                     "; retry in " + std::to_string(*retry_after_s) + " s");
  }
  // A period's quota used up, or used up only with what requests in flight hold: then free
  // again as they end (Retry-After 1), not at the period's end.
  auto within = [&](int64_t used, int64_t quota, std::string_view per, int64_t period_end_ms,
                    std::string_view resets) -> Status {
    if (quota <= 0 || used + held_by_others < quota) return Status::OK();
    const bool used_up = used >= quota;
    *retry_after_s = used_up ? SecondsUntil(now, period_end_ms) : 1;
    return Status::ResourceExhausted("this API key's quota of " + std::to_string(quota) + " tokens per " +
                                     std::string(per) + " (tokens_per_" + std::string(per) + ") is used up (" +
                                     std::to_string(used) + " used" + in_flight_note + "); " +
                                     (used_up ? std::string(resets) : "retry when they end"));
  };
  if (quotas) {
    KIMI_ASSIGN_OR_RETURN(KeyUsage usage, ledger_->Read(key_id, UtcDayStartMs(now), UtcMonthStartMs(now)));
    KIMI_RETURN_IF_ERROR(within(usage.day.tokens(), limits.tokens_per_day, "day", UtcDayStartMs(now) + kDayMs,
                                "it resets at 00:00 UTC"));
    KIMI_RETURN_IF_ERROR(within(usage.month.tokens(), limits.tokens_per_month, "month", NextUtcMonthStartMs(now),
                                "it resets on the first of the month, 00:00 UTC"));
  }
  lease->held_tokens_ = std::max<int64_t>(0, most_tokens);
  per_key_[key_id].held_tokens += lease->held_tokens_;
  return lease;
}

Result<KeyUsage> UsageMeter::Usage(const std::string& key_id) {
  if (store_ == nullptr) return Status::Unavailable("usage is not available yet");
  int64_t now = clock_ms_();
  return ledger_->Read(key_id, UtcDayStartMs(now), UtcMonthStartMs(now));
}

int64_t UsageMeter::InFlight() {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

int64_t UsageMeter::InFlight(const std::string& key_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = per_key_.find(key_id);
  return it == per_key_.end() ? 0 : it->second.streams;
}

void UsageMeter::Release(const std::string& key_id, int64_t held_tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  --in_flight_;
  if (key_id.empty()) return;
  auto it = per_key_.find(key_id);
  if (it == per_key_.end()) return;
  it->second.held_tokens -= held_tokens;
  if (--it->second.streams <= 0) per_key_.erase(it);
}

void UsageMeter::Unhold(const std::string& key_id, int64_t held_tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = per_key_.find(key_id);
  if (it != per_key_.end()) it->second.held_tokens -= held_tokens;
}

}  // namespace kimi::auth
