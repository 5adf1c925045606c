// ModelStore: the appliance's installed model versions and which one is active, in the data
// directory. docs/model-lifecycle.md describes the layout, the states and every flow.
//
//   <data_dir>/models/<model id>/<version digest>/   a verified copy, never written again
//   <data_dir>/models/.staging/                      imports and removals in progress
//   <data_dir>/models/.lock                          flock()ed by the one process that owns the store;
//                                                    holds its pid, for the message others get
//   <data_dir>/appliance.db                          model_versions, model_activations
//
// A version is named by its OMS subject digest. Import copies from a mounted medium into
// staging, hashing every byte as it writes it (one read of the medium), verifies the copy
// (never the source) against the trust store with those digests, and renames it into
// place; only then is the row written, so a failure or a crash leaves no version (Open()
// sweeps staging and any directory without its row). Activation and rollback re-verify the
// version's bytes first (tampering after import is detected and the version marked failed),
// ask the ActivationListener to load it beside the running one, commit, then let the listener
// switch traffic. Version numbers grow per model id; activating an older number than the
// active one is refused unless forced (rollback is the explicit way back). Each act and each
// refusal produces one audit record carrying the model digest.
//
// Before an import copies a byte it checks the free space of the store's filesystem against
// the medium's size plus a margin, and refuses (FailedPrecondition naming both figures) when
// it does not fit, so a full disk never leaves a half-written copy.
//
// Two ways to open it (docs/architecture.md, "Who owns the model store"): as the owner (the
// daemon for its whole life, or kimictl for one act when the daemon is not running), which
// takes the lock and may change the store; or as a reader, which takes no lock and may only
// list and check versions, so `kimictl model list` and `verify-installed` work beside the
// running daemon.
// Public header of models/: other folders include it.
// Owns: the models directory (exclusively, through the lock file, when opened as owner) and its rows. Borrows the
// store::Store, the trust store, the audit function and the listener; they must outlive it.
// Thread safety: every public method may be called from any thread. Acts that change state
// (import's final step, activate, rollback, remove, verify) are serialised on one mutex;
// import's copy and verification run outside it, so a long import does not block the others.
// Listener callbacks run on the thread of the act, under that mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/record_builder.h"
#include "kimi/status.h"
#include "models/model_versions.h"
#include "models/oms_hasher.h"
#include "models/oms_trust.h"
#include "models/oms_verifier.h"
#include "store/store.h"

namespace kimi::models {

// Who asks, for the audit record and the versions table.
struct Actor {
  std::string name = "operator";  // user or key id
  std::string role = "admin";
  std::string source = "local";   // client address, or "kimictl"
  std::string request_id;
  std::string client_request_id;  // the X-Request-Id the client sent; "" when none
};

// The audit record of one act on models or on the trust store: `actor` did `action` to
// `target` (audit::RecordBuilder::ModelEvent: the outcome and detail follow `outcome`).
audit::RecordBuilder ActRecord(std::string_view action, std::string_view target, const Actor& actor,
                               const Status& outcome, std::string detail);

// What the serving side needs to load a version. `manifest` is the verification that has
// just been run on `directory`: the loader must read only the files it lists.
struct ActiveVersion {
  std::string model_id;
  std::string digest;     // OMS subject digest, hex
  int64_t version = 0;
  std::string directory;  // absolute path of the verified copy
  std::string signer;
  std::shared_ptr<const VerifiedManifest> manifest;
};

// The serving side's part in blue-green activation (slot_switcher.h adapts a ModelSlot).
class ActivationListener {
 public:
  virtual ~ActivationListener() = default;
  // Load and warm `next` beside the running version. An error aborts the act; nothing changes.
  virtual Status Prepare(const ActiveVersion& next) = 0;
  // The database now names `next` active (nullopt: nothing is active for `model_id`, after the
  // active version failed re-verification): switch new requests and drain the old version.
  virtual void Switch(const std::string& model_id, const std::optional<ActiveVersion>& next) = 0;
  // The active version of `model_id` failed re-verification (`why` names the file): nothing is
  // active now. The default switches to nothing; a serving side that reports its state keeps
  // the reason, so its readiness says why nothing serves.
  virtual void Deactivate(const std::string& model_id, const Status& why) {
    (void)why;
    Switch(model_id, std::nullopt);
  }
  // Prepare() succeeded but the act failed afterwards: drop what Prepare() loaded.
  virtual void Abort(const ActiveVersion& next) = 0;
};

// Writes one audit record; the act fails when it returns an error (fail closed). The daemon
// passes AuditSink::Record + Ticket::WaitCommitted. Used for refusals, which change nothing.
using AuditFn = std::function<Status(audit::AuditRecord)>;
// Writes an act's audit record inside the act's transaction (db): the daemon and kimictl pass
// auth::InsertAuditRecord, the outbox, so that the act and its record commit together or not at
// all. An error rolls the act back.
using AuditInTransactionFn = std::function<Status(sqlite3* db, audit::AuditRecord)>;

struct ImportProgress {
  std::string_view phase;  // "copying", then "verifying"
  HashProgress bytes;
};
using ImportProgressFn = std::function<void(const ImportProgress&)>;

struct ImportRequest {
  std::string model_id;  // [a-z0-9][a-z0-9._-]*, at most 64 characters
  std::string source;    // the model directory on the mounted medium (model.sig inside it)
  std::vector<std::string> extra_ignore_paths;
  unsigned threads = 0;  // hashing threads; 0: one per core
  ImportProgressFn progress;
  // When set and true, the copy stops (Cancelled) and the import leaves nothing; the
  // verification pass, once started, runs to its end.
  const std::atomic<bool>* cancel = nullptr;
  // Test hook for crash tests: called with "copied", "verified" and "renamed" as import passes
  // each step. Empty in production.
  std::function<void(std::string_view step)> on_step;
};

// Bytes available to an unprivileged writer on the filesystem that holds `path`.
using FreeBytesFn = std::function<Result<uint64_t>(const std::string& path)>;
// statvfs(): f_bavail * f_frsize.
Result<uint64_t> FilesystemFreeBytes(const std::string& path);

// The pid (as its lock file says) of the process that owns the model store of `data_dir`
// now, normally the running kimi-appliance; nullopt when none does. Finds out by taking and
// at once releasing the lock; creates nothing. For commands that must not act beside the
// daemon on state it holds in memory.
std::optional<std::string> ModelStoreOwner(const std::string& data_dir);

enum class StoreAccess {
  kOwner,   // takes the lock; every method
  kReader,  // no lock, no crash recovery; List(), CheckInstalled() and VersionDirectory() only
};

struct ModelStoreOptions {
  std::string data_dir;
  StoreAccess access = StoreAccess::kOwner;
  store::Store* db = nullptr;            // migrated with store::AllMigrations()
  const TrustStore* trust = nullptr;
  // When set, each verification uses the store it returns instead of `trust` (the daemon's
  // trust store, which the admin API edits: trust_directory.h).
  std::function<std::shared_ptr<const TrustStore>()> current_trust;
  AuditFn audit;                         // required
  AuditInTransactionFn audit_in_transaction;  // required
  // After an act commits: moves its record from the outbox into the log and waits (the daemon:
  // AuditOutbox::Drain). A failure leaves the record queued, and the act stands.
  std::function<Status()> after_commit;
  ActivationListener* listener = nullptr;  // null: nothing is loaded (kimictl)
  unsigned verify_threads = 0;           // for re-verification; 0: one per core
  FreeBytesFn free_bytes = FilesystemFreeBytes;  // tests inject a small figure
  // Room an import must leave free besides the model's bytes (the database and the audit log
  // live on the same filesystem): this floor, or 1% of the model when that is more.
  uint64_t import_margin_bytes = 256ull << 20;
};

class ModelStore {
 public:
  // As owner: takes the lock file, sweeps what a crash left in staging, and reconciles
  // directories with rows. Unavailable exactly when another process owns the store (the
  // message names its pid and the admin API). As reader: opens without either.
  static Result<std::unique_ptr<ModelStore>> Open(ModelStoreOptions options);
  ~ModelStore();
  ModelStore(const ModelStore&) = delete;
  ModelStore& operator=(const ModelStore&) = delete;

  Result<ModelVersion> Import(const ImportRequest& request, const Actor& actor);
  // Whether the store's filesystem has room for a copy of `source` (its regular files' bytes
  // plus the margin); a refusal (FailedPrecondition naming the bytes needed and available)
  // is audited as a refused model.import. Import() runs it first; the admin API also runs it
  // before it starts an import job, to refuse at once.
  Status CheckImportSpace(const ImportRequest& request, const Actor& actor) const;
  // Re-verifies, then makes the version active. A lower version number than the active one's
  // is a downgrade: FailedPrecondition unless `force`.
  Result<ModelVersion> Activate(std::string_view model_id, std::string_view digest, const Actor& actor,
                                bool force = false);
  // Makes the version that was active before the current one active again (re-verified).
  Result<ModelVersion> Rollback(std::string_view model_id, const Actor& actor);
  // Deletes a version's files; refused for the active version. The row stays, as 'removed'.
  Status Remove(std::string_view model_id, std::string_view digest, const Actor& actor);
  // Re-verifies an installed version's bytes against the trust store. A failure marks it
  // 'failed' (and, when it was active, deactivates it) and is returned.
  Result<ModelVersion> VerifyInstalled(std::string_view model_id, std::string_view digest, const Actor& actor);
  // Re-verifies an installed version's bytes and reports, changing nothing and recording
  // nothing: what a reader (kimictl beside the running daemon) can do.
  Result<ModelVersion> CheckInstalled(std::string_view model_id, std::string_view digest) const;

  Result<std::vector<ModelVersion>> List() const;  // removed rows included
  // Integration hook: the active version of `model_id`, re-verified now, ready to load (the
  // daemon calls it at start-up). NotFound when none is active.
  Result<ActiveVersion> LoadableActive(std::string_view model_id, const Actor& actor);
  // Counts changes of any model's active version; the serving side may poll it instead of
  // using a listener.
  uint64_t activation_generation() const { return generation_.load(); }

  std::string VersionDirectory(std::string_view model_id, std::string_view digest) const;
  // Where imports and verified stages (verified_stage.h) are made; emptied at every Open.
  const std::string& staging_dir() const { return staging_dir_; }
  const std::string& models_dir() const { return models_dir_; }

 private:
  ModelStore(ModelStoreOptions options, std::string models_dir, int lock_fd);
  Status Recover();
  // FailedPrecondition for a store opened as reader.
  Status RequireOwner(std::string_view act) const;
  // The trust store to verify with now (options_.current_trust, else options_.trust).
  std::shared_ptr<const TrustStore> Trust() const;
  // Verifies a version directory; the manifest's subject must equal `digest`.
  Result<VerifiedManifest> VerifyDirectory(const std::string& dir, std::string_view digest,
                                           const HashOptions& hashing) const;
  // Re-verification shared by activate, rollback, verify and LoadableActive; marks the
  // version failed (and deactivates it) on a mismatch. Precondition: mu_ held.
  Result<ActiveVersion> ReverifyLocked(const ModelVersion& row, const Actor& actor, std::string_view act);
  // The switch shared by activate and rollback. Precondition: mu_ held.
  Result<ModelVersion> MakeActiveLocked(const ModelVersion& target, std::string_view kind, const Actor& actor);
  Result<ModelVersion> FindRow(std::string_view model_id, std::string_view digest) const;
  // A refusal's record, written straight to the log (nothing in appliance.db changed).
  Status Audit(std::string_view action, std::string_view model_id, std::string_view digest, const Actor& actor,
               const Status& outcome, std::string detail) const;
  // An act's record, written inside the act's transaction `db`.
  Status AuditIn(sqlite3* db, std::string_view action, std::string_view model_id, std::string_view digest,
                 const Actor& actor, const Status& outcome, std::string detail) const;
  // Runs `change` (which calls AuditIn) in one transaction, then moves its record into the log.
  Status WriteAudited(const std::function<Status(sqlite3*)>& change) const;

  const ModelStoreOptions options_;
  const std::string models_dir_;
  const std::string staging_dir_;
  const int lock_fd_;  // -1 for a reader
  std::mutex mu_;  // serialises acts that change state
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> staging_counter_{0};
};

// Model ids name directories: [a-z0-9][a-z0-9._-]*, at most 64 characters.
Status ValidateModelId(std::string_view model_id);

}  // namespace kimi::models
