// UsageMeter: the quotas of the generation routes (chat and text completions). Before a
// generation starts, Begin() checks, in order: the appliance-wide limit of generation
// requests in flight, the key's own limit of them (KeyLimits::max_concurrent_streams), the
// key's tokens-per-minute bucket, and its tokens per UTC day and per UTC month against its
// stored usage. It returns a lease that holds the in-flight slots until it is destroyed and
// that records the request's prompt and completion tokens into the key's usage rows
// (auth_usage, so a restart keeps them) and charges them to the tokens-per-minute bucket.
// Public header of auth/: other folders include it.
// The caller tells the lease the request's counts as they grow (Count): the backend's own
// counts once its finish event arrives, or, for a request cut short (the client went away,
// the backend failed mid-stream), what was generated until then. The lease records them once:
// at Finish(), or when destroyed, so no request that generated anything goes uncounted. A
// lease that was never given counts (nothing was generated) records nothing.
//
// A request is admitted while the period's usage is below the quota, so the request that
// crosses it finishes and the next one is refused until the period ends (Retry-After: the
// seconds to the next UTC midnight or first of the month, or until the minute's bucket holds
// a token again). The key's requests in flight count as the most they may use (each one's
// `most_tokens`: its estimated prompt and its max_tokens), held from their admission until
// their counts are recorded: otherwise every request admitted at once saw the same usage
// below the quota, and a burst of them took many times the quota. A refusal for what requests
// in flight hold says so, with Retry-After 1. Console sessions have no key limits; only the appliance-wide limit applies
// to them. The tokens-per-minute buckets are restored from the store at construction and
// written back by SaveBuckets(). Close() writes the usage not written yet and stops the
// ledger's writer; call it before the store closes.
//
// Thread safety: Begin(), Usage(), FlushUsage() and leases may be used from many threads at
// once; Close() from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "auth/auth_store.h"
#include "auth/principal.h"
#include "auth/rate_limiter.h"
#include "auth/usage_ledger.h"
#include "kimi/status.h"

namespace kimi::auth {

// Start of the UTC day and month containing `unix_ms`, and of the ones after them.
int64_t UtcDayStartMs(int64_t unix_ms);
int64_t UtcMonthStartMs(int64_t unix_ms);
int64_t NextUtcMonthStartMs(int64_t unix_ms);

class UsageMeter {
 public:
  static constexpr int64_t kDefaultUsageFlushMs = 1000;

  // `max_streams`: the appliance-wide limit; 0: none. `store` may be null (no key quotas).
  // `usage_flush_ms`: how long finished requests' usage may wait to be written together.
  UsageMeter(AuthStore* store, int64_t max_streams, std::function<int64_t()> clock_ms,
             int64_t usage_flush_ms = kDefaultUsageFlushMs);
  UsageMeter(const UsageMeter&) = delete;
  UsageMeter& operator=(const UsageMeter&) = delete;

  // Belongs to one request's thread.
  class Lease {
   public:
    ~Lease();  // records counts not yet recorded (failures are logged), frees the slots
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    // The request's tokens so far; replaces the previous counts.
    void Count(int64_t prompt_tokens, int64_t completion_tokens);
    // Adds the counts to the key's usage and charges its minute bucket (a no-op for sessions
    // and for a lease never counted). Once: later calls do nothing.
    Status Finish();
    Status Finish(int64_t prompt_tokens, int64_t completion_tokens) {
      Count(prompt_tokens, completion_tokens);
      return Finish();
    }

   private:
    friend class UsageMeter;
    Lease(UsageMeter* meter, std::string key_id, int64_t tokens_per_minute, int64_t held_tokens)
        : meter_(meter), key_id_(std::move(key_id)), tokens_per_minute_(tokens_per_minute), held_tokens_(held_tokens) {}
    UsageMeter* meter_;
    std::string key_id_;  // empty for sessions
    int64_t tokens_per_minute_;
    int64_t held_tokens_;  // held against the key's quotas until the counts are recorded
    bool counted_ = false;
    bool finished_ = false;
    int64_t prompt_tokens_ = 0;
    int64_t completion_tokens_ = 0;
  };

  // A lease, or ResourceExhausted naming the limit, with *retry_after_s set. `most_tokens`: the
  // most this request may use (prompt and completion), held against the key's quotas while it
  // runs.
  Result<std::unique_ptr<Lease>> Begin(const Principal& principal, int64_t* retry_after_s, int64_t most_tokens = 0);
  // The key's usage in the current UTC day and month.
  Result<KeyUsage> Usage(const std::string& key_id);
  // Generation requests in flight now: appliance-wide, and for one key.
  int64_t InFlight();
  int64_t InFlight(const std::string& key_id);
  // Writes the tokens-per-minute buckets to the store.
  Status SaveBuckets();
  // Writes the usage not written yet now (the ledger's writer does so within usage_flush_ms).
  Status FlushUsage();
  // Writes what is left and stops the ledger's writer; idempotent. Leases that end later
  // write their rows themselves.
  Status Close();
  UsageLedgerStats UsageStats() const;

 private:
  // The end of a lease: its slots and what it still holds.
  void Release(const std::string& key_id, int64_t held_tokens);
  // Gives back what a lease held once its counts are recorded.
  void Unhold(const std::string& key_id, int64_t held_tokens);

  struct KeyInFlight {
    int64_t streams = 0;      // > 0 while listed
    int64_t held_tokens = 0;  // the sum of the streams' held tokens not given back yet
  };

  AuthStore* store_;
  std::unique_ptr<UsageLedger> ledger_;  // null without a store
  RateLimiter tokens_per_minute_;
  const int64_t max_streams_;
  std::function<int64_t()> clock_ms_;
  std::mutex mu_;
  int64_t in_flight_ = 0;                      // guarded by mu_
  std::map<std::string, KeyInFlight> per_key_;  // guarded by mu_
};

}  // namespace kimi::auth
