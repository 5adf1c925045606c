#include "auth/usage_ledger.h"

#include <algorithm>
#include <chrono>

#include "kimi/log.h"

namespace kimi::auth {
namespace {

void AddTo(PeriodUsage* usage, int64_t requests, int64_t prompt_tokens, int64_t completion_tokens) {
  usage->requests += requests;
  usage->prompt_tokens += prompt_tokens;
  usage->completion_tokens += completion_tokens;
}

}  // namespace

UsageLedger::UsageLedger(AuthStore* store, int64_t flush_interval_ms)
    : store_(store), flush_interval_ms_(flush_interval_ms) {
  writer_ = std::thread([this] { WriterLoop(); });
}

UsageLedger::~UsageLedger() {
  if (Status s = Close(); !s.ok()) log::Warn("key usage not written at shutdown", {{"error", s.ToString()}});
}

Status UsageLedger::LoadMissing(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms) {
  for (;;) {
    uint64_t drops_before = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (slots_.count({key_id, UsagePeriod::kDay, day_start_ms}) > 0 &&
          slots_.count({key_id, UsagePeriod::kMonth, month_start_ms}) > 0) {
        return Status::OK();
      }
      drops_before = drops_;
    }
    // Read outside the lock. A missing slot has no unwritten part anywhere, so the rows hold
    // its whole total; a thread that loaded it meanwhile read the same rows, and its slot
    // wins. Only a write that dropped slots since could have made this read stale: read again.
    KIMI_ASSIGN_OR_RETURN(KeyUsage stored, store_->ReadUsage(key_id, day_start_ms, month_start_ms));
    std::lock_guard<std::mutex> lock(mu_);
    if (drops_ != drops_before) continue;
    slots_.try_emplace({key_id, UsagePeriod::kDay, day_start_ms}, Slot{stored.day, {}});
    slots_.try_emplace({key_id, UsagePeriod::kMonth, month_start_ms}, Slot{stored.month, {}});
    latest_day_start_ = std::max(latest_day_start_, day_start_ms);
    latest_month_start_ = std::max(latest_month_start_, month_start_ms);
    return Status::OK();
  }
}

Result<KeyUsage> UsageLedger::Read(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms) {
  for (;;) {
    KIMI_RETURN_IF_ERROR(LoadMissing(key_id, day_start_ms, month_start_ms));
    std::lock_guard<std::mutex> lock(mu_);
    auto day = slots_.find({key_id, UsagePeriod::kDay, day_start_ms});
    auto month = slots_.find({key_id, UsagePeriod::kMonth, month_start_ms});
    // Absent again only when a write dropped an ended period's slot in between: load again.
    if (day == slots_.end() || month == slots_.end()) continue;
    return KeyUsage{day->second.total, month->second.total};
  }
}

Status UsageLedger::Add(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms,
                        int64_t prompt_tokens, int64_t completion_tokens) {
  bool closed = false;
  for (;;) {
    if (Status loaded = LoadMissing(key_id, day_start_ms, month_start_ms); !loaded.ok()) {
      // Without the stored totals the delta cannot join the slots; write it on its own, as
      // a later load will then read it.
      log::Warn("key usage not readable; writing the request's row directly", {{"error", loaded.ToString()}});
      return store_->AddUsage(key_id, day_start_ms, month_start_ms, prompt_tokens, completion_tokens);
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto day = slots_.find({key_id, UsagePeriod::kDay, day_start_ms});
    auto month = slots_.find({key_id, UsagePeriod::kMonth, month_start_ms});
    if (day == slots_.end() || month == slots_.end()) continue;
    for (Slot* slot : {&day->second, &month->second}) {
      AddTo(&slot->total, 1, prompt_tokens, completion_tokens);
      AddTo(&slot->unwritten, 1, prompt_tokens, completion_tokens);
    }
    ++stats_.requests_added;
    // The writer sleeps until the first unwritten request; later ones need not wake it.
    if (!dirty_) cv_.notify_one();
    dirty_ = true;
    closed = closed_;
    break;
  }
  return closed ? Flush() : Status::OK();
}

Status UsageLedger::Flush() {
  std::lock_guard<std::mutex> flushing(flush_mu_);
  std::vector<UsageRowDelta> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!dirty_) return Status::OK();
    for (auto& [key, slot] : slots_) {
      if (slot.unwritten.requests == 0) continue;
      const auto& [key_id, period, start_ms] = key;
      batch.push_back(UsageRowDelta{key_id, period, start_ms, slot.unwritten.requests, slot.unwritten.prompt_tokens,
                                    slot.unwritten.completion_tokens});
      slot.unwritten = PeriodUsage{};
    }
    dirty_ = false;
  }
  const Status written = store_->AddUsageRows(batch);
  std::lock_guard<std::mutex> lock(mu_);
  if (!written.ok()) {
    // Back into the slots (only a write drops slots, and this one holds flush_mu_), for the
    // next attempt; the totals never changed.
    for (const UsageRowDelta& d : batch) {
      AddTo(&slots_[{d.key_id, d.period, d.period_start_ms}].unwritten, d.requests, d.prompt_tokens,
            d.completion_tokens);
    }
    dirty_ = true;
    ++stats_.failed_writes;
    return written;
  }
  ++stats_.transactions;
  stats_.rows_written += batch.size();
  // Ended periods, fully written, are read again from the rows should anyone ask.
  const size_t dropped = std::erase_if(slots_, [this](const auto& entry) {
    const auto& [key, slot] = entry;
    const int64_t latest = std::get<1>(key) == UsagePeriod::kDay ? latest_day_start_ : latest_month_start_;
    return slot.unwritten.requests == 0 && std::get<2>(key) < latest;
  });
  if (dropped > 0) ++drops_;
  return Status::OK();
}

void UsageLedger::WriterLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return dirty_ || stopping_; });
    if (stopping_) return;
    // Requests that end during the interval join this transaction.
    cv_.wait_for(lock, std::chrono::milliseconds(flush_interval_ms_), [this] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    if (Status s = Flush(); !s.ok()) {
      log::Warn("key usage not written yet; retrying", {{"error", s.ToString()}});
      lock.lock();
      // A failing store is retried after an interval, not in a tight loop.
      cv_.wait_for(lock, std::chrono::milliseconds(flush_interval_ms_), [this] { return stopping_; });
      continue;
    }
    lock.lock();
  }
}

Status UsageLedger::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Status::OK();
    stopping_ = true;
    closed_ = true;  // from here an Add() writes its own row
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  return Flush();
}

UsageLedgerStats UsageLedger::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace kimi::auth
