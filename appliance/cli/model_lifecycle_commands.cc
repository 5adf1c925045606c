#include "cli/model_lifecycle_commands.h"

#include <unistd.h>

#include <cstdlib>
#include <iomanip>
#include <memory>
#include <ostream>

#include "audit/audit_sink.h"
#include "audit/audit_text.h"
#include "auth/auth_store.h"
#include "auth/audit_outbox.h"
#include "cli/appliance_store.h"
#include "cli/model_command_args.h"
#include "models/model_store.h"
#include "store/store.h"

namespace kimi::cli {
namespace {

const std::vector<std::string> kTrustOptions = {"--trust-dir", "--key", "--ca", "--data-dir"};

std::vector<std::string> With(std::vector<std::string> names, const std::vector<std::string>& more) {
  names.insert(names.end(), more.begin(), more.end());
  return names;
}

std::string DataDir(const ParsedArgs& a) {
  if (!a.One("--data-dir").empty()) return a.One("--data-dir");
  const char* env = std::getenv("KIMI_DATA_DIR");
  return (env != nullptr && *env != '\0') ? env : "/var/lib/kimi-appliance";
}

models::Actor CliActor() {
  models::Actor actor;
  const char* sudo_user = std::getenv("SUDO_USER");
  const char* user = std::getenv("USER");
  actor.name = sudo_user && *sudo_user ? sudo_user : user && *user ? user : "uid " + std::to_string(::getuid());
  actor.role = "admin";
  actor.source = "kimictl";
  return actor;
}

// Every model command works on a store that exists (import too: a data directory is set up
// by `kimictl admin bootstrap` or the daemon's first start), so a mistyped --data-dir is
// refused instead of becoming a new, empty store.
Result<std::unique_ptr<store::Store>> OpenDatabase(const std::string& data_dir) {
  return OpenApplianceStore(data_dir, StoreMode::kOpenExisting);
}

// The database, the audit log and the model store of one data directory, opened for an act.
// Members are destroyed in reverse order: the model store (and its lock) goes first.
//
// An act that changes the store opens it as owner, which fails (Unavailable) while
// the daemon owns it: the audit log has one writer, the daemon, and the daemon's engine must
// see every activation, so such acts go through its admin API then. A reader session takes
// no lock and has no audit log: it lists and checks, and records nothing.
struct Session {
  models::TrustStore trust;
  std::unique_ptr<store::Store> db;
  std::unique_ptr<audit::AuditSink> audit;
  std::unique_ptr<auth::AuthStore> auth_store;  // the outbox an act's record commits with
  std::unique_ptr<auth::AuditOutbox> outbox;
  std::unique_ptr<models::ModelStore> models;

  static Result<std::unique_ptr<Session>> Open(const ParsedArgs& a, bool needs_trust,
                                               models::StoreAccess access = models::StoreAccess::kOwner) {
    auto s = std::make_unique<Session>();
    std::string data_dir = DataDir(a);
    KIMI_ASSIGN_OR_RETURN(s->db, OpenDatabase(data_dir));
    models::ModelStoreOptions options;
    options.data_dir = data_dir;
    options.access = access;
    options.db = s->db.get();
    options.trust = &s->trust;
    Session* raw = s.get();
    options.audit = [raw](audit::AuditRecord record) {
      if (!raw->audit) return Status::FailedPrecondition("a read-only session records nothing");
      return raw->audit->Record(std::move(record)).WaitCommitted();
    };
    options.audit_in_transaction = [raw](sqlite3* db, audit::AuditRecord record) {
      if (!raw->audit) return Status::FailedPrecondition("a read-only session records nothing");
      return auth::InsertAuditRecord(db, record);
    };
    options.after_commit = [raw] { return raw->outbox ? raw->outbox->Drain() : Status::OK(); };
    // The store's lock first: the audit log has one writer, and while the daemon runs it is
    // the daemon, which also holds this lock.
    KIMI_ASSIGN_OR_RETURN(s->models, models::ModelStore::Open(std::move(options)));
    // Only now: while the daemon owns the store, that is the error to report, whatever the
    // trust options say. The store reads the trust store only in acts.
    if (needs_trust) {
      KIMI_ASSIGN_OR_RETURN(s->trust, TrustFromArgs(a));
    }
    if (access == models::StoreAccess::kReader) return s;
    audit::AuditSinkOptions audit_options;
    audit_options.data_dir = data_dir;
    KIMI_ASSIGN_OR_RETURN(s->audit, audit::AuditSink::Open(std::move(audit_options)));
    s->auth_store = std::make_unique<auth::AuthStore>(s->db.get());
    s->outbox = std::make_unique<auth::AuditOutbox>(s->auth_store.get(), s->audit.get());
    return s;
  }
  ~Session() {
    models.reset();
    // Whatever waits in the outbox (a record a failed move left) goes in before the log closes;
    // what still cannot, the daemon's next start moves.
    if (outbox) (void)outbox->Drain();
    outbox.reset();
    if (audit) audit->Close();
  }
};

// A full digest, or a unique prefix of at least 8 hex digits, among the model's installed versions.
Result<std::string> ResolveDigest(models::ModelStore& store, const std::string& model_id, const std::string& prefix) {
  if (prefix.size() < 8) return Status::InvalidArgument("give at least 8 hex digits of the version digest");
  KIMI_ASSIGN_OR_RETURN(std::vector<models::ModelVersion> rows, store.List());
  std::string found;
  for (const auto& v : rows) {
    if (v.model_id != model_id || v.state == models::VersionState::kRemoved || v.digest.rfind(prefix, 0) != 0) continue;
    if (!found.empty()) return Status::InvalidArgument("digest prefix " + prefix + " matches several versions");
    found = v.digest;
  }
  if (found.empty()) return Status::NotFound("model " + model_id + " has no installed version " + prefix);
  return found;
}

// An act that could not open the store. While the daemon owns it, says which admin API call
// does the same and exits with kExitStoreInUse.
int FailToOpen(std::ostream& err, const std::string& what, const Status& status, const std::string& admin_call) {
  if (status.code() != Status::Code::kUnavailable) return Fail(err, what, status);
  err << "error: " << what << ": " << audit::ShownText(status.message()) << "\n"
      << "kimictl changes the model store only while kimi-appliance is stopped; with it running, use:\n"
      << "  " << admin_call << "\n";
  return kExitStoreInUse;
}

int Usage(std::ostream& err, const char* usage, const ParsedArgs& a) {
  err << "usage: kimictl " << usage << "\n" << (a.error.empty() ? "" : "error: " + a.error + "\n");
  return kExitUsage;
}

// A version's signer names a certificate's subject or the trust file its key came from, and its
// detail may quote a signed file's name: text the medium or the signer chose, shown as text.
void PrintVersion(std::ostream& out, const char* verb, const models::ModelVersion& v) {
  out << verb << " " << v.model_id << " version " << v.version << " (" << models::VersionStateName(v.state) << ")\n"
      << "digest: " << v.digest << "\n"
      << "signer: " << audit::ShownText(v.signer) << "\n";
}

}  // namespace

int RunModelImport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const char* usage =
      "model import --id MODEL [--data-dir DIR] [--trust-dir DIR] [--key PUB.pem]... [--ca CA.pem]...\n"
      "                           [--ignore PATH]... [--threads N] [--quiet] SOURCE_DIR";
  ParsedArgs a = ParseArgs(args, With(kTrustOptions, {"--id", "--ignore", "--threads"}), {"--quiet"}, 1);
  if (!a.error.empty() || a.positional.size() != 1 || a.One("--id").empty()) return Usage(err, usage, a);
  auto session = Session::Open(a, true);
  if (!session.ok()) {
    return FailToOpen(err, "import", session.status(),
                      "POST /admin/v1/models/import {\"model\":\"" + a.One("--id") + "\",\"source\":\"" + a.positional[0] +
                          "\"} (the source under a configured model.import_roots), then poll GET /admin/v1/models/import");
  }
  models::ImportRequest request;
  request.model_id = a.One("--id");
  request.source = a.positional[0];
  request.extra_ignore_paths = a.All("--ignore");
  if (!a.One("--threads").empty()) request.threads = static_cast<unsigned>(std::atoi(a.One("--threads").c_str()));
  models::HashProgressFn copying = ProgressPrinter(err, "copying");
  models::HashProgressFn verifying = ProgressPrinter(err, "verifying the copy");
  if (!a.Has("--quiet")) {
    request.progress = [&](const models::ImportProgress& p) { (p.phase == "copying" ? copying : verifying)(p.bytes); };
  }
  auto version = (*session)->models->Import(request, CliActor());
  if (!version.ok()) return Fail(err, "import " + request.source, version.status());
  PrintVersion(out, "imported", *version);
  out << "files: " << version->files << ", bytes: " << version->bytes << "\n";
  return kExitOk;
}

int RunModelList(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a = ParseArgs(args, {"--data-dir"}, {"--all", "--json"}, 0);
  if (!a.error.empty() || !a.positional.empty()) return Usage(err, "model list [--data-dir DIR] [--all] [--json]", a);
  // Reading needs no lock: list works while the daemon runs.
  auto db = OpenDatabase(DataDir(a));
  if (!db.ok()) return Fail(err, "list", db.status());
  std::vector<models::ModelVersion> rows;
  Status s = (*db)->Read([&](sqlite3* raw) {
    KIMI_ASSIGN_OR_RETURN(rows, models::versions::List(raw));
    return Status::OK();
  });
  if (!s.ok()) return Fail(err, "list", s);
  nlohmann::json json = nlohmann::json::array();
  if (!a.Has("--json")) {
    out << std::left << std::setw(16) << "MODEL" << std::setw(8) << "VERSION" << std::setw(10) << "STATE"
        << std::setw(14) << "DIGEST" << std::setw(12) << "SIZE" << "SIGNER\n";
  }
  for (const auto& v : rows) {
    if (v.state == models::VersionState::kRemoved && !a.Has("--all")) continue;
    if (a.Has("--json")) {
      json.push_back(models::VersionToJson(v));
      continue;
    }
    out << std::left << std::setw(16) << v.model_id << std::setw(8) << v.version << std::setw(10)
        << models::VersionStateName(v.state) << std::setw(14) << v.digest.substr(0, 12)
        << std::setw(12) << HumanBytes(static_cast<double>(v.bytes)) << audit::ShownText(v.signer) << "\n";
    if (!v.detail.empty()) out << "    " << audit::ShownText(v.detail) << "\n";
  }
  if (a.Has("--json")) out << json.dump(2) << "\n";
  return kExitOk;
}

int RunModelActivate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a = ParseArgs(args, kTrustOptions, {"--force"}, 2);
  if (!a.error.empty() || a.positional.size() != 2) {
    return Usage(err, "model activate [--data-dir DIR] [--trust-dir DIR] [--force] MODEL DIGEST", a);
  }
  auto session = Session::Open(a, true);
  if (!session.ok()) {
    return FailToOpen(err, "activate", session.status(),
                      "POST /admin/v1/models/activate {\"model\":\"" + a.positional[0] + "\",\"digest\":\"" +
                          a.positional[1] + "\"} (full digest from GET /admin/v1/models)");
  }
  models::ModelStore& store = *(*session)->models;
  auto digest = ResolveDigest(store, a.positional[0], a.positional[1]);
  if (!digest.ok()) return Fail(err, "activate", digest.status());
  auto version = store.Activate(a.positional[0], *digest, CliActor(), a.Has("--force"));
  if (!version.ok()) return Fail(err, "activate", version.status());
  PrintVersion(out, "active:", *version);
  return kExitOk;
}

int RunModelRollback(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a = ParseArgs(args, kTrustOptions, {}, 1);
  if (!a.error.empty() || a.positional.size() != 1) {
    return Usage(err, "model rollback [--data-dir DIR] [--trust-dir DIR] MODEL", a);
  }
  auto session = Session::Open(a, true);
  if (!session.ok()) {
    return FailToOpen(err, "rollback", session.status(),
                      "POST /admin/v1/models/rollback {\"model\":\"" + a.positional[0] + "\"}");
  }
  auto version = (*session)->models->Rollback(a.positional[0], CliActor());
  if (!version.ok()) return Fail(err, "rollback", version.status());
  PrintVersion(out, "rolled back to", *version);
  return kExitOk;
}

int RunModelRemove(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a = ParseArgs(args, {"--data-dir"}, {}, 2);
  if (!a.error.empty() || a.positional.size() != 2) return Usage(err, "model remove [--data-dir DIR] MODEL DIGEST", a);
  auto session = Session::Open(a, false);
  if (!session.ok()) {
    return FailToOpen(err, "remove", session.status(),
                      "DELETE /admin/v1/models?model=" + a.positional[0] + "&digest=" + a.positional[1] +
                          " (full digest from GET /admin/v1/models)");
  }
  models::ModelStore& store = *(*session)->models;
  auto digest = ResolveDigest(store, a.positional[0], a.positional[1]);
  if (!digest.ok()) return Fail(err, "remove", digest.status());
  Status s = store.Remove(a.positional[0], *digest, CliActor());
  if (!s.ok()) return Fail(err, "remove", s);
  out << "removed " << a.positional[0] << " " << *digest << "\n";
  return kExitOk;
}

int RunModelVerifyInstalled(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a = ParseArgs(args, kTrustOptions, {}, 2);
  if (!a.error.empty() || a.positional.empty() || a.positional.size() > 2) {
    return Usage(err, "model verify-installed [--data-dir DIR] [--trust-dir DIR] MODEL [DIGEST]", a);
  }
  auto session = Session::Open(a, true);
  // Beside the running daemon: check the bytes as a reader, record nothing.
  const bool daemon_owns = !session.ok() && session.status().code() == Status::Code::kUnavailable;
  if (daemon_owns) session = Session::Open(a, true, models::StoreAccess::kReader);
  if (!session.ok()) return Fail(err, "verify-installed", session.status());
  if (daemon_owns) {
    err << "note: kimi-appliance owns the model store: checking only; results are not recorded (the daemon "
           "re-verifies a version whenever it activates or loads it)\n";
  }
  models::ModelStore& store = *(*session)->models;
  const std::string& model_id = a.positional[0];
  std::vector<std::string> digests;
  if (a.positional.size() == 2) {
    auto digest = ResolveDigest(store, model_id, a.positional[1]);
    if (!digest.ok()) return Fail(err, "verify-installed", digest.status());
    digests.push_back(*digest);
  } else {
    auto rows = store.List();
    if (!rows.ok()) return Fail(err, "verify-installed", rows.status());
    for (const auto& v : *rows)
      if (v.model_id == model_id && v.state != models::VersionState::kRemoved) digests.push_back(v.digest);
    if (digests.empty()) return Fail(err, "verify-installed", Status::NotFound("model " + model_id + " has no installed version"));
  }
  int code = kExitOk;
  for (const auto& digest : digests) {
    auto v = daemon_owns ? store.CheckInstalled(model_id, digest) : store.VerifyInstalled(model_id, digest, CliActor());
    if (v.ok()) {
      out << "OK " << model_id << " version " << v->version << " " << digest << "\n";
    } else {
      err << "FAILED " << model_id << " " << digest << ": " << audit::ShownText(v.status().message()) << "\n";
      code = kExitFailed;
    }
  }
  return code;
}

}  // namespace kimi::cli
