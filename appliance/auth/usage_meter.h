// UsageMeter: the quotas of the generation routes (chat and text completions). Before a
// generation starts, Begin() checks, in order: the appliance-wide limit of generation
// requests in flight, the key's own limit of them (KeyLimits::max_concurrent_streams), and
// the key's tokens per UTC day and per UTC month against its stored usage. It returns a
// lease that holds the in-flight slots until it is destroyed (the stream ended or the client
// went away) and that records the finished request's prompt and completion tokens, as the
// backend counted them, into the key's usage rows (auth_usage, so a restart keeps them).
//
// A request is admitted while the period's usage is below the quota, so the request that
// crosses it finishes and the next one is refused until the period ends (Retry-After: the
// seconds to the next UTC midnight or first of the month). Console sessions have no key
// limits; only the appliance-wide limit applies to them.
//
// Thread safety: Begin(), Usage() and leases may be used from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "auth/auth_store.h"
#include "auth/principal.h"
#include "kimi/status.h"

namespace kimi::auth {

// Start of the UTC day and month containing `unix_ms`, and of the ones after them.
int64_t UtcDayStartMs(int64_t unix_ms);
int64_t UtcMonthStartMs(int64_t unix_ms);
int64_t NextUtcMonthStartMs(int64_t unix_ms);

class UsageMeter {
 public:
  // `max_streams`: the appliance-wide limit; 0: none. `store` may be null (no key quotas).
  UsageMeter(AuthStore* store, int64_t max_streams, std::function<int64_t()> clock_ms);
  UsageMeter(const UsageMeter&) = delete;
  UsageMeter& operator=(const UsageMeter&) = delete;

  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    // Adds the finished request's tokens to the key's usage (a no-op for sessions). Once.
    Status Finish(int64_t prompt_tokens, int64_t completion_tokens);

   private:
    friend class UsageMeter;
    Lease(UsageMeter* meter, std::string key_id) : meter_(meter), key_id_(std::move(key_id)) {}
    UsageMeter* meter_;
    std::string key_id_;  // empty for sessions
    bool finished_ = false;
  };

  // A lease, or ResourceExhausted naming the limit, with *retry_after_s set.
  Result<std::unique_ptr<Lease>> Begin(const Principal& principal, int64_t* retry_after_s);
  // The key's usage in the current UTC day and month.
  Result<KeyUsage> Usage(const std::string& key_id);
  // Generation requests in flight now: appliance-wide, and for one key.
  int64_t InFlight();
  int64_t InFlight(const std::string& key_id);

 private:
  void Release(const std::string& key_id);

  AuthStore* store_;
  const int64_t max_streams_;
  std::function<int64_t()> clock_ms_;
  std::mutex mu_;
  int64_t in_flight_ = 0;                      // guarded by mu_
  std::map<std::string, int64_t> per_key_;     // guarded by mu_: key id -> in flight (> 0)
};

}  // namespace kimi::auth
