#include "auth/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace kimi::auth {

RateLimiter::Bucket& RateLimiter::Refilled(const std::string& key_id, int64_t per_minute, int64_t now_ms) {
  const double capacity = static_cast<double>(per_minute);
  auto [it, inserted] = buckets_.try_emplace(key_id, Bucket{capacity, now_ms});
  Bucket& b = it->second;
  if (!inserted) {
    double elapsed = static_cast<double>(std::max<int64_t>(0, now_ms - b.updated_ms));
    b.tokens = std::min(capacity, b.tokens + elapsed * capacity / 60'000.0);
    b.updated_ms = std::max(b.updated_ms, now_ms);
  }
  return b;
}

bool RateLimiter::Holds(const Bucket& b, int64_t per_minute, int64_t* retry_after_s) {
  if (b.tokens >= 1.0) return true;
  double wait_ms = (1.0 - b.tokens) * 60'000.0 / static_cast<double>(per_minute);
  *retry_after_s = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(wait_ms / 1000.0)));
  return false;
}

Status RateLimiter::Admit(const std::string& key_id, int64_t per_minute, int64_t now_ms, int64_t* retry_after_s) {
  if (per_minute <= 0) return Status::OK();
  std::lock_guard<std::mutex> lock(mu_);
  Bucket& b = Refilled(key_id, per_minute, now_ms);
  if (Holds(b, per_minute, retry_after_s)) {
    b.tokens -= 1.0;
    return Status::OK();
  }
  return Status::ResourceExhausted("rate limit of " + std::to_string(per_minute) +
                                   " requests per minute reached for this API key; retry in " +
                                   std::to_string(*retry_after_s) + " s");
}

bool RateLimiter::HasOne(const std::string& key_id, int64_t per_minute, int64_t now_ms, int64_t* retry_after_s,
                         int64_t held) {
  if (per_minute <= 0) return true;
  std::lock_guard<std::mutex> lock(mu_);
  const Bucket& b = Refilled(key_id, per_minute, now_ms);
  if (!Holds(b, per_minute, retry_after_s)) return false;
  if (b.tokens - static_cast<double>(held) >= 1.0) return true;
  *retry_after_s = 1;
  return false;
}

void RateLimiter::Charge(const std::string& key_id, int64_t per_minute, int64_t amount, int64_t now_ms) {
  if (per_minute <= 0 || amount <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  Refilled(key_id, per_minute, now_ms).tokens -= static_cast<double>(amount);
}

size_t RateLimiter::Size() {
  std::lock_guard<std::mutex> lock(mu_);
  return buckets_.size();
}

void RateLimiter::ForgetFull(int64_t per_minute, int64_t now_ms) {
  if (per_minute <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    if (Refilled(it->first, per_minute, now_ms).tokens >= static_cast<double>(per_minute)) {
      it = buckets_.erase(it);
    } else {
      ++it;
    }
  }
}

std::map<std::string, std::pair<double, int64_t>> RateLimiter::Snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::pair<double, int64_t>> out;
  for (const auto& [key_id, b] : buckets_) out[key_id] = {b.tokens, b.updated_ms};
  return out;
}

void RateLimiter::Restore(const std::map<std::string, std::pair<double, int64_t>>& buckets) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key_id, b] : buckets) buckets_[key_id] = Bucket{b.first, b.second};
}

}  // namespace kimi::auth
