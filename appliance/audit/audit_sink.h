// AuditSink: the daemon's one door into the audit log. Request handlers call Record() and,
// before their response completes, Ticket::WaitCommitted().
//
// Owns the audit database (through AuditStore), the audit key, the in-memory compact tree and
// one writer thread. The writer takes every pending record at once (group commit), gives them
// dense sequence numbers, appends their leaf hashes to the tree, writes rows and tree in one
// SQLite transaction (WAL, synchronous=FULL), and only after COMMIT wakes the waiting tickets.
// Records queued while a transaction is being written join the next one (group commit with no
// wait by default), so concurrent requests share one COMMIT and one fdatasync instead of paying
// one each; commit_window_ms > 0 also lets the first record wait that long for others.
// Durability per record is unchanged: no ticket is woken before the transaction holding its
// record is committed.
// It signs a tree head every sign_interval_ms when the tree grew, on SignHeadNow(), and on
// Close(), and, given a content retention policy, purges expired content periodically.
//
// Trust: Open() verifies the log first (startup_verify.h) and fails, naming the first bad
// sequence number, when the appliance cannot vouch for it. Every head is stored with the
// writer's signed state (writer_state.h); Close()'s final head marks the stop clean, so rows
// found past it at the next start are refused as foreign. The writer stamps each record with
// at least the previous record's time_ms (a caller's older time or a clock stepped back is
// raised to it), so its log never goes backwards in time. Distrust() (the background
// verifier's verdict) stops all signing for the rest of the run.
//
// Fail-closed signal: when a write fails (disk full, database locked, I/O error, corruption)
// every ticket of that batch fails with Unavailable, Healthy() turns false and Reason() says
// why; the daemon then answers model requests with 503. While unhealthy the writer probes the
// store every probe_interval_ms (by writing a signed head) and turns healthy again when a
// write succeeds. A record queued with RecordWhenWritable() is not failed with its batch: the
// writer keeps it and commits it in its first transaction once the store writes again.
//
// Streams: the store keeps the streams whose start record has no end record
// (AuditStore::OpenStreams). Open() reads them (a previous run died mid-stream) and
// RecordInterruptedStreams() ends each with an "interrupted" record.
// Public header of audit/: other folders include it.
// Thread safety: Record, RecordWhenWritable, RecordInterruptedStreams, Healthy, Reason,
// TreeSize, SignHeadNow, PurgeContentBefore, Distrust may be called from any thread. Close()
// from one thread, once; the destructor calls it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "audit/audit_key.h"
#include "audit/audit_store.h"
#include "audit/compact_tree.h"
#include "audit/content_policy.h"
#include "audit/record.h"
#include "audit/signed_head.h"
#include "kimi/status.h"

namespace kimi::audit {

struct VerifiedLog;

inline constexpr std::string_view kAuditDbFile = "audit.db";

struct AuditSinkOptions {
  std::string data_dir;                 // holds audit.db and the audit key
  int64_t sign_interval_ms = 10'000;    // sign a head this often when the tree grew
  int64_t probe_interval_ms = 1'000;    // retry interval while the store is failing
  size_t max_batch = 8192;              // records a transaction at most
  // RecordWhenWritable() records kept while the store fails, at most; past it such a record
  // fails as an ordinary one does (a stream's end: the next start records it interrupted), so
  // a long outage under load does not hold every record in memory.
  size_t max_kept = 65536;
  // How long the oldest queued record may wait for others to share its transaction; 0: the
  // writer commits as soon as it wakes, and the records that arrive during that commit (its
  // fdatasync) form the next batch. Bounds the latency the window adds to a request.
  int64_t commit_window_ms = 0;
  AuditStoreOptions store;
  std::function<int64_t()> clock_ms;    // Unix ms; the system clock when empty
  // When set, the writer purges content older than the policy's retention age at start and
  // every purge_interval_ms (records and hashes stay; see content_policy.h).
  std::optional<AuditContentPolicy> content_retention;
  // Or, when the retention age can change while the daemon runs (a new policy version): called
  // at each purge with the current Unix ms, returns the cutoff (content older is purged) or
  // nullopt for no purge now. Called on the writer thread.
  std::function<std::optional<int64_t>(int64_t now_ms)> content_cutoff_ms;
  int64_t purge_interval_ms = 3'600'000;
  // Called on the writer thread, outside the sink's lock, each time Healthy() changes, with
  // the new state and Reason(); the daemon's readiness follows it. Must not call the sink.
  std::function<void(bool healthy, const std::string& reason)> on_health_change;
};

// Shared by a Ticket and the writer; completed once.
struct TicketState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // guarded by mu
  Status status;      // guarded by mu
  uint64_t seq = 0;   // guarded by mu
};

class Ticket {
 public:
  Ticket() = default;
  explicit Ticket(std::shared_ptr<TicketState> state) : state_(std::move(state)) {}
  // Blocks until the record is durably committed (OK) or its batch failed (Unavailable).
  Status WaitCommitted() const;
  // The record's sequence number. Precondition: WaitCommitted() returned OK.
  uint64_t seq() const;

 private:
  std::shared_ptr<TicketState> state_;
};

// Counters since Open(), for the benchmark and the daemon's metrics.
struct AuditSinkStats {
  uint64_t records_committed = 0;
  uint64_t transactions = 0;   // successful batch commits
  uint64_t failed_batches = 0;
  uint64_t heads_signed = 0;
  uint64_t wal_checkpoints = 0;  // run by the writer after acknowledging its commits
};

class AuditSink {
 public:
  // Opens <data_dir>/audit.db and the audit key (creating both when absent), verifies the log
  // (Corruption naming the first bad seq when it fails), loads the streams left open, signs a
  // head if records are not covered by one (after a crash) or else marks the writer state
  // running, starts the writer.
  static Result<std::unique_ptr<AuditSink>> Open(AuditSinkOptions options);
  ~AuditSink();
  AuditSink(const AuditSink&) = delete;
  AuditSink& operator=(const AuditSink&) = delete;

  // Queues the record; never blocks on the database. time_ms is set when 0.
  Ticket Record(AuditRecord record);
  // Like Record(), for a record that must reach the log though the store may be failing now
  // (the end of a stream whose start is committed): when its transaction fails, the writer
  // keeps it and commits it once the store writes again; the ticket completes then. Only a
  // Close() while the store still fails completes it with Unavailable (the stream's start
  // then stays open, and the next start records it interrupted).
  Ticket RecordWhenWritable(AuditRecord record);
  // Appends an "interrupted" end record (RecordBuilder::StreamEnd of its start) for every
  // stream that was open when Open() read the log: the previous run stopped without ending
  // it. Waits for their commit; returns how many. The daemon calls it once, before serving;
  // later calls find nothing.
  Result<uint64_t> RecordInterruptedStreams();

  bool Healthy() const;
  std::string Reason() const;  // empty when healthy
  uint64_t TreeSize() const;   // records committed so far
  AuditSinkStats Stats() const;
  const PublicKey& public_key() const { return key_.public_key(); }

  // Signs and stores a head of the current tree now (even when unchanged) and returns it.
  Result<SignedTreeHead> SignHeadNow();
  // Deletes the content of records older than cutoff_ms (the policy's retention age).
  Result<int64_t> PurgeContentBefore(int64_t cutoff_ms);
  // Deletes the content the policy no longer keeps: older than its retention age by the
  // sink's clock. Returns how many records lost their content.
  Result<int64_t> PurgeExpiredContent(const AuditContentPolicy& policy);

  // The log failed a verification after start (the background verifier): no head is signed
  // from now on, Healthy() stays false with reason, and the writer state's checkpoint is reset
  // so that the next start verifies from seq 0 (and refuses the log). Blocks until the writer
  // has stored that state.
  void Distrust(const std::string& reason);

  // Commits everything queued, signs a final head marking the stop clean, stops the writer.
  // Returns the first error of those final steps.
  Status Close();

 private:
  struct Pending {
    AuditRecord record;
    std::shared_ptr<TicketState> ticket;
    bool keep_on_failure = false;  // RecordWhenWritable()
  };
  using Task = std::function<void(AuditStore*)>;

  AuditSink(AuditSinkOptions options, AuditKey key, std::unique_ptr<AuditStore> store, CompactTree tree);
  int64_t NowMs() const;
  // Takes over a verified log (from Open, before the writer starts).
  Status Resume(const VerifiedLog& verified);
  Ticket Enqueue(AuditRecord record, bool keep_on_failure);
  void WriterLoop();
  void CommitBatch(std::vector<Pending>* batch);
  // Checkpoints the write-ahead log once it holds enough pages, after the commits are acknowledged.
  void CheckpointIfDue();
  // Signs a head of the tree and stores it with the writer state (clean: the final one).
  Status SignHead(bool even_if_unchanged, bool clean = false, SignedTreeHead* signed_head = nullptr);
  void SetHealth(const Status& status);
  Status DatabaseInPlace() const;
  // Runs task on the writer thread and waits for it.
  void RunOnWriter(Task task);

  const AuditSinkOptions options_;
  const AuditKey key_;

  // Writer thread only.
  std::unique_ptr<AuditStore> store_;
  std::string db_path_;  // and the file it named at Open:
  dev_t db_dev_ = 0;
  ino_t db_ino_ = 0;
  CompactTree tree_;
  uint64_t last_signed_size_ = 0;
  bool signed_any_ = false;
  uint64_t heads_ = 0;                // signed heads stored (counted in the writer state)
  CompactTree checkpoint_;            // the tree verified at Open (the next start resumes there)
  std::optional<int64_t> last_time_ms_;  // of the last committed record
  std::vector<Pending> kept_;  // RecordWhenWritable() records whose transaction failed

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Pending> pending_;  // guarded by mu_
  std::chrono::steady_clock::time_point oldest_pending_;  // guarded by mu_; when pending_ got its first
  std::deque<Task> tasks_;        // guarded by mu_
  bool stopping_ = false;         // guarded by mu_
  // Written under mu_; read without it by Healthy(), which streams ask at every frame.
  std::atomic<bool> healthy_{true};
  std::string distrust_;          // guarded by mu_; set once by Distrust()
  std::string reason_;            // guarded by mu_
  uint64_t committed_size_ = 0;   // guarded by mu_
  AuditSinkStats stats_;          // guarded by mu_
  std::vector<AuditRecord> open_at_start_;  // guarded by mu_; start records, set by Open()
  Status close_status_;           // written by the writer before it exits

  std::once_flag close_once_;
  std::thread writer_;
};

}  // namespace kimi::audit
