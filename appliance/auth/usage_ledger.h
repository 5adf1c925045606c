// UsageLedger: each API key's token usage per UTC day and month (auth_usage), kept in memory
// as the authority the quotas are decided on, and written to the database in batches by one
// writer thread, so that a finished request costs a few map updates instead of a SQLite
// transaction and its fdatasync of its own.
//
// Owns one slot per (key, period, period start) in use: the period's total (what Read()
// answers) and the part of it not yet written. A slot is loaded from auth_usage the first
// time it is used and is then the only source of truth for that row: every later request of
// this process adds to it, and the writer adds the unwritten parts to the rows, so nothing
// is counted twice or missed by a reader while a batch is being written. A slot of a period
// that has ended is dropped once fully written.
//
// Durability: the writer commits every unwritten delta in one transaction (synchronous=FULL)
// at most flush_interval_ms after the first of them was added, and Close() writes what is
// left, so a clean shutdown loses nothing. After a crash or power loss the rows may lack the
// requests of that last interval; each of those requests' counts is durable in its audit
// record, committed before its response's last bytes (docs/audit.md). A failed write is
// retried at the next interval with nothing lost from memory. After Close(), Add() writes
// its row at once.
// Public header of auth/: other folders include it.
// Thread safety: Read, Add and Flush may be called from any thread at once; Close() from one
// thread; the destructor calls it. The AuthStore must outlive Close().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "auth/auth_store.h"
#include "kimi/status.h"

namespace kimi::auth {

// Counters since construction, for tests and the daemon's metrics.
struct UsageLedgerStats {
  uint64_t requests_added = 0;
  uint64_t transactions = 0;  // successful batch writes
  uint64_t rows_written = 0;  // usage rows (a key's day or month) added to by those writes
  uint64_t failed_writes = 0;
};

class UsageLedger {
 public:
  // `store` may not be null. Starts the writer.
  UsageLedger(AuthStore* store, int64_t flush_interval_ms);
  ~UsageLedger();
  UsageLedger(const UsageLedger&) = delete;
  UsageLedger& operator=(const UsageLedger&) = delete;

  // The key's usage in the day and the month starting at the given times, written or not.
  Result<KeyUsage> Read(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms);
  // Adds one finished request and its tokens to both periods; Read() sees it at once. An
  // error means the periods could not be loaded and the row could not be written either.
  Status Add(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms, int64_t prompt_tokens,
             int64_t completion_tokens);
  // Writes every unwritten delta now, in one transaction, and returns when it committed.
  Status Flush();
  // Stops the writer and writes what is left; idempotent. Returns that write's status.
  Status Close();

  UsageLedgerStats Stats() const;

 private:
  using SlotKey = std::tuple<std::string, UsagePeriod, int64_t>;  // key id, period, its start
  struct Slot {
    PeriodUsage total;
    PeriodUsage unwritten;  // period_start_ms unused
  };

  // Loads the slots of both periods that are not in memory yet.
  Status LoadMissing(const std::string& key_id, int64_t day_start_ms, int64_t month_start_ms);
  void WriterLoop();

  AuthStore* const store_;
  const int64_t flush_interval_ms_;

  std::mutex flush_mu_;  // one batch write at a time; slots are dropped only under it

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<SlotKey, Slot> slots_;   // guarded by mu_
  bool dirty_ = false;              // guarded by mu_: some slot has an unwritten part
  int64_t latest_day_start_ = 0;    // guarded by mu_: the newest periods seen
  int64_t latest_month_start_ = 0;  // guarded by mu_
  uint64_t drops_ = 0;              // guarded by mu_: how many writes dropped slots
  bool stopping_ = false;           // guarded by mu_
  bool closed_ = false;             // guarded by mu_
  UsageLedgerStats stats_;          // guarded by mu_

  std::thread writer_;
};

}  // namespace kimi::auth
