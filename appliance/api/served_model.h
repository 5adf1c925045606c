// ServedModel: which model version the daemon's embedded engine serves, and the model
// lifecycle (store, admin API) wired to it. docs/model-lifecycle.md ("In the daemon").
//
// Open() opens the model store under the data directory. Start() then loads, on the calling
// thread (the daemon's loader thread, while the server already answers probes):
//   1. the store's active version of `model_id`, re-verified by the store before a byte of it
//      is read; else
//   2. `direct_dir` (config model.dir), verified against the trust store first; else nothing.
// Every later activation or rollback (admin API: a ModelAdmin attached to store()) is a blue-green swap through
// ModelSlot/SlotSwitcher: the store re-verifies the version, its engine is loaded beside the
// running one (a load error leaves the old one serving and is the act's error), the slot
// publishes it and the EmbeddedBackend is re-pointed at it, so new requests get it at once;
// requests in flight keep the old engine (each holds a reference made from the slot's lease)
// and the old engine is unloaded on the activating thread once they have finished.
//
// The served bytes stay the verified bytes: an IntegrityMonitor (models/integrity_monitor.h) re-hashes
// the serving engine's mapped weight files against the version's signed manifest right after
// each load, every `integrity_interval`, on CheckIntegrityNow() (SIGHUP) and when a file is
// written. A mismatch takes the version out of service at once (the slot is emptied, the API
// answers 503, readiness names the file and both digests) and is audited as
// model.integrity_failed. docs/model-lifecycle.md ("Served bytes").
// Public header of api/: other folders include it.
// Owns: the trust store, the slot, the switcher, the integrity monitor and the ModelStore.
// Borrows the EmbeddedBackend, the database and the audit function: they must outlive it.
// Thread safety: Start() runs once, on one thread; Current(), admin() and the listener
// callbacks (the store's acts) may run on any thread. Destroy it only after Start() returned.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "api/embedded_backend.h"
#include "kimi/chat_service.h"
#include "kimi/status.h"
#include "models/integrity_monitor.h"
#include "models/model_slot.h"
#include "models/model_store.h"
#include "models/oms_trust.h"
#include "models/slot_switcher.h"
#include "models/trust_directory.h"

namespace kimi::models {

// What the "model" readiness component reports: serving; not serving on the way somewhere
// (nothing configured yet, verifying, loading); not serving because something failed.
enum class ServingState { kServing, kPending, kFailed };

struct ServedModelOptions {
  std::string model_id;     // the store's model id whose active version is served (model.store_id)
  std::string data_dir;     // the store lives in <data_dir>/models
  std::string trust_store;  // a PEM file or a directory of *.pem; empty: nothing verifies
  // The daemon's trust store, edited through the admin API (borrowed; loaded already). When
  // set, the model store verifies with it as it is at each verification, not with a copy of
  // trust_store loaded once.
  const TrustDirectory* trust_directory = nullptr;
  std::string direct_dir;   // served when the store has no active version; may be empty
  ChatServiceOptions service;
  store::Store* db = nullptr;  // migrated
  AuditFn audit;               // required
  AuditInTransactionFn audit_in_transaction;  // required (model_store.h)
  std::function<Status()> after_commit;       // model_store.h
  // The "model" readiness component: called whenever what is served changes.
  std::function<void(ServingState state, const std::string& detail)> on_state;
  std::chrono::milliseconds drain_timeout = std::chrono::minutes(10);
  // The served-bytes check (model.integrity_interval_s, model.integrity_mib_per_second).
  std::chrono::milliseconds integrity_interval = std::chrono::hours(1);
  uint64_t integrity_bytes_per_second = 0;
  bool integrity_watch_writes = true;
};

// What the engine serves now, for /v1/models and /readyz.
struct ServedVersion {
  std::string digest;         // OMS subject digest, hex
  int64_t version = 0;        // the store's version number; 0 when served from model.dir
  std::string signer;
  std::string origin;         // "store" or the model.dir path
  int64_t since_unix_s = 0;   // when it began serving
  std::string directory;      // the verified directory its engine was loaded from
  std::shared_ptr<const VerifiedManifest> manifest;  // what the served bytes are checked against
};

class ServedModel : private ActivationListener {
 public:
  // Errors: the trust store cannot be read; the store cannot be opened (another process
  // holds it, I/O).
  static Result<std::unique_ptr<ServedModel>> Open(ServedModelOptions options, api::EmbeddedBackend* backend);
  ~ServedModel() override;
  ServedModel(const ServedModel&) = delete;
  ServedModel& operator=(const ServedModel&) = delete;

  // Loads what to serve at start-up (see above). Failures are reported through on_state and
  // the log; the daemon keeps running, without a model, and can still activate one.
  void Start();

  std::optional<ServedVersion> Current() const;
  // Starts a served-bytes check of the serving version now (SIGHUP); returns at once.
  void CheckIntegrityNow();
  ModelStore* store() { return store_.get(); }

 private:
  using Slot = ModelSlot<ChatService>;

  ServedModel(ServedModelOptions options, api::EmbeddedBackend* backend, TrustStore trust);
  Result<std::shared_ptr<ChatService>> LoadVersion(const ActiveVersion& version);
  void StartFromDirectory(const std::string& store_failure);
  // Publishes the start-up engine unless an activation has published one meanwhile.
  void PublishInitial(std::shared_ptr<ChatService> service, ServedVersion version);
  // Points the backend at the slot's active engine (or at nothing) and reports the state.
  void AttachActive();

  // ActivationListener, called by the store under its mutex.
  Status Prepare(const ActiveVersion& next) override;
  void Switch(const std::string& model_id, const std::optional<ActiveVersion>& next) override;
  void Abort(const ActiveVersion& next) override;
  void Deactivate(const std::string& model_id, const Status& why) override;

  // The monitor found `target` changed: empties the slot unless another version serves now.
  void TakeOutOfService(const IntegrityTarget& target, const IntegrityFailure& failure);

  const ServedModelOptions options_;
  api::EmbeddedBackend* const backend_;
  const TrustStore trust_;
  Slot slot_;
  SlotSwitcher<ChatService> switcher_;
  // Serialises publishing into the slot between the store's acts and the start-up load of
  // model.dir, which does not go through the store. Order: the store's mutex, then this.
  std::mutex publish_mu_;
  mutable std::mutex current_mu_;
  std::optional<ServedVersion> current_;   // guarded by current_mu_
  std::optional<ServedVersion> incoming_;  // guarded by current_mu_; set before a publish
  std::string not_serving_reason_;         // guarded by current_mu_; why the slot was emptied
  std::unique_ptr<IntegrityMonitor> monitor_;
  std::unique_ptr<ModelStore> store_;
};

}  // namespace kimi::models
