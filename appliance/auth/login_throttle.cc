#include "auth/login_throttle.h"

#include "auth/peer_address.h"

#include <chrono>

namespace kimi::auth {

Status LoginThrottle::AdmitOne(RateLimiter& limiter, const std::string& key, const char* what, int64_t per_minute,
                               int64_t now_ms, int64_t* retry_after_s, bool* first_refusal) {
  if (per_minute <= 0) return Status::OK();
  if (limiter.Size() >= options_.max_tracked) limiter.ForgetFull(per_minute, now_ms);
  Status admitted = limiter.Admit(key, per_minute, now_ms, retry_after_s);
  std::lock_guard<std::mutex> lock(mu_);
  if (admitted.ok()) {
    refused_.erase(key);
    return admitted;
  }
  // A budget stays in refused_ only while its bucket exists, so this set is bounded with them.
  if (refused_.size() >= 2 * options_.max_tracked) refused_.clear();
  *first_refusal = refused_.insert(key).second;
  return Status::ResourceExhausted(std::string("too many login attempts ") + what + "; retry in " +
                                   std::to_string(*retry_after_s) + " s");
}

Status LoginThrottle::Admit(std::string_view source, std::string_view username, int64_t now_ms,
                            int64_t* retry_after_s, bool* first_refusal) {
  *first_refusal = false;
  KIMI_RETURN_IF_ERROR(AdmitOne(sources_, "source " + PeerGroup(source), "from this address",
                                options_.per_source_per_minute, now_ms, retry_after_s, first_refusal));
  return AdmitOne(users_, "user " + std::string(username), "for this user name", options_.per_user_per_minute, now_ms,
                  retry_after_s, first_refusal);
}

HashSlots::HashSlots(int64_t slots, int64_t wait_ms)
    : slots_(static_cast<std::ptrdiff_t>(slots < 1 ? 1 : slots)), wait_ms_(wait_ms) {}

Result<HashSlots::Slot> HashSlots::Acquire() {
  if (!slots_.try_acquire_for(std::chrono::milliseconds(wait_ms_))) {
    return Status::ResourceExhausted("too many password checks in progress; retry in 1 s");
  }
  return Slot(this);
}

}  // namespace kimi::auth
