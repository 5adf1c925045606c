#include "api/served_model.h"

#include <ctime>

#include "api/verified_model.h"
#include "audit/record_builder.h"
#include "models/verified_stage.h"
#include "kimi/log.h"

namespace kimi::models {
namespace {

Actor DaemonActor() {
  Actor actor;
  actor.name = audit::kDaemonActor;
  actor.role = "system";
  actor.source = "local";
  return actor;
}

// The identity the backend reports for requests served through `lease`.
api::ServedVersionId IdentityOf(const ModelSlot<ChatService>::Lease& lease) { return {lease.digest(), lease.version()}; }

int64_t NowUnixSeconds() { return static_cast<int64_t>(std::time(nullptr)); }

std::string Describe(const ServedVersion& v) {
  std::string what = v.version > 0 ? "version " + std::to_string(v.version) + " (" + v.digest.substr(0, 12) + ") from the model store"
                                   : v.digest.substr(0, 12) + " from " + v.origin;
  return what + ", signed by " + v.signer;
}

}  // namespace

Result<std::unique_ptr<ServedModel>> ServedModel::Open(ServedModelOptions options, api::EmbeddedBackend* backend) {
  KIMI_RETURN_IF_ERROR(ValidateModelId(options.model_id).WithContext("model.store_id"));
  TrustStore trust;
  if (!options.trust_store.empty() && options.trust_directory == nullptr) {
    Result<TrustStore> loaded = TrustStore::LoadPath(options.trust_store);
    if (!loaded.ok()) return loaded.status().WithContext("trust store " + options.trust_store);
    trust = std::move(loaded).value();
  }
  std::unique_ptr<ServedModel> served(new ServedModel(std::move(options), backend, std::move(trust)));
  ModelStoreOptions store_options;
  store_options.data_dir = served->options_.data_dir;
  store_options.db = served->options_.db;
  store_options.trust = &served->trust_;
  if (const TrustDirectory* live = served->options_.trust_directory) {
    store_options.current_trust = [live] { return live->Current(); };
  }
  store_options.audit = served->options_.audit;
  store_options.audit_in_transaction = served->options_.audit_in_transaction;
  store_options.after_commit = served->options_.after_commit;
  store_options.listener = served.get();
  KIMI_ASSIGN_OR_RETURN(served->store_, ModelStore::Open(std::move(store_options)));
  return served;
}

ServedModel::ServedModel(ServedModelOptions options, api::EmbeddedBackend* backend, TrustStore trust)
    : options_(std::move(options)),
      backend_(backend),
      trust_(std::move(trust)),
      switcher_(options_.model_id, &slot_, [this](const ActiveVersion& v) { return LoadVersion(v); },
                options_.drain_timeout, [this] { AttachActive(); }) {
  IntegrityMonitorOptions integrity;
  integrity.interval = options_.integrity_interval;
  integrity.pace.bytes_per_second = options_.integrity_bytes_per_second;
  integrity.watch_writes = options_.integrity_watch_writes;
  integrity.on_failure = [this](const IntegrityTarget& target, const IntegrityFailure& failure) {
    TakeOutOfService(target, failure);
  };
  integrity.on_pass = [](const IntegrityTarget& target, const ServedBytesPass& pass) {
    log::Info("served model bytes match the signed manifest", {{"digest", target.digest}, {"bytes", int64_t(pass.bytes)}});
  };
  monitor_ = std::make_unique<IntegrityMonitor>(std::move(integrity));
}

ServedModel::~ServedModel() {
  monitor_->Stop();  // before the engine it reads goes
  backend_->Attach(nullptr);
  Slot::Retired last = slot_.Clear();
  last.WaitDrained(options_.drain_timeout);
}

void ServedModel::CheckIntegrityNow() { monitor_->CheckNow(); }

std::optional<ServedVersion> ServedModel::Current() const {
  std::lock_guard<std::mutex> lock(current_mu_);
  return current_;
}

Result<std::shared_ptr<ChatService>> ServedModel::LoadVersion(const ActiveVersion& version) {
  // The store has just re-verified `version.directory` against the trust store and holds the
  // directory exclusively; the engine reads only the files of the verified manifest.
  log::Info("loading a model version beside the serving one",
            {{"model", version.model_id}, {"digest", version.digest}, {"version", version.version}});
  // The engine opens the verified bytes of the small files, not the directory's names again
  // (models/verified_stage.h): the store re-verified them, but a file swapped since would be read.
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<VerifiedStage> stage,
                        VerifiedStage::Create(*version.manifest, version.directory, store_->staging_dir()));
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<ChatService> service, ChatService::Open(stage->path(), options_.service));
  return std::shared_ptr<ChatService>(std::move(service));
}

void ServedModel::AttachActive() {
  Slot::Lease lease = slot_.Acquire();
  std::optional<ServedVersion> now;
  std::string not_serving;
  {
    std::lock_guard<std::mutex> lock(current_mu_);
    if (lease && incoming_ && incoming_->digest == lease.digest()) current_ = std::move(incoming_);
    else if (!lease) current_.reset();
    incoming_.reset();
    now = current_;
    if (lease) not_serving_reason_.clear();
    not_serving = not_serving_reason_;
  }
  if (!lease) {
    monitor_->Unwatch();
    backend_->Attach(nullptr);
    if (options_.on_state) {
      if (not_serving.empty()) options_.on_state(ServingState::kPending, "no model version is active");
      else options_.on_state(ServingState::kFailed, not_serving);
    }
    return;
  }
  // The backend and every request that copies its pointer share ownership of the lease, so
  // the version drains exactly when the last of them lets go.
  // The version's identity travels with the engine reference, both taken from this one lease,
  // so a request's audit record names the version whose engine served it.
  auto shared_lease = std::make_shared<Slot::Lease>(std::move(lease));
  ChatService* service = shared_lease->get();
  if (now && now->manifest) {
    monitor_->Watch(IntegrityTarget{now->digest, now->directory, now->manifest, service->MappedWeights(), shared_lease});
  } else {
    // Every load path records its manifest; a version without one would serve unchecked.
    log::Error("the served model has no verified manifest to check its bytes against", {{"digest", shared_lease->digest()}});
  }
  backend_->Attach(std::shared_ptr<ChatService>(shared_lease, service), IdentityOf(*shared_lease));
  std::string detail = options_.model_id + ": " + (now ? Describe(*now) : std::string("serving"));
  if (options_.on_state) options_.on_state(ServingState::kServing, detail);
  log::Info("model version serving", {{"model", options_.model_id}, {"digest", now ? now->digest : ""},
                                      {"version", now ? now->version : 0}});
}

Status ServedModel::Prepare(const ActiveVersion& next) { return switcher_.Prepare(next); }

void ServedModel::Switch(const std::string& model_id, const std::optional<ActiveVersion>& next) {
  if (model_id != options_.model_id) return;
  std::lock_guard<std::mutex> publish(publish_mu_);
  if (next) {
    std::lock_guard<std::mutex> lock(current_mu_);
    incoming_ = ServedVersion{next->digest,    next->version,   next->signer, "store", NowUnixSeconds(),
                              next->directory, next->manifest};
  }
  switcher_.Switch(model_id, next);
}

void ServedModel::Abort(const ActiveVersion& next) { switcher_.Abort(next); }

void ServedModel::Deactivate(const std::string& model_id, const Status& why) {
  if (model_id == options_.model_id) {
    std::lock_guard<std::mutex> lock(current_mu_);
    not_serving_reason_ = "not served: " + why.ToString();
  }
  Switch(model_id, std::nullopt);
}

void ServedModel::TakeOutOfService(const IntegrityTarget& target, const IntegrityFailure& failure) {
  const std::string reason = "taken out of service: " + target.digest.substr(0, 12) + " from " + target.directory +
                             ": " + failure.message;
  {
    std::lock_guard<std::mutex> publish(publish_mu_);
    Slot::Lease lease = slot_.Acquire();
    if (!lease || lease.digest() != target.digest) return;  // another version serves by now
    lease.Release();
    {
      std::lock_guard<std::mutex> lock(current_mu_);
      not_serving_reason_ = reason;
    }
    // Dropped at once: requests in flight finish on the old engine and the last one unloads it.
    Slot::Retired retired = slot_.Clear();
    AttachActive();
  }
  log::Error("a served model file no longer matches its signature; the model is out of service",
             {{"model", options_.model_id}, {"digest", target.digest}, {"file", failure.file},
              {"expected_sha256", failure.expected_sha256}, {"actual_sha256", failure.actual_sha256}});
  audit::AuditRecord record =
      ActRecord("model.integrity_failed", options_.model_id, DaemonActor(), Status::Corruption(failure.message),
                "file " + failure.file + " of " + target.directory + ": signed sha256:" + failure.expected_sha256 +
                    ", served sha256:" + (failure.actual_sha256.empty() ? "unreadable" : failure.actual_sha256) +
                    "; taken out of service")
          .Model(options_.model_id, target.digest)
          .Build();
  if (Status recorded = options_.audit(std::move(record)); !recorded.ok()) {
    log::Error("cannot record the integrity failure in the audit log", {{"error", recorded.ToString()}});
  }
}

void ServedModel::Start() {
  Result<ActiveVersion> active = store_->LoadableActive(options_.model_id, DaemonActor());
  if (active.ok()) {
    if (options_.on_state) options_.on_state(ServingState::kPending, "loading version " + std::to_string(active->version) + " from the model store");
    Result<std::shared_ptr<ChatService>> service = LoadVersion(*active);
    if (!service.ok()) {
      log::Error("the store's active model version cannot be loaded",
                 {{"model", options_.model_id}, {"digest", active->digest}, {"error", service.status().ToString()}});
      if (options_.on_state) options_.on_state(ServingState::kFailed, "loading the active version failed: " + service.status().ToString());
      return;
    }
    PublishInitial(std::move(service).value(),
                   ServedVersion{active->digest, active->version, active->signer, "store", NowUnixSeconds(),
                                 active->directory, active->manifest});
    return;
  }
  // Why the store's version is not served, kept for readiness: "no model configured" would
  // hide a version that failed its re-verification from the operator.
  std::string store_failure;
  if (active.status().code() != Status::Code::kNotFound) {
    log::Error("the store's active model version is not served",
               {{"model", options_.model_id}, {"error", active.status().ToString()}});
    store_failure = "the store's active version of " + options_.model_id + " is not served: " + active.status().ToString();
  }
  StartFromDirectory(store_failure);
}

void ServedModel::PublishInitial(std::shared_ptr<ChatService> service, ServedVersion version) {
  // Start() does not run under the store's mutex: publish_mu_ orders it against an activation.
  std::lock_guard<std::mutex> publish(publish_mu_);
  if (slot_.generation() != 0) {
    log::Info("start-up model not served: a version was activated while it loaded", {{"digest", version.digest}});
    return;
  }
  std::string digest = version.digest;
  const int64_t number = version.version;
  {
    std::lock_guard<std::mutex> lock(current_mu_);
    incoming_ = std::move(version);
  }
  Slot::Retired none = slot_.Publish(std::move(service), std::move(digest), number);
  AttachActive();
}

void ServedModel::StartFromDirectory(const std::string& store_failure) {
  if (options_.direct_dir.empty()) {
    if (options_.on_state) {
      // Neither a servable store version nor model.dir.
      if (store_failure.empty()) options_.on_state(ServingState::kPending, "not loaded: no model configured");
      else options_.on_state(ServingState::kFailed, "not loaded: " + store_failure);
    }
    return;
  }
  log::Info("verifying the model", {{"dir", options_.direct_dir}, {"trust_store", options_.trust_store}});
  if (options_.on_state) options_.on_state(ServingState::kPending, "verifying " + options_.direct_dir);
  api::VerifiedModelOptions load;
  load.dir = options_.direct_dir;
  load.trust_store = options_.trust_store;
  load.service = options_.service;
  load.stage_parent = store_ != nullptr ? store_->staging_dir() : std::string();
  Result<api::VerifiedModel> loaded = api::LoadVerifiedModel(load);
  if (!loaded.ok()) {
    // Readiness first: whoever reads the log line then finds /readyz saying the same.
    if (options_.on_state) {
      options_.on_state(ServingState::kFailed, (store_failure.empty() ? "" : store_failure + "; model.dir: ") + loaded.status().ToString());
    }
    log::Error("the model is not served", {{"dir", options_.direct_dir}, {"error", loaded.status().ToString()}});
    return;
  }
  log::Info("model verified and loaded", {{"dir", options_.direct_dir}, {"signer", loaded->signer},
                                          {"digest", loaded->subject_digest}});
  PublishInitial(std::move(loaded->service),
                 ServedVersion{loaded->subject_digest, 0, loaded->signer, options_.direct_dir, NowUnixSeconds(),
                               options_.direct_dir, std::move(loaded->manifest)});
}

}  // namespace kimi::models
