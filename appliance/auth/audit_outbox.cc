#include "auth/audit_outbox.h"

#include <chrono>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_sink.h"
#include "audit/record_builder.h"
#include "kimi/log.h"
#include "kimi/untrusted_json.h"

namespace kimi::auth {
namespace {

constexpr int kBatch = 256;

// An auth event as its record; another module's change carries its own whole record. One that
// cannot be read back (an edited row) is recorded from the columns, saying so.
audit::AuditRecord ToRecord(const AuthEvent& e) {
  std::string detail = e.detail;
  if (!e.record.empty()) {
    const Result<nlohmann::json> parsed = ParseUntrustedJson(e.record, "the record");
    Result<audit::AuditRecord> record = parsed.ok() ? audit::RecordFromJson(*parsed) : parsed.status();
    if (record.ok()) {
      record->seq = 0;  // the writer numbers it
      record->version = audit::kRecordFormatVersion;
      return std::move(record).value();
    }
    detail += " [the outbox row's record could not be read: " + record.status().message() + "]";
  }
  return audit::RecordBuilder::AdminAction(audit::Actor{e.actor, e.role, e.source, "", ""}, e.action, e.target)
      .Time(e.time_ms)
      .Outcome(e.outcome)
      .Detail(detail)
      .Build();
}

}  // namespace

Status AuditOutbox::Drain() {
  std::lock_guard<std::mutex> lock(drain_mu_);
  while (true) {
    KIMI_ASSIGN_OR_RETURN(std::vector<AuthEvent> events, store_->PendingEvents(kBatch));
    if (events.empty()) return Status::OK();
    std::vector<audit::Ticket> tickets;
    for (const AuthEvent& e : events) tickets.push_back(sink_->Record(ToRecord(e)));
    for (const audit::Ticket& t : tickets) KIMI_RETURN_IF_ERROR(t.WaitCommitted());
    KIMI_RETURN_IF_ERROR(store_->DeleteEventsThrough(events.back().id));
    if (events.size() < static_cast<size_t>(kBatch)) return Status::OK();
  }
}

void AuditOutbox::Start(int64_t interval_ms) {
  thread_ = std::thread([this, interval_ms] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(interval_ms));
      if (stopping_) break;
      lock.unlock();
      Status s = Drain();
      if (!s.ok()) log::Warn("auth events not yet in the audit log; retrying", {{"error", s.ToString()}});
      lock.lock();
    }
  });
}

void AuditOutbox::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace kimi::auth
