#include "http/anonymous_record_budget.h"

#include <algorithm>

#include "auth/peer_address.h"

namespace kimi::http {

bool AnonymousRecordBudget::Admit(std::string_view peer, int http_status, int64_t now_ms) {
  const std::string address = auth::PeerGroup(peer);
  int64_t retry_after_s = 0;
  bool admitted = true;
  if (options_.per_source_per_minute > 0) {
    if (sources_.Size() >= options_.max_tracked) sources_.ForgetFull(options_.per_source_per_minute, now_ms);
    admitted = sources_.Admit(address, options_.per_source_per_minute, now_ms, &retry_after_s).ok();
  }
  if (admitted && options_.per_minute > 0) {
    admitted = all_.Admit(std::string(kManySources), options_.per_minute, now_ms, &retry_after_s).ok();
  }
  if (admitted) return true;

  std::lock_guard<std::mutex> lock(mu_);
  auto it = counts_.find({address, http_status});
  if (it == counts_.end()) {
    const std::string source = counts_.size() < options_.max_sources ? address : std::string(kManySources);
    it = counts_.try_emplace({source, http_status}, CountedRequests{source, http_status, 0, now_ms, now_ms}).first;
    next_due_ms_.store(std::min(next_due_ms_.load(), it->second.first_ms + options_.window_ms));
  }
  ++it->second.count;
  it->second.last_ms = std::max(it->second.last_ms, now_ms);
  return false;
}

std::vector<CountedRequests> AnonymousRecordBudget::TakeDue(int64_t now_ms) {
  if (now_ms < next_due_ms_.load(std::memory_order_relaxed)) return {};
  return Take(now_ms - options_.window_ms);
}

std::vector<CountedRequests> AnonymousRecordBudget::TakeAll() { return Take(INT64_MAX); }

std::vector<CountedRequests> AnonymousRecordBudget::Take(int64_t due_before_ms) {
  std::vector<CountedRequests> due;
  std::lock_guard<std::mutex> lock(mu_);
  int64_t next = INT64_MAX;
  for (auto it = counts_.begin(); it != counts_.end();) {
    if (it->second.first_ms <= due_before_ms) {
      due.push_back(std::move(it->second));
      it = counts_.erase(it);
    } else {
      next = std::min(next, it->second.first_ms + options_.window_ms);
      ++it;
    }
  }
  next_due_ms_.store(next);
  return due;
}

}  // namespace kimi::http
