// RateLimiter: a per-minute token bucket per API key, for its requests-per-minute limit (one
// RateLimiter) and its tokens-per-minute limit (another). A key with a limit of N holds at
// most N, gains N per minute continuously, and is admitted while it holds at least one.
// A request spends one as it is admitted (Admit); generated tokens are charged after the
// fact (Charge) and may take the bucket below zero, so a long answer delays the key's next
// request until the debt is paid back at the limit's rate. A refusal says the seconds until
// one is back (the Retry-After of the 429).
//
// The buckets live in memory; the Authenticator saves them with the last-used times and at
// shutdown, and restores them at start, so a restart does not refill them.
//
// Public header of auth/: other folders include it (http/anonymous_record_budget.h).
// Thread safety: every method may be called from many threads at once (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "kimi/status.h"

namespace kimi::auth {

class RateLimiter {
 public:
  // OK and one spent, or ResourceExhausted with *retry_after_s set (at least 1).
  // per_minute <= 0 means no limit.
  Status Admit(const std::string& key_id, int64_t per_minute, int64_t now_ms, int64_t* retry_after_s);
  // Whether the key holds at least one now beyond `held` (what requests in flight may still
  // charge), spending nothing; false with *retry_after_s set (1 s when only the held part is
  // missing: it is given back as those requests end).
  bool HasOne(const std::string& key_id, int64_t per_minute, int64_t now_ms, int64_t* retry_after_s, int64_t held = 0);
  // Spends `amount` (>= 0), below zero if need be. A no-op for per_minute <= 0.
  void Charge(const std::string& key_id, int64_t per_minute, int64_t amount, int64_t now_ms);

  // How many buckets are kept now.
  size_t Size();
  // Forgets every bucket that would be full again at now_ms: a forgotten key starts full, so
  // nothing changes for it, and a limiter keyed by what clients send stays bounded in memory.
  void ForgetFull(int64_t per_minute, int64_t now_ms);

  // key id -> (tokens, updated_ms): every bucket, for saving; and loading them back.
  std::map<std::string, std::pair<double, int64_t>> Snapshot();
  void Restore(const std::map<std::string, std::pair<double, int64_t>>& buckets);

 private:
  struct Bucket {
    double tokens = 0;
    int64_t updated_ms = 0;
  };
  // The key's bucket refilled up to now. Requires mu_ held.
  Bucket& Refilled(const std::string& key_id, int64_t per_minute, int64_t now_ms);
  // Whether `b` holds one; sets *retry_after_s when not.
  static bool Holds(const Bucket& b, int64_t per_minute, int64_t* retry_after_s);

  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;  // guarded by mu_
};

}  // namespace kimi::auth
