// AuditOutbox: moves auth events from the auth_events table (written in the same transaction
// as each change, by the daemon or by kimictl) into the audit log, and deletes them once
// their records are committed. Only the daemon appends to the audit log, so a change made
// with kimictl while the daemon is down is recorded at the daemon's next start.
//
// Drain() runs at start, after every request that changed auth state (before its response),
// and every interval_ms on the outbox's own thread (for kimictl's changes while running).
// An event is never lost: a crash between commit and delete records it twice, never zero times.
// Public header of auth/: other folders include it.
// Thread safety: Drain() may be called from any thread (serialised); Start/Stop from one.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "auth/auth_store.h"
#include "kimi/status.h"

namespace kimi::audit {
class AuditSink;
}

namespace kimi::auth {

class AuditOutbox {
 public:
  AuditOutbox(AuthStore* store, audit::AuditSink* sink) : store_(store), sink_(sink) {}
  ~AuditOutbox() { Stop(); }
  AuditOutbox(const AuditOutbox&) = delete;
  AuditOutbox& operator=(const AuditOutbox&) = delete;

  // Records every pending event; returns the first error (events then stay queued).
  Status Drain();
  void Start(int64_t interval_ms);
  void Stop();

 private:
  AuthStore* store_;
  audit::AuditSink* sink_;
  std::mutex drain_mu_;  // one drain at a time, so no event is recorded twice

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace kimi::auth
