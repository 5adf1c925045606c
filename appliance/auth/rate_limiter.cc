#include "auth/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace kimi::auth {

Status RateLimiter::Admit(const std::string& key_id, int64_t per_minute, int64_t now_ms, int64_t* retry_after_s) {
  if (per_minute <= 0) return Status::OK();
  const double capacity = static_cast<double>(per_minute);
  const double per_ms = capacity / 60'000.0;
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = buckets_.try_emplace(key_id, Bucket{capacity, now_ms});
  Bucket& b = it->second;
  if (!inserted) {
    double elapsed = static_cast<double>(std::max<int64_t>(0, now_ms - b.updated_ms));
    b.tokens = std::min(capacity, b.tokens + elapsed * per_ms);
    b.updated_ms = std::max(b.updated_ms, now_ms);
  }
  if (b.tokens >= 1.0) {
    b.tokens -= 1.0;
    return Status::OK();
  }
  double wait_ms = (1.0 - b.tokens) / per_ms;
  *retry_after_s = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(wait_ms / 1000.0)));
  return Status::ResourceExhausted("rate limit of " + std::to_string(per_minute) +
                                   " requests per minute reached for this API key; retry in " +
                                   std::to_string(*retry_after_s) + " s");
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
