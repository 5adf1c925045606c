#include "audit/audit_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "audit/merkle.h"
#include "audit/record_builder.h"
#include "audit/startup_verify.h"
#include "audit/writer_state.h"
#include "kimi/log.h"

namespace kimi::audit {
namespace {

void Complete(TicketState* t, Status status, uint64_t seq) {
  {
    std::lock_guard<std::mutex> lock(t->mu);
    t->done = true;
    t->status = std::move(status);
    t->seq = seq;
  }
  t->cv.notify_all();
}

// The start records of the streams the log shows started and not ended: one indexed read
// each, however long the log.
// The streams the table lists as open, each checked against the signed records: a start record
// ("started") that no record ends yet. The table itself is not signed, and an edited one made the
// start write an end record for a record that is no stream's start, a log that every later
// start then refused.
Result<std::vector<AuditRecord>> ReadOpenStreams(AuditStore& store) {
  KIMI_ASSIGN_OR_RETURN(std::vector<uint64_t> seqs, store.OpenStreams());
  std::vector<AuditRecord> starts;
  for (uint64_t seq : seqs) {
    const std::string listed = "audit database lists record " + std::to_string(seq) + " as an open stream's start, but ";
    KIMI_ASSIGN_OR_RETURN(std::optional<StoredRecord> start, store.ReadRecord(seq));
    if (!start.has_value()) return Status::Corruption(listed + "it does not exist; run `kimictl audit verify`");
    if (start->record.outcome != kOutcomeStreamStarted || start->record.start_seq != kNoStartSeq) {
      return Status::Corruption(listed + "it is no stream's start (outcome \"" + start->record.outcome +
                                "\"): the table audit_open_streams was edited");
    }
    KIMI_ASSIGN_OR_RETURN(bool ended, store.HasStreamEnd(seq));
    if (ended) {
      return Status::Corruption(listed + "a record already ends it: the table audit_open_streams was edited");
    }
    starts.push_back(std::move(start->record));
  }
  return starts;
}

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Status Ticket::WaitCommitted() const {
  if (!state_) return Status::FailedPrecondition("empty audit ticket");
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [&] { return state_->done; });
  return state_->status;
}

uint64_t Ticket::seq() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->seq;
}

Result<std::unique_ptr<AuditSink>> AuditSink::Open(AuditSinkOptions options) {
  if (options.data_dir.empty()) return Status::InvalidArgument("audit sink needs a data directory");
  const std::string path = options.data_dir + "/" + std::string(kAuditDbFile);
  const std::string marker = options.data_dir + "/" + std::string(kAuditLogMarkerFile);
  // Once a log exists, its marker says so: a marker without its log means the log was removed
  // (an empty new one would verify, and every record of the old one would be gone unnoticed).
  // The installer makes the key before any log, so the key alone says nothing.
  struct stat marker_stat {}, db_stat {};
  const bool db_present = ::stat(path.c_str(), &db_stat) == 0 && db_stat.st_size > 0;
  const bool marker_present = ::stat(marker.c_str(), &marker_stat) == 0;
  if (marker_present && !db_present) {
    return Status::FailedPrecondition(
        "the audit log " + path + " is missing or empty, but " + marker +
        " says one was created here: the records it held are gone. Restore audit.db from a backup; to start a "
        "new log on purpose, move the marker and the audit key away first (a new key is made, with a new "
        "fingerprint for the verifiers)");
  }
  KIMI_ASSIGN_OR_RETURN(AuditKey key, AuditKey::LoadOrCreate(options.data_dir));
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<AuditStore> store, AuditStore::Open(path, options.store));
  const auto verify_start = std::chrono::steady_clock::now();
  KIMI_ASSIGN_OR_RETURN(VerifiedLog verified, VerifyBeforeExtending(*store, key.public_key()));
  const int64_t verify_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - verify_start)
                                .count();
  KIMI_ASSIGN_OR_RETURN(std::vector<AuditRecord> open_streams, ReadOpenStreams(*store));
  std::unique_ptr<AuditSink> sink(new AuditSink(std::move(options), std::move(key), std::move(store), verified.tree));
  sink->open_at_start_ = std::move(open_streams);
  sink->db_path_ = path;
  if (::stat(path.c_str(), &db_stat) != 0) return Status::IOError("cannot stat " + path);
  if (!marker_present) {
    const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return Status::IOError("cannot create " + marker + ": " + std::strerror(errno));
    if (fd >= 0) {
      constexpr std::string_view kText = "an audit log was created in this directory; a start without it is refused\n";
      const bool written = ::write(fd, kText.data(), kText.size()) == static_cast<ssize_t>(kText.size());
      ::close(fd);
      if (!written) return Status::IOError("cannot write " + marker);
    }
  }
  sink->db_dev_ = db_stat.st_dev;
  sink->db_ino_ = db_stat.st_ino;
  KIMI_RETURN_IF_ERROR(sink->Resume(verified));
  sink->writer_ = std::thread([s = sink.get()] { s->WriterLoop(); });
  log::Info("audit log open", {{"path", path}, {"records", static_cast<int64_t>(sink->tree_.size())},
                               {"verified_at_start", static_cast<int64_t>(verified.rows_checked)},
                               {"verify_ms", verify_ms}, {"key_id", ToHex(sink->key_.key_id())}});
  return sink;
}

Status AuditSink::Resume(const VerifiedLog& verified) {
  signed_any_ = verified.heads > 0;
  last_signed_size_ = verified.head_size;
  heads_ = verified.heads;
  checkpoint_ = verified.tree;
  last_time_ms_ = verified.last_time_ms;
  // Records committed before a crash are not covered by any head yet: cover them now. Either
  // way the state says "running" before a record is appended: rows this run writes and cannot
  // sign before a crash are then its own, not foreign.
  if (tree_.size() > last_signed_size_) return SignHead(/*even_if_unchanged=*/false);
  WriterState state;
  state.heads = heads_;
  state.head_size = last_signed_size_;
  state.timestamp_ms = NowMs();
  return store_->WriteWriterState(SignWriterState(key_, state, checkpoint_));
}

AuditSink::AuditSink(AuditSinkOptions options, AuditKey key, std::unique_ptr<AuditStore> store, CompactTree tree)
    : options_(std::move(options)), key_(std::move(key)), store_(std::move(store)), tree_(std::move(tree)) {
  committed_size_ = tree_.size();
}

AuditSink::~AuditSink() { Close(); }

int64_t AuditSink::NowMs() const { return options_.clock_ms ? options_.clock_ms() : SystemNowMs(); }

Ticket AuditSink::Record(AuditRecord record) { return Enqueue(std::move(record), /*keep_on_failure=*/false); }

Ticket AuditSink::RecordWhenWritable(AuditRecord record) {
  return Enqueue(std::move(record), /*keep_on_failure=*/true);
}

Result<uint64_t> AuditSink::RecordInterruptedStreams() {
  std::vector<AuditRecord> starts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    starts.swap(open_at_start_);
  }
  std::vector<Ticket> tickets;
  for (const AuditRecord& start : starts) {
    tickets.push_back(Record(RecordBuilder::StreamEnd(start, start.seq)
                                 .Outcome(kOutcomeStreamInterrupted)
                                 .Detail("the daemon stopped before the stream ended; recorded when it started again")
                                 .Build()));
  }
  for (const Ticket& t : tickets) KIMI_RETURN_IF_ERROR(t.WaitCommitted());
  return static_cast<uint64_t>(starts.size());
}

Ticket AuditSink::Enqueue(AuditRecord record, bool keep_on_failure) {
  auto state = std::make_shared<TicketState>();
  if (record.time_ms == 0) record.time_ms = NowMs();
  record.version = kRecordFormatVersion;  // new records are always written in the current encoding
  // Sanitising and hashing the content here keeps that work off the writer thread.
  NormalizeRecord(&record);
  bool wake_writer = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      Complete(state.get(), Status::Unavailable("audit log is closed"), 0);
      return Ticket(state);
    }
    // The writer waits for the first pending record, then for the window or a full batch;
    // the records in between need not wake it (it takes them when it next looks).
    if (pending_.empty()) oldest_pending_ = std::chrono::steady_clock::now();
    pending_.push_back(Pending{std::move(record), state, keep_on_failure});
    wake_writer = pending_.size() == 1 || pending_.size() == options_.max_batch;
  }
  if (wake_writer) cv_.notify_one();
  return Ticket(state);
}

bool AuditSink::Healthy() const { return healthy_.load(std::memory_order_acquire); }

std::string AuditSink::Reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

uint64_t AuditSink::TreeSize() const {
  std::lock_guard<std::mutex> lock(mu_);
  return committed_size_;
}

AuditSinkStats AuditSink::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void AuditSink::SetHealth(const Status& status) {
  bool changed = false;
  std::string reason;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!distrust_.empty()) return;  // stays unhealthy with the distrust reason
    const bool healthy = status.ok();
    changed = healthy != healthy_.load(std::memory_order_relaxed);
    healthy_.store(healthy, std::memory_order_release);
    reason_ = healthy ? std::string() : "audit store cannot write: " + status.ToString();
    reason = reason_;
  }
  if (changed && options_.on_health_change) options_.on_health_change(status.ok(), reason);
  if (changed && status.ok()) log::Info("audit store writable again");
  if (changed && !status.ok()) log::Error("audit store cannot write", {{"error", status.ToString()}});
}

void AuditSink::RunOnWriter(Task task) {
  auto done = std::make_shared<TicketState>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    tasks_.push_back([task = std::move(task), done](AuditStore* store) {
      task(store);
      Complete(done.get(), Status::OK(), 0);
    });
  }
  cv_.notify_one();
  Ticket(done).WaitCommitted();
}

Result<SignedTreeHead> AuditSink::SignHeadNow() {
  Result<SignedTreeHead> result = Status::Unavailable("audit log is closed");
  RunOnWriter([&](AuditStore*) {
    SignedTreeHead head;
    Status s = SignHead(/*even_if_unchanged=*/true, /*clean=*/false, &head);
    SetHealth(s);
    if (s.ok()) {
      result = head;
    } else {
      result = s;
    }
  });
  return result;
}

void AuditSink::Distrust(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!distrust_.empty()) return;
    distrust_ = "audit log fails verification: " + reason;
    healthy_ = false;
    reason_ = distrust_;
  }
  log::Error("audit log fails verification; no head is signed from now on", {{"reason", reason}});
  if (options_.on_health_change) options_.on_health_change(false, Reason());
  // The next start must not trust its checkpoint either: it verifies from seq 0 again, finds
  // the same failure and refuses to start.
  RunOnWriter([this](AuditStore* store) {
    checkpoint_ = CompactTree();
    WriterState state;
    state.heads = heads_;
    state.head_size = last_signed_size_;
    state.timestamp_ms = NowMs();
    const Status s = store->WriteWriterState(SignWriterState(key_, state, checkpoint_));
    if (!s.ok()) log::Error("audit log: the start-up checkpoint was not reset", {{"error", s.ToString()}});
  });
}

Result<int64_t> AuditSink::PurgeContentBefore(int64_t cutoff_ms) {
  Result<int64_t> result = Status::Unavailable("audit log is closed");
  RunOnWriter([&](AuditStore* store) { result = store->PurgeContentBefore(cutoff_ms); });
  return result;
}

Result<int64_t> AuditSink::PurgeExpiredContent(const AuditContentPolicy& policy) {
  return PurgeContentBefore(ContentRetentionCutoffMs(policy, NowMs()));
}

Status AuditSink::SignHead(bool even_if_unchanged, bool clean, SignedTreeHead* signed_head) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!distrust_.empty()) return Status::FailedPrecondition(distrust_);
  }
  if (!even_if_unchanged && signed_any_ && last_signed_size_ == tree_.size()) return Status::OK();
  if (!even_if_unchanged && !signed_any_ && tree_.size() == 0) return Status::OK();
  const SignedTreeHead head = key_.Sign(tree_.size(), NowMs(), tree_.Root());
  WriterState state;
  state.heads = heads_ + 1;
  state.head_size = head.tree_size;
  state.timestamp_ms = head.timestamp_ms;
  state.clean = clean;
  const WriterState signed_state = SignWriterState(key_, state, checkpoint_);
  Status s = store_->InsertHead(head, &signed_state);
  if (s.ok()) {
    last_signed_size_ = head.tree_size;
    signed_any_ = true;
    ++heads_;
    if (signed_head != nullptr) *signed_head = head;
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.heads_signed;
    return s;
  }
  // A failed COMMIT may still have reached the disk: count what the database holds, or the
  // next state would not match the heads and the next start would refuse the log.
  Result<uint64_t> count = store_->HeadCount();
  Result<uint64_t> largest = store_->LargestHeadSize();
  if (count.ok() && largest.ok()) {
    heads_ = *count;
    last_signed_size_ = *largest;
    signed_any_ = heads_ > 0;
  }
  return s;
}

// Records written to a database file that was removed or replaced would go where no verifier
// and no next start finds them: the writer checks, before each batch, that the path still
// names the file it opened, and fails the batch (and so the requests: 503) when it does not.
Status AuditSink::DatabaseInPlace() const {
  struct stat st {};
  if (::stat(db_path_.c_str(), &st) != 0 || st.st_dev != db_dev_ || st.st_ino != db_ino_) {
    return Status::FailedPrecondition(db_path_ + " was removed or replaced while the daemon runs; restart it to "
                                      "verify the log again");
  }
  return Status::OK();
}

void AuditSink::CommitBatch(std::vector<Pending>* batch) {
  CompactTree next = tree_;
  std::vector<PendingRow> rows(batch->size());
  std::optional<int64_t> time_floor = last_time_ms_;
  for (size_t i = 0; i < batch->size(); ++i) {
    AuditRecord& r = (*batch)[i].record;
    r.seq = next.size();
    // Never backwards along the log (time_order.h): a record stamped before its predecessor
    // (queued a little earlier, an outbox event, a clock stepped back) takes the predecessor's time.
    if (time_floor && r.time_ms < *time_floor) r.time_ms = *time_floor;
    time_floor = r.time_ms;
    rows[i].record = &r;
    rows[i].leaf_hash = HashLeaf(CanonicalRecordBytes(r));
    next.AppendLeafHash(rows[i].leaf_hash);
  }
  Status s = DatabaseInPlace();
  if (s.ok()) s = store_->AppendBatch(rows, next);
  if (!s.ok()) {
    // A failed COMMIT may still have reached the disk; trust only what the database now says.
    // When it did, the batch is committed: failing its tickets would make the kept records
    // (RecordWhenWritable) be written a second time, a stream ended twice.
    Result<CompactTree> reloaded = store_->LoadTree();
    if (reloaded.ok() && reloaded->size() == next.size() && reloaded->Root() == next.Root()) {
      log::Warn("audit log: the store reported a failed commit that reached the disk; the batch stands",
                {{"error", s.ToString()}, {"records", static_cast<int64_t>(batch->size())}});
      s = Status::OK();
    } else if (reloaded.ok()) {
      tree_ = std::move(reloaded).value();
    }
  }
  SetHealth(s);
  if (s.ok()) {
    tree_ = std::move(next);
    last_time_ms_ = time_floor;
    {
      std::lock_guard<std::mutex> lock(mu_);
      committed_size_ = tree_.size();
      stats_.records_committed += batch->size();
      ++stats_.transactions;
    }
    for (Pending& p : *batch) Complete(p.ticket.get(), Status::OK(), p.record.seq);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.failed_batches;
  }
  const Status failure = Status::Unavailable("audit record not committed: " + s.ToString());
  for (Pending& p : *batch) {
    if (p.keep_on_failure && kept_.size() < options_.max_kept) {
      kept_.push_back(std::move(p));
    } else {
      Complete(p.ticket.get(), failure, 0);
    }
  }
}

void AuditSink::CheckpointIfDue() {
  // SQLite's own threshold for its automatic checkpoint, which the store turns off.
  constexpr int kCheckpointPages = 1000;
  const int pages = store_->WalPages();
  if (pages < kCheckpointPages) return;
  {
    // Prefer a moment with no record waiting (its commit would wait behind the copy), but
    // never let the log grow past a few times the threshold.
    std::lock_guard<std::mutex> lock(mu_);
    if (!pending_.empty() && pages < 4 * kCheckpointPages) return;
  }
  const Status s = store_->CheckpointWal();
  if (!s.ok()) {
    log::Warn("audit log: write-ahead log not checkpointed", {{"error", s.ToString()}});
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.wal_checkpoints;
}

void AuditSink::WriterLoop() {
  using Clock = std::chrono::steady_clock;
  auto next_sign = Clock::now() + std::chrono::milliseconds(options_.sign_interval_ms);
  auto next_probe = Clock::now() + std::chrono::milliseconds(options_.probe_interval_ms);
  auto next_purge = Clock::now();
  std::vector<Pending> batch;
  for (;;) {
    std::deque<Task> tasks;
    bool stop = false;
    bool healthy = true;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto wake = healthy_ ? next_sign : std::min(next_sign, next_probe);
      if (options_.content_retention || options_.content_cutoff_ms) wake = std::min(wake, next_purge);
      cv_.wait_until(lock, wake, [&] {
        return !pending_.empty() || !tasks_.empty() || stopping_ || (healthy_ && !kept_.empty());
      });
      if (!pending_.empty() && options_.commit_window_ms > 0) {
        // Group commit: let the records of requests ending about now join this transaction.
        const auto window_end = oldest_pending_ + std::chrono::milliseconds(options_.commit_window_ms);
        cv_.wait_until(lock, window_end, [&] { return pending_.size() >= options_.max_batch || stopping_; });
      }
      if (pending_.size() <= options_.max_batch) {
        batch.swap(pending_);
      } else {
        batch.assign(std::make_move_iterator(pending_.begin()),
                     std::make_move_iterator(pending_.begin() + static_cast<std::ptrdiff_t>(options_.max_batch)));
        pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(options_.max_batch));
      }
      tasks.swap(tasks_);
      stop = stopping_ && pending_.empty();
      healthy = healthy_;
    }
    // Kept records go first once the store writes again, and once more at the stop.
    if (!kept_.empty() && (healthy || stop)) {
      batch.insert(batch.begin(), std::make_move_iterator(kept_.begin()), std::make_move_iterator(kept_.end()));
      kept_.clear();
    }
    if (!batch.empty()) CommitBatch(&batch);
    batch.clear();
    for (Task& t : tasks) t(store_.get());
    CheckpointIfDue();

    const auto now = Clock::now();
    if ((options_.content_retention || options_.content_cutoff_ms) && now >= next_purge && !stop) {
      std::optional<int64_t> cutoff = options_.content_retention
                                          ? ContentRetentionCutoffMs(*options_.content_retention, NowMs())
                                          : options_.content_cutoff_ms(NowMs());
      Result<int64_t> purged = cutoff ? store_->PurgeContentBefore(*cutoff) : Result<int64_t>(int64_t(0));
      if (!purged.ok()) {
        log::Warn("audit log: expired content not purged yet", {{"error", purged.status().ToString()}});
      } else if (*purged > 0) {
        log::Info("audit log: expired content purged", {{"records", *purged}});
      }
      next_purge = now + std::chrono::milliseconds(options_.purge_interval_ms);
    }
    if (!healthy && now >= next_probe && !stop) {
      SetHealth(SignHead(/*even_if_unchanged=*/true));
      next_probe = now + std::chrono::milliseconds(options_.probe_interval_ms);
    }
    if (now >= next_sign) {
      const Status s = SignHead(/*even_if_unchanged=*/false);
      if (!s.ok()) SetHealth(s);
      next_sign = now + std::chrono::milliseconds(options_.sign_interval_ms);
    }
    if (stop) {
      if (!kept_.empty()) {
        log::Error("audit log closed with stream end records not written (the store still fails); the next start "
                   "records those streams as interrupted",
                   {{"records", static_cast<int64_t>(kept_.size())}});
        for (Pending& p : kept_) Complete(p.ticket.get(), Status::Unavailable("audit log closed before the store wrote again"), 0);
        kept_.clear();
      }
      // Signed even when unchanged: the head that marks the stop clean must be a new one.
      close_status_ = SignHead(/*even_if_unchanged=*/true, /*clean=*/true);
      if (!close_status_.ok()) log::Error("audit log: final signed head not stored", {{"error", close_status_.ToString()}});
      // Tasks queued after the last swap must not wait forever.
      std::deque<Task> late;
      {
        std::lock_guard<std::mutex> lock(mu_);
        late.swap(tasks_);
      }
      for (Task& t : late) t(store_.get());
      return;
    }
  }
}

Status AuditSink::Close() {
  std::call_once(close_once_, [&] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable()) writer_.join();
    store_.reset();
  });
  return close_status_;
}

}  // namespace kimi::audit
