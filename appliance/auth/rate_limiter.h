// RateLimiter: a token bucket per API key for its requests-per-minute limit. A key with a
// limit of N holds at most N tokens, gains N per minute continuously, and spends one per
// request; a request that finds less than one token is refused with the seconds until one
// is back (the Retry-After of the 429).
//
// The buckets live in memory; the Authenticator saves them with the last-used times and at
// shutdown, and restores them at start, so a restart does not refill them.
//
// Thread safety: Admit() may be called from many threads at once (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "kimi/status.h"

namespace kimi::auth {

class RateLimiter {
 public:
  // OK and one token spent, or ResourceExhausted with *retry_after_s set (at least 1).
  // per_minute <= 0 means no limit.
  Status Admit(const std::string& key_id, int64_t per_minute, int64_t now_ms, int64_t* retry_after_s);

  // key id -> (tokens, updated_ms): every bucket, for saving; and loading them back.
  std::map<std::string, std::pair<double, int64_t>> Snapshot();
  void Restore(const std::map<std::string, std::pair<double, int64_t>>& buckets);

 private:
  struct Bucket {
    double tokens = 0;
    int64_t updated_ms = 0;
  };
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;  // guarded by mu_
};

}  // namespace kimi::auth
