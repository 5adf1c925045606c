#include "models/model_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "kimi/log.h"
#include "kimi/regular_file.h"
#include "kimi/utc_time.h"
#include "models/model_copy.h"
#include "models/oms_bundle.h"
#include "models/oms_statement.h"

namespace kimi::models {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kStaging = ".staging";
constexpr std::string_view kLockFile = ".lock";
constexpr std::string_view kSignatureFile = "model.sig";

std::string Short(std::string_view digest) { return std::string(digest.substr(0, 12)); }

std::string Describe(const ModelVersion& v) {
  return "version " + std::to_string(v.version) + " of " + v.model_id + " (" + Short(v.digest) + ")";
}

std::string NowText() { return FormatUtcMillis(UnixMillisNow()); }

// Removes a staging directory when the import that made it does not get to rename it.
class StagingGuard {
 public:
  explicit StagingGuard(std::string path) : path_(std::move(path)) {}
  ~StagingGuard() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (ec) log::Warn("cannot remove staging directory", {{"path", path_}, {"error", ec.message()}});
  }
  StagingGuard(const StagingGuard&) = delete;
  StagingGuard& operator=(const StagingGuard&) = delete;
  void Dismiss() { path_.clear(); }

 private:
  std::string path_;
};

// Deletes what the manifest does not name (ignored paths such as .git) so the store holds
// only signed bytes and the signature.
Status PruneUnsigned(const std::string& dir, const VerifiedManifest& manifest) {
  std::vector<std::string> listed = manifest.files();
  std::set<std::string> keep(listed.begin(), listed.end());
  keep.insert(std::string(kSignatureFile));
  std::vector<fs::path> doomed, dirs;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec)) {
      dirs.push_back(it->path());
    } else if (!keep.count(fs::relative(it->path(), dir).generic_string())) {
      doomed.push_back(it->path());
    }
  }
  if (ec) return Status::IOError("cannot list " + dir + ": " + ec.message());
  for (const fs::path& p : doomed) {
    if (!fs::remove(p, ec)) return Status::IOError("cannot remove " + p.string() + ": " + ec.message());
  }
  // Deepest first; a directory that still holds model files is not empty and stays.
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) fs::remove(*it, ec);
  return Status::OK();
}

// The shard size the source's signature names, read without checking the signature: it only
// chooses how the copy cuts files into hashed ranges. Verification then trusts nothing of it
// and hashes again any range the copy did not cut the way the verified statement says.
// The medium is not the appliance's: a model.sig that is a FIFO (whose open() would wait for
// a writer, the import job with it) or a link is not read here, and the copy then refuses it.
uint64_t UnverifiedShardSize(const std::string& source) {
  Result<std::string> text = ReadRegularFile((fs::path(source) / kSignatureFile).string(), kMaxBundleBytes);
  if (!text.ok()) return 0;
  Result<OmsBundle> bundle = ParseBundle(*text);
  if (!bundle.ok()) return 0;
  Result<SignedStatement> statement = ParseStatement(bundle->payload);
  if (!statement.ok() || statement->method != SerializationMethod::kShards) return 0;
  return statement->shard_size;
}

// The bytes of the regular files under `source`: what a copy of it writes. Nothing when the
// source cannot be listed; the copy then reports what is wrong with it.
uint64_t SourceBytes(const std::string& source) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(source, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) total += it->file_size(ec);
  }
  return total;
}

// The pid the owner wrote into the lock file, or "unknown".
std::string LockHolder(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "unknown" : text;
}

}  // namespace

Result<uint64_t> FilesystemFreeBytes(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return Status::IOError("statvfs " + path + ": " + std::strerror(errno));
  return static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
}

Status ValidateModelId(std::string_view id) {
  bool ok = !id.empty() && id.size() <= 64;
  for (size_t i = 0; ok && i < id.size(); ++i) {
    char c = id[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    ok = alnum || (i > 0 && (c == '.' || c == '_' || c == '-'));
  }
  if (!ok) {
    return Status::InvalidArgument("model id \"" + std::string(id) +
                                   "\" must be 1-64 characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit");
  }
  return Status::OK();
}

std::optional<std::string> ModelStoreOwner(const std::string& data_dir) {
  std::string lock_path = (fs::path(data_dir) / "models" / std::string(kLockFile)).string();
  // Neither a link nor a FIFO planted in the data directory holds kimictl here.
  int fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;  // no store yet, so no owner
  std::optional<std::string> owner;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) owner = LockHolder(fd);
  } else {
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
  return owner;
}

Result<std::unique_ptr<ModelStore>> ModelStore::Open(ModelStoreOptions options) {
  if (options.db == nullptr || (options.trust == nullptr && !options.current_trust) || !options.audit) {
    return Status::InvalidArgument("model store needs a database, a trust store and an audit function");
  }
  std::string models_dir = (fs::path(options.data_dir) / "models").string();
  if (options.access == StoreAccess::kReader) {
    // Reads only: no lock and no recovery, which would sweep an owner's import in progress.
    return std::unique_ptr<ModelStore>(new ModelStore(std::move(options), models_dir, -1));
  }
  std::error_code ec;
  fs::create_directories(models_dir, ec);
  if (ec) return Status::IOError("cannot create " + models_dir + ": " + ec.message());
  std::string lock_path = models_dir + "/" + std::string(kLockFile);
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd < 0) return Status::IOError("cannot open " + lock_path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = LockHolder(fd);
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::Unavailable("the model store " + models_dir + " is owned by another process (pid " + holder +
                                        ", normally kimi-appliance); while it runs, change models through its admin "
                                        "API (/admin/v1/models) or the console's Models page");
    }
    return Status::IOError("cannot lock " + lock_path + ": " + std::strerror(err));
  }
  // For the message another process gets while this one owns the store.
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    log::Warn("cannot write the pid into the model store's lock file", {{"path", lock_path}});
  }
  std::unique_ptr<ModelStore> store(new ModelStore(std::move(options), models_dir, fd));
  KIMI_RETURN_IF_ERROR(store->Recover());
  return store;
}

ModelStore::ModelStore(ModelStoreOptions options, std::string models_dir, int lock_fd)
    : options_(std::move(options)),
      models_dir_(std::move(models_dir)),
      staging_dir_(models_dir_ + "/" + std::string(kStaging)),
      lock_fd_(lock_fd) {}

ModelStore::~ModelStore() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

Status ModelStore::RequireOwner(std::string_view act) const {
  if (options_.access == StoreAccess::kOwner) return Status::OK();
  return Status::FailedPrecondition("the model store " + models_dir_ + " is open for reading only; cannot " +
                                    std::string(act));
}

std::string ModelStore::VersionDirectory(std::string_view model_id, std::string_view digest) const {
  return models_dir_ + "/" + std::string(model_id) + "/" + std::string(digest);
}

Status ModelStore::Recover() {
  std::error_code ec;
  fs::remove_all(staging_dir_, ec);
  if (ec) return Status::IOError("cannot clear " + staging_dir_ + ": " + ec.message());
  fs::create_directories(staging_dir_, ec);
  if (ec) return Status::IOError("cannot create " + staging_dir_ + ": " + ec.message());

  KIMI_ASSIGN_OR_RETURN(std::vector<ModelVersion> rows, List());
  std::set<std::pair<std::string, std::string>> live;
  for (const ModelVersion& v : rows) {
    if (v.state != VersionState::kRemoved) live.insert({v.model_id, v.digest});
  }
  // A directory without its row was renamed into place by an import that did not commit.
  for (const auto& model : fs::directory_iterator(models_dir_, ec)) {
    std::string id = model.path().filename().string();
    if (id.starts_with(".") || !model.is_directory()) continue;
    for (const auto& version : fs::directory_iterator(model.path(), ec)) {
      std::string digest = version.path().filename().string();
      if (live.count({id, digest})) continue;
      log::Warn("removing a model directory with no version row (an interrupted import or removal)",
                {{"path", version.path().string()}});
      fs::remove_all(version.path(), ec);
    }
  }
  // A row whose directory is gone cannot be loaded.
  for (const ModelVersion& v : rows) {
    if (v.state == VersionState::kRemoved || v.state == VersionState::kFailed) continue;
    if (fs::exists(VersionDirectory(v.model_id, v.digest), ec)) continue;
    KIMI_RETURN_IF_ERROR(options_.db->Write([&](sqlite3* db) {
      return versions::SetState(db, v.model_id, v.digest, VersionState::kFailed, "directory missing");
    }));
    log::Error("model version directory missing", {{"model", v.model_id}, {"digest", v.digest}});
  }
  return Status::OK();
}

audit::RecordBuilder ActRecord(std::string_view action, std::string_view target, const Actor& actor,
                               const Status& outcome, std::string detail) {
  return audit::RecordBuilder::ModelEvent(audit::Actor{actor.name, actor.role, actor.source, actor.request_id, actor.client_request_id},
                                          action, target, outcome, std::move(detail));
}

Status ModelStore::AuditIn(sqlite3* db, std::string_view action, std::string_view model_id, std::string_view digest,
                           const Actor& actor, const Status& outcome, std::string detail) const {
  Status s = options_.audit_in_transaction(db, ActRecord(action, model_id, actor, outcome, std::move(detail))
                                                   .Model(std::string(model_id), std::string(digest))
                                                   .Build());
  if (!s.ok()) return Status::Unavailable("audit record for " + std::string(action) + " failed: " + s.message());
  return Status::OK();
}

Status ModelStore::WriteAudited(const std::function<Status(sqlite3*)>& change) const {
  KIMI_RETURN_IF_ERROR(options_.db->Write(change));
  if (options_.after_commit) {
    if (Status moved = options_.after_commit(); !moved.ok()) {
      log::Warn("model act committed; its audit record waits in the outbox", {{"error", moved.ToString()}});
    }
  }
  return Status::OK();
}

Status ModelStore::Audit(std::string_view action, std::string_view model_id, std::string_view digest,
                         const Actor& actor, const Status& outcome, std::string detail) const {
  Status s = options_.audit(ActRecord(action, model_id, actor, outcome, std::move(detail))
                                .Model(std::string(model_id), std::string(digest))
                                .Build());
  if (!s.ok()) return Status::Unavailable("audit record for " + std::string(action) + " failed: " + s.message());
  return Status::OK();
}

std::shared_ptr<const TrustStore> ModelStore::Trust() const {
  if (options_.current_trust) return options_.current_trust();
  return std::shared_ptr<const TrustStore>(std::shared_ptr<const TrustStore>(), options_.trust);
}

Result<std::vector<ModelVersion>> ModelStore::List() const {
  std::vector<ModelVersion> out;
  KIMI_RETURN_IF_ERROR(options_.db->Read([&](sqlite3* db) {
    KIMI_ASSIGN_OR_RETURN(out, versions::List(db));
    return Status::OK();
  }));
  return out;
}

Result<ModelVersion> ModelStore::FindRow(std::string_view model_id, std::string_view digest) const {
  std::optional<ModelVersion> row;
  KIMI_RETURN_IF_ERROR(options_.db->Read([&](sqlite3* db) {
    KIMI_ASSIGN_OR_RETURN(row, versions::Find(db, model_id, digest));
    return Status::OK();
  }));
  if (!row || row->state == VersionState::kRemoved) {
    return Status::NotFound("no installed version " + std::string(digest) + " of model " + std::string(model_id));
  }
  return *row;
}

Result<VerifiedManifest> ModelStore::VerifyDirectory(const std::string& dir, std::string_view digest,
                                                     const HashOptions& hashing) const {
  VerifyRequest request;
  request.model_path = dir;
  request.hashing = hashing;
  KIMI_ASSIGN_OR_RETURN(VerifiedManifest manifest, ModelVerifier::Verify(request, *Trust()));
  if (manifest.subject_digest_hex() != digest) {
    return Status::Corruption("the signature in " + dir + " names model " + manifest.subject_digest_hex() +
                              ", not this version");
  }
  return manifest;
}

Status ModelStore::CheckImportSpace(const ImportRequest& request, const Actor& actor) const {
  const uint64_t model_bytes = SourceBytes(request.source);
  const uint64_t margin = std::max<uint64_t>(options_.import_margin_bytes, model_bytes / 100);
  const uint64_t needed = model_bytes + margin;
  Result<uint64_t> available = options_.free_bytes(models_dir_);
  if (!available.ok()) return available.status().WithContext("checking the free space for an import");
  if (*available >= needed) return Status::OK();
  Status refused = Status::FailedPrecondition(
      "not enough free space in " + models_dir_ + " to import " + request.source + ": needs " + std::to_string(needed) +
      " bytes (" + std::to_string(model_bytes) + " of model files and a margin of " + std::to_string(margin) + "), " +
      std::to_string(*available) + " bytes available");
  Status audited = Audit("model.import", request.model_id, "", actor, refused, "from " + request.source);
  return audited.ok() ? refused : audited;
}

Result<ModelVersion> ModelStore::Import(const ImportRequest& request, const Actor& actor) {
  KIMI_RETURN_IF_ERROR(RequireOwner("import"));
  KIMI_RETURN_IF_ERROR(ValidateModelId(request.model_id));
  // Before the first byte is written: a copy that cannot fit is never started.
  KIMI_RETURN_IF_ERROR(CheckImportSpace(request, actor));
  auto refuse = [&](const Status& s, std::string_view digest) -> Status {
    Status audited = Audit("model.import", request.model_id, digest, actor, s, "from " + request.source);
    return audited.ok() ? s : audited;
  };
  auto step = [&](std::string_view name) {
    if (request.on_step) request.on_step(name);
  };

  std::string staging = staging_dir_ + "/import-" + std::to_string(::getpid()) + "-" +
                        std::to_string(staging_counter_.fetch_add(1));
  StagingGuard guard(staging);
  // One read of the medium: the copy hashes what it writes, and verification uses those
  // digests instead of reading the copy again.
  CopyOptions copy;
  copy.cancel = request.cancel;
  copy.threads = request.threads;
  copy.shard_size = UnverifiedShardSize(request.source);
  if (request.progress) copy.progress = [&](const HashProgress& p) { request.progress({"copying", p}); };
  Result<CopyStats> copied = CopyModelTree(request.source, staging, copy);
  if (!copied.ok()) return refuse(copied.status().WithContext("copying " + request.source), "");
  step("copied");

  // The copy is what will be loaded, so the copy is what is verified.
  VerifyRequest verify;
  verify.model_path = staging;
  verify.extra_ignore_paths = request.extra_ignore_paths;
  verify.hashing.threads = request.threads;
  verify.known_digests = &copied->digests;
  if (request.progress) verify.hashing.progress = [&](const HashProgress& p) { request.progress({"verifying", p}); };
  Result<VerifiedManifest> manifest = ModelVerifier::Verify(verify, *Trust());
  if (!manifest.ok()) return refuse(manifest.status().WithContext("verifying the copy of " + request.source), "");
  const std::string digest = manifest->subject_digest_hex();
  Status pruned = PruneUnsigned(staging, *manifest);
  if (!pruned.ok()) return refuse(pruned, digest);
  step("verified");

  std::lock_guard<std::mutex> lock(mu_);
  std::optional<ModelVersion> existing;
  KIMI_RETURN_IF_ERROR(options_.db->Read([&](sqlite3* db) {
    KIMI_ASSIGN_OR_RETURN(existing, versions::Find(db, request.model_id, digest));
    return Status::OK();
  }));
  if (existing && existing->state != VersionState::kRemoved) {
    return refuse(Status::AlreadyExists(Describe(*existing) + " is already installed (state " +
                                        std::string(VersionStateName(existing->state)) + ")"),
                  digest);
  }
  std::string parent = models_dir_ + "/" + request.model_id;
  std::string target = VersionDirectory(request.model_id, digest);
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status::IOError("cannot create " + parent + ": " + ec.message());
  if (::rename(staging.c_str(), target.c_str()) != 0) {
    return Status::IOError("cannot move the verified copy to " + target + ": " + std::strerror(errno));
  }
  guard.Dismiss();
  StagingGuard undo(target);  // until the row is committed, the directory is not a version
  KIMI_RETURN_IF_ERROR(SyncDirectory(parent));
  step("renamed");

  ModelVersion row;
  row.model_id = request.model_id;
  row.digest = digest;
  row.state = VersionState::kVerified;
  row.signer = manifest->signer().description;
  row.source = request.source;
  row.files = static_cast<int64_t>(manifest->files().size());  // signed files, as kept
  row.bytes = static_cast<int64_t>(manifest->total_bytes());
  row.imported_by = actor.name;
  row.imported_at = row.verified_at = NowText();
  // The audit record commits with the row's transaction (the outbox): an act is never without its
  // record, nor a record without its act.
  Status written = WriteAudited([&](sqlite3* db) {
    KIMI_ASSIGN_OR_RETURN(int64_t max_version, versions::MaxVersion(db, row.model_id));
    row.version = max_version + 1;
    KIMI_RETURN_IF_ERROR(versions::Put(db, row));
    return AuditIn(db, "model.import", row.model_id, digest, actor, Status::OK(),
                 "version " + std::to_string(row.version) + " from " + request.source + ", " + std::to_string(row.files) +
                     " files, " + std::to_string(row.bytes) + " bytes, signer " + row.signer);
  });
  if (!written.ok()) return written;
  undo.Dismiss();
  log::Info("model version imported", {{"model", row.model_id}, {"digest", digest}, {"version", row.version}});
  return row;
}

Result<ActiveVersion> ModelStore::ReverifyLocked(const ModelVersion& row, const Actor& actor, std::string_view act) {
  std::string dir = VersionDirectory(row.model_id, row.digest);
  HashOptions hashing;
  hashing.threads = options_.verify_threads;
  Result<VerifiedManifest> manifest = VerifyDirectory(dir, row.digest, hashing);
  if (!manifest.ok()) {
    Status failure = manifest.status().WithContext(Describe(row) + " failed re-verification");
    Status marked = WriteAudited([&](sqlite3* db) {
      KIMI_RETURN_IF_ERROR(versions::SetState(db, row.model_id, row.digest, VersionState::kFailed, failure.message()));
      return AuditIn(db, "model.verify", row.model_id, row.digest, actor, manifest.status(), "re-verification at " + std::string(act));
    });
    if (!marked.ok()) log::Error("cannot record a failed re-verification", {{"error", marked.ToString()}});
    if (marked.ok() && row.state == VersionState::kActive) {
      generation_.fetch_add(1);
      if (options_.listener) options_.listener->Deactivate(row.model_id, failure);
    }
    return failure;
  }
  ActiveVersion next;
  next.model_id = row.model_id;
  next.digest = row.digest;
  next.version = row.version;
  next.directory = dir;
  next.signer = manifest->signer().description;
  next.manifest = std::make_shared<const VerifiedManifest>(std::move(manifest).value());
  return next;
}

Result<ModelVersion> ModelStore::MakeActiveLocked(const ModelVersion& target, std::string_view kind,
                                                  const Actor& actor) {
  const std::string action = "model." + std::string(kind);
  KIMI_ASSIGN_OR_RETURN(ActiveVersion next, ReverifyLocked(target, actor, kind));
  if (options_.listener) {
    Status prepared = options_.listener->Prepare(next);
    if (!prepared.ok()) {
      Status refused = prepared.WithContext("loading " + Describe(target));
      Status audited = Audit(action, target.model_id, target.digest, actor, refused, "");
      return audited.ok() ? refused : audited;
    }
  }
  ModelVersion result = target;
  Status written = WriteAudited([&](sqlite3* db) {
    KIMI_ASSIGN_OR_RETURN(std::optional<ModelVersion> active, versions::FindActive(db, target.model_id));
    std::string previous = active ? active->digest : "";
    if (kind == "rollback") {
      // The target goes back to what preceded it, so repeated rollbacks walk further back.
      KIMI_ASSIGN_OR_RETURN(std::optional<Activation> earlier,
                            versions::LastActivationOf(db, target.model_id, target.digest));
      previous = earlier ? earlier->previous_digest : "";
    }
    if (active) KIMI_RETURN_IF_ERROR(versions::SetState(db, active->model_id, active->digest, VersionState::kRetired, ""));
    std::string now = NowText();
    KIMI_RETURN_IF_ERROR(versions::SetState(db, target.model_id, target.digest, VersionState::kActive, ""));
    KIMI_RETURN_IF_ERROR(versions::SetVerified(db, target.model_id, target.digest, now));
    KIMI_RETURN_IF_ERROR(
        versions::AddActivation(db, {0, target.model_id, target.digest, previous, std::string(kind), actor.name, now}));
    result.state = VersionState::kActive;
    result.verified_at = now;
    result.detail.clear();
    return AuditIn(db, action, target.model_id, target.digest, actor, Status::OK(),
                 "version " + std::to_string(target.version) + " re-verified and active" +
                     (active ? ", replacing version " + std::to_string(active->version) + " (" + Short(active->digest) + ")"
                             : ""));
  });
  if (!written.ok()) {
    if (options_.listener) options_.listener->Abort(next);
    return written;
  }
  generation_.fetch_add(1);
  if (options_.listener) options_.listener->Switch(target.model_id, next);
  log::Info("model version active", {{"model", target.model_id}, {"digest", target.digest}, {"how", std::string(kind)}});
  return result;
}

Result<ModelVersion> ModelStore::Activate(std::string_view model_id, std::string_view digest, const Actor& actor,
                                          bool force) {
  KIMI_RETURN_IF_ERROR(RequireOwner("activate"));
  std::lock_guard<std::mutex> lock(mu_);
  auto refuse = [&](const Status& s) -> Status {
    Status audited = Audit("model.activate", model_id, digest, actor, s, "");
    return audited.ok() ? s : audited;
  };
  Result<ModelVersion> target = FindRow(model_id, digest);
  if (!target.ok()) return refuse(target.status());
  if (target->state == VersionState::kActive) return *target;
  std::optional<ModelVersion> active;
  KIMI_RETURN_IF_ERROR(options_.db->Read([&](sqlite3* db) {
    KIMI_ASSIGN_OR_RETURN(active, versions::FindActive(db, model_id));
    return Status::OK();
  }));
  if (active && target->version < active->version && !force) {
    return refuse(Status::FailedPrecondition(
        Describe(*target) + " is older than the active version " + std::to_string(active->version) +
        ": activating it is a downgrade; use rollback, or force the activation"));
  }
  return MakeActiveLocked(*target, "activate", actor);
}

Result<ModelVersion> ModelStore::Rollback(std::string_view model_id, const Actor& actor) {
  KIMI_RETURN_IF_ERROR(RequireOwner("roll back"));
  std::lock_guard<std::mutex> lock(mu_);
  auto refuse = [&](const Status& s, std::string_view digest) -> Status {
    Status audited = Audit("model.rollback", model_id, digest, actor, s, "");
    return audited.ok() ? s : audited;
  };
  std::optional<ModelVersion> active;
  std::optional<Activation> last;
  KIMI_RETURN_IF_ERROR(options_.db->Read([&](sqlite3* db) {
    KIMI_ASSIGN_OR_RETURN(active, versions::FindActive(db, model_id));
    KIMI_ASSIGN_OR_RETURN(last, versions::LastActivation(db, model_id));
    return Status::OK();
  }));
  if (!active) return refuse(Status::FailedPrecondition("model " + std::string(model_id) + " has no active version to roll back"), "");
  if (!last || last->digest != active->digest || last->previous_digest.empty()) {
    return refuse(Status::FailedPrecondition("nothing to roll back to: " + Describe(*active) +
                                             " was activated with no version active before it"),
                  active->digest);
  }
  Result<ModelVersion> target = FindRow(model_id, last->previous_digest);
  if (!target.ok()) {
    return refuse(Status::FailedPrecondition("the previous version " + Short(last->previous_digest) +
                                             " has been removed; activate another version instead"),
                  last->previous_digest);
  }
  return MakeActiveLocked(*target, "rollback", actor);
}

Status ModelStore::Remove(std::string_view model_id, std::string_view digest, const Actor& actor) {
  KIMI_RETURN_IF_ERROR(RequireOwner("remove"));
  std::lock_guard<std::mutex> lock(mu_);
  auto refuse = [&](const Status& s) -> Status {
    Status audited = Audit("model.remove", model_id, digest, actor, s, "");
    return audited.ok() ? s : audited;
  };
  Result<ModelVersion> row = FindRow(model_id, digest);
  if (!row.ok()) return refuse(row.status());
  if (row->state == VersionState::kActive) {
    return refuse(Status::FailedPrecondition(Describe(*row) + " is active; activate another version before removing it"));
  }
  // Out of the models tree first (one rename), then the row, then the bytes.
  std::string dir = VersionDirectory(model_id, digest);
  std::string doomed = staging_dir_ + "/remove-" + std::to_string(staging_counter_.fetch_add(1));
  std::error_code ec;
  bool had_dir = fs::exists(dir, ec);
  if (had_dir && ::rename(dir.c_str(), doomed.c_str()) != 0) {
    return Status::IOError("cannot move " + dir + " out of the store: " + std::strerror(errno));
  }
  Status written = WriteAudited([&](sqlite3* db) {
    KIMI_RETURN_IF_ERROR(versions::SetState(db, model_id, digest, VersionState::kRemoved, ""));
    return AuditIn(db, "model.remove", model_id, digest, actor, Status::OK(), Describe(*row) + " removed");
  });
  if (!written.ok()) {
    if (had_dir && ::rename(doomed.c_str(), dir.c_str()) != 0) {
      log::Error("cannot put back a version after a failed removal", {{"path", dir}});
    }
    return written;
  }
  StagingGuard remove_bytes(doomed);
  return Status::OK();
}

Result<ModelVersion> ModelStore::VerifyInstalled(std::string_view model_id, std::string_view digest,
                                                 const Actor& actor) {
  KIMI_RETURN_IF_ERROR(RequireOwner("record a verification"));
  std::lock_guard<std::mutex> lock(mu_);
  Result<ModelVersion> row = FindRow(model_id, digest);
  if (!row.ok()) {
    Status audited = Audit("model.verify", model_id, digest, actor, row.status(), "");
    return audited.ok() ? row.status() : audited;
  }
  KIMI_ASSIGN_OR_RETURN(ActiveVersion verified, ReverifyLocked(*row, actor, "verify"));
  ModelVersion result = *row;
  result.verified_at = NowText();
  // A version that failed before and verifies again (its files were restored) is usable again.
  if (result.state == VersionState::kFailed) result.state = VersionState::kVerified;
  result.detail.clear();
  KIMI_RETURN_IF_ERROR(WriteAudited([&](sqlite3* db) {
    KIMI_RETURN_IF_ERROR(versions::SetState(db, model_id, digest, result.state, ""));
    KIMI_RETURN_IF_ERROR(versions::SetVerified(db, model_id, digest, result.verified_at));
    return AuditIn(db, "model.verify", model_id, digest, actor, Status::OK(),
                 Describe(result) + ": " + std::to_string(verified.manifest->entries().size()) + " resources match");
  }));
  return result;
}

Result<ModelVersion> ModelStore::CheckInstalled(std::string_view model_id, std::string_view digest) const {
  KIMI_ASSIGN_OR_RETURN(ModelVersion row, FindRow(model_id, digest));
  HashOptions hashing;
  hashing.threads = options_.verify_threads;
  Result<VerifiedManifest> manifest = VerifyDirectory(VersionDirectory(model_id, digest), digest, hashing);
  if (!manifest.ok()) return manifest.status().WithContext(Describe(row) + " failed verification");
  return row;
}

Result<ActiveVersion> ModelStore::LoadableActive(std::string_view model_id, const Actor& actor) {
  KIMI_RETURN_IF_ERROR(RequireOwner("load"));
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<ModelVersion> active;
  KIMI_RETURN_IF_ERROR(options_.db->Read([&](sqlite3* db) {
    KIMI_ASSIGN_OR_RETURN(active, versions::FindActive(db, model_id));
    return Status::OK();
  }));
  if (!active) return Status::NotFound("model " + std::string(model_id) + " has no active version");
  KIMI_ASSIGN_OR_RETURN(ActiveVersion next, ReverifyLocked(*active, actor, "load"));
  KIMI_RETURN_IF_ERROR(WriteAudited([&](sqlite3* db) {
    KIMI_RETURN_IF_ERROR(versions::SetVerified(db, model_id, next.digest, NowText()));
    return AuditIn(db, "model.verify", model_id, next.digest, actor, Status::OK(), Describe(*active) + " re-verified for loading");
  }));
  return next;
}

}  // namespace kimi::models
