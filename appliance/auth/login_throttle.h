// LoginThrottle: what bounds the console login before any password is hashed or any event is
// written. Two per-minute budgets (token buckets, rate_limiter.h): one per client (PeerGroup:
// the IPv4 address or the IPv6 /64) and
// one per user name, known or not; an attempt spends one of each, and a refusal is a 429 with
// Retry-After. A refusal reports whether it is the first since the bucket last admitted, so the
// caller audits a burst once per window rather than once per attempt. Buckets are keyed by
// what clients send, so full ones are forgotten once more than max_tracked are kept.
//
// HashSlots: a bound on Argon2id computations in flight at once. Each holds mem_limit bytes
// while it runs; without a bound, N parallel logins cost N times that. A caller waits at most
// wait_ms for a slot, then is refused (ResourceExhausted).
//
// Thread safety: every method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <mutex>
#include <semaphore>
#include <set>
#include <string>
#include <string_view>

#include "auth/rate_limiter.h"
#include "kimi/status.h"

namespace kimi::auth {

struct LoginThrottleOptions {
  int64_t per_source_per_minute = 30;  // 0: no limit
  int64_t per_user_per_minute = 10;    // 0: no limit
  size_t max_tracked = 65'536;         // buckets kept per kind before full ones are forgotten
};

class LoginThrottle {
 public:
  explicit LoginThrottle(LoginThrottleOptions options) : options_(options) {}

  // OK with one attempt spent from the source's and the user name's budgets; or
  // ResourceExhausted with *retry_after_s set and *first_refusal telling whether this is the
  // first refusal of that budget since it last admitted. `source` is a peer address with or
  // without its port ("127.0.0.1:4000", "[::1]:4000"); the port is not part of the key.
  Status Admit(std::string_view source, std::string_view username, int64_t now_ms, int64_t* retry_after_s,
               bool* first_refusal);
  // User names with a bucket now (for tests of the bound).
  size_t TrackedUserNames() { return users_.Size(); }

 private:
  Status AdmitOne(RateLimiter& limiter, const std::string& key, const char* what, int64_t per_minute, int64_t now_ms,
                  int64_t* retry_after_s, bool* first_refusal);

  const LoginThrottleOptions options_;
  RateLimiter sources_;
  RateLimiter users_;
  std::mutex mu_;
  std::set<std::string> refused_;  // guarded by mu_: budgets refused since they last admitted
};

class HashSlots {
 public:
  // At most `slots` (>= 1) hashes at once; a caller waits at most wait_ms for one.
  HashSlots(int64_t slots, int64_t wait_ms);

  // Held while one hash runs; released on destruction.
  class Slot {
   public:
    Slot() = default;
    explicit Slot(HashSlots* owner) : owner_(owner) {}
    Slot(Slot&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() {
      if (owner_ != nullptr) owner_->slots_.release();
    }

   private:
    HashSlots* owner_ = nullptr;
  };

  // A slot, or ResourceExhausted (retry after a second) when none came free within wait_ms.
  Result<Slot> Acquire();

 private:
  std::counting_semaphore<> slots_;
  const int64_t wait_ms_;
};

}  // namespace kimi::auth
