#include "models/model_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "models/model_slot.h"
#include "models/model_store_test_support.h"
#include "models/slot_switcher.h"

namespace kimi::models {
namespace {

namespace fs = std::filesystem;
using testing::StoreFixture;

// Records what the store asks of the serving side.
class RecordingListener : public ActivationListener {
 public:
  Status Prepare(const ActiveVersion& next) override {
    events.push_back("prepare " + next.digest);
    EXPECT_NE(next.manifest, nullptr);
    if (next.manifest) {
      EXPECT_EQ(next.manifest->subject_digest_hex(), next.digest);
    }
    return fail_prepare ? Status::ResourceExhausted("not enough memory to load (test)") : Status::OK();
  }
  void Switch(const std::string& model_id, const std::optional<ActiveVersion>& next) override {
    events.push_back("switch " + model_id + " " + (next ? next->digest : "none"));
  }
  void Abort(const ActiveVersion& next) override { events.push_back("abort " + next.digest); }
  std::vector<std::string> events;
  bool fail_prepare = false;
};

std::vector<std::string> VersionDirs(const std::string& models_dir) {
  std::vector<std::string> out;
  for (const auto& model : fs::directory_iterator(models_dir)) {
    if (model.path().filename().string().starts_with(".") || !model.is_directory()) continue;
    for (const auto& v : fs::directory_iterator(model.path())) out.push_back(v.path().string());
  }
  return out;
}

bool StagingEmpty(const std::string& models_dir) { return fs::is_empty(models_dir + "/.staging"); }

class ModelStoreTest : public ::testing::Test {
 protected:
  ModelVersion MustImport(ModelStore& store, const std::string& source, const std::string& id = "k3") {
    ImportRequest request;
    request.model_id = id;
    request.source = source;
    Result<ModelVersion> v = store.Import(request, actor_);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : ModelVersion{};
  }
  ModelVersion Row(ModelStore& store, const std::string& digest) {
    Result<std::vector<ModelVersion>> rows = store.List();
    EXPECT_TRUE(rows.ok());
    for (const auto& v : rows.ok() ? *rows : std::vector<ModelVersion>{})
      if (v.digest == digest) return v;
    ADD_FAILURE() << "no row " << digest;
    return {};
  }

  StoreFixture fx_;
  Actor actor_{"alice", "admin", "127.0.0.1:5000", "req-1"};
};

TEST_F(ModelStoreTest, ImportCopiesVerifiesTheCopyAndRecordsAVersion) {
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  auto store = fx_.OpenStore();
  ASSERT_TRUE(store.ok()) << store.status().ToString();

  std::set<std::string> phases;
  bool finished_copy = false;
  uint64_t read_again = ~uint64_t{0};
  ImportRequest request;
  request.model_id = "k3";
  request.source = source;
  request.progress = [&](const ImportProgress& p) {
    phases.insert(std::string(p.phase));
    EXPECT_LE(p.bytes.bytes_done, p.bytes.bytes_total);
    if (p.phase == "copying" && p.bytes.finished) finished_copy = p.bytes.bytes_done == p.bytes.bytes_total;
    if (p.phase == "verifying") read_again = p.bytes.bytes_total;
  };
  Result<ModelVersion> v = (*store)->Import(request, actor_);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(phases, (std::set<std::string>{"copying", "verifying"}));
  EXPECT_TRUE(finished_copy);
  EXPECT_EQ(read_again, 0u);  // verification used the digests the copy computed: one read
  EXPECT_EQ(v->version, 1);
  EXPECT_EQ(v->state, VersionState::kVerified);
  EXPECT_EQ(v->digest.size(), 64u);
  EXPECT_NE(v->signer.find("key"), std::string::npos) << v->signer;
  EXPECT_EQ(v->imported_by, "alice");
  EXPECT_EQ(v->files, 3);  // the signed files; model.sig is kept, .git/HEAD pruned

  std::string dir = (*store)->VersionDirectory("k3", v->digest);
  EXPECT_TRUE(fs::exists(dir + "/model-00001.safetensors"));
  EXPECT_TRUE(fs::exists(dir + "/sub/tokenizer.model"));
  EXPECT_TRUE(fs::exists(dir + "/model.sig"));
  EXPECT_FALSE(fs::exists(dir + "/.git"));  // not signed, not kept
  EXPECT_TRUE(StagingEmpty((*store)->models_dir()));

  auto records = fx_.AuditRecords();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].action, "model.import");
  EXPECT_EQ(records[0].outcome, "ok");
  EXPECT_EQ(records[0].model_digest, v->digest);
  EXPECT_EQ(records[0].actor, "alice");
  EXPECT_EQ(records[0].request_id, "req-1");

  ImportRequest again = request;
  again.progress = nullptr;
  EXPECT_EQ((*store)->Import(again, actor_).status().code(), Status::Code::kAlreadyExists);
  EXPECT_EQ(fx_.AuditTrail().back(), "model.import:refused");
  EXPECT_TRUE(StagingEmpty((*store)->models_dir()));
}

TEST_F(ModelStoreTest, ImportRefusesATamperedOrUntrustedSourceAndLeavesNothing) {
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  models::testing::FlipByte(source + "/model-00001.safetensors", 100);
  auto store = fx_.OpenStore();
  ASSERT_TRUE(store.ok());
  ImportRequest request{"k3", source};
  Result<ModelVersion> v = (*store)->Import(request, actor_);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Status::Code::kCorruption);
  EXPECT_NE(v.status().message().find("model-00001.safetensors"), std::string::npos) << v.status().message();
  EXPECT_TRUE((*store)->List()->empty());
  EXPECT_TRUE(VersionDirs((*store)->models_dir()).empty());
  EXPECT_TRUE(StagingEmpty((*store)->models_dir()));
  EXPECT_EQ(fx_.AuditTrail(), std::vector<std::string>{"model.import:refused"});

  std::atomic<bool> cancel{true};
  ImportRequest cancelled{"k3", source};
  cancelled.cancel = &cancel;
  EXPECT_EQ((*store)->Import(cancelled, actor_).status().code(), Status::Code::kCancelled);
  EXPECT_TRUE(StagingEmpty((*store)->models_dir()));
  EXPECT_EQ(fx_.AuditTrail().back(), "model.import:error");

  EXPECT_EQ((*store)->Import({"Bad/Id", source}, actor_).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ((*store)->Import({"k3", fx_.root() + "/absent"}, actor_).status().code(), Status::Code::kNotFound);
}

TEST_F(ModelStoreTest, TamperingAfterImportIsDetectedAtActivationAndOnDemand) {
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  RecordingListener listener;
  auto store = fx_.OpenStore(&listener);
  ASSERT_TRUE(store.ok());
  ModelVersion v = MustImport(**store, source);
  std::string installed = (*store)->VersionDirectory("k3", v.digest) + "/sub/tokenizer.model";
  models::testing::FlipByte(installed, 2);

  Result<ModelVersion> activated = (*store)->Activate("k3", v.digest, actor_);
  ASSERT_FALSE(activated.ok());
  EXPECT_EQ(activated.status().code(), Status::Code::kCorruption);
  EXPECT_NE(activated.status().message().find("sub/tokenizer.model"), std::string::npos) << activated.status().message();
  EXPECT_TRUE(listener.events.empty());  // nothing was loaded
  EXPECT_EQ(Row(**store, v.digest).state, VersionState::kFailed);
  EXPECT_EQ(fx_.AuditTrail().back(), "model.verify:refused");
  EXPECT_EQ(fx_.AuditRecords().back().model_digest, v.digest);

  // Restoring the byte and re-verifying makes the version usable again.
  models::testing::FlipByte(installed, 2);
  Result<ModelVersion> reverified = (*store)->VerifyInstalled("k3", v.digest, actor_);
  ASSERT_TRUE(reverified.ok()) << reverified.status().ToString();
  EXPECT_EQ(reverified->state, VersionState::kVerified);
  EXPECT_EQ(fx_.AuditTrail().back(), "model.verify:ok");

  // A file added to an installed version is refused too.
  models::testing::WriteFile((*store)->VersionDirectory("k3", v.digest) + "/extra.bin", "x");
  Result<ModelVersion> extra = (*store)->VerifyInstalled("k3", v.digest, actor_);
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("extra.bin"), std::string::npos);
}

TEST_F(ModelStoreTest, TamperingWithTheActiveVersionDeactivatesIt) {
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  RecordingListener listener;
  auto store = fx_.OpenStore(&listener);
  ASSERT_TRUE(store.ok());
  ModelVersion v = MustImport(**store, source);
  ASSERT_TRUE((*store)->Activate("k3", v.digest, actor_).ok());
  uint64_t generation = (*store)->activation_generation();
  models::testing::FlipByte((*store)->VersionDirectory("k3", v.digest) + "/config.json", 0);
  EXPECT_FALSE((*store)->VerifyInstalled("k3", v.digest, actor_).ok());
  EXPECT_EQ(listener.events.back(), "switch k3 none");
  EXPECT_EQ(Row(**store, v.digest).state, VersionState::kFailed);
  EXPECT_GT((*store)->activation_generation(), generation);
  EXPECT_EQ((*store)->LoadableActive("k3", actor_).status().code(), Status::Code::kNotFound);
}

TEST_F(ModelStoreTest, ActivateRollbackSequenceWithDowngradeProtection) {
  std::string a_src = fx_.MakeSignedModel("medium/a", "alpha");
  std::string b_src = fx_.MakeSignedModel("medium/b", "bravo");
  std::string c_src = fx_.MakeSignedModel("medium/c", "charlie");
  RecordingListener listener;
  auto store = fx_.OpenStore(&listener);
  ASSERT_TRUE(store.ok());
  ModelVersion a = MustImport(**store, a_src), b = MustImport(**store, b_src), c = MustImport(**store, c_src);
  EXPECT_EQ(a.version, 1);
  EXPECT_EQ(b.version, 2);
  EXPECT_EQ(c.version, 3);
  ModelStore& s = **store;

  EXPECT_EQ(s.Rollback("k3", actor_).status().code(), Status::Code::kFailedPrecondition);  // nothing active
  ASSERT_TRUE(s.Activate("k3", a.digest, actor_).ok());
  EXPECT_EQ(s.Rollback("k3", actor_).status().code(), Status::Code::kFailedPrecondition);  // nothing before a
  ASSERT_TRUE(s.Activate("k3", b.digest, actor_).ok());
  ASSERT_TRUE(s.Activate("k3", c.digest, actor_).ok());
  EXPECT_EQ(Row(s, a.digest).state, VersionState::kRetired);
  EXPECT_EQ(Row(s, c.digest).state, VersionState::kActive);

  // Older than the active version: refused unless forced.
  Result<ModelVersion> downgrade = s.Activate("k3", a.digest, actor_);
  EXPECT_EQ(downgrade.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(downgrade.status().message().find("downgrade"), std::string::npos);
  EXPECT_EQ(Row(s, c.digest).state, VersionState::kActive);

  // Rollbacks walk back through the history: c -> b -> a.
  Result<ModelVersion> back = s.Rollback("k3", actor_);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->digest, b.digest);
  back = s.Rollback("k3", actor_);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->digest, a.digest);
  EXPECT_EQ(s.Rollback("k3", actor_).status().code(), Status::Code::kFailedPrecondition);

  ASSERT_TRUE(s.Activate("k3", c.digest, actor_).ok());
  ASSERT_TRUE(s.Activate("k3", b.digest, actor_, /*force=*/true).ok());
  Result<ActiveVersion> loadable = s.LoadableActive("k3", actor_);
  ASSERT_TRUE(loadable.ok());
  EXPECT_EQ(loadable->digest, b.digest);
  EXPECT_EQ(loadable->directory, s.VersionDirectory("k3", b.digest));

  std::vector<std::string> expected = {
      "prepare " + a.digest, "switch k3 " + a.digest, "prepare " + b.digest, "switch k3 " + b.digest,
      "prepare " + c.digest, "switch k3 " + c.digest, "prepare " + b.digest, "switch k3 " + b.digest,
      "prepare " + a.digest, "switch k3 " + a.digest, "prepare " + c.digest, "switch k3 " + c.digest,
      "prepare " + b.digest, "switch k3 " + b.digest,
  };
  EXPECT_EQ(listener.events, expected);
  EXPECT_EQ(s.activation_generation(), 7u);

  std::vector<std::string> acts;
  for (const auto& r : fx_.AuditRecords()) {
    if (r.action == "model.activate" || r.action == "model.rollback") acts.push_back(r.action + ":" + r.outcome + ":" + r.model_digest);
  }
  EXPECT_EQ(acts, (std::vector<std::string>{
                      "model.rollback:refused:", "model.activate:ok:" + a.digest, "model.rollback:refused:" + a.digest,
                      "model.activate:ok:" + b.digest, "model.activate:ok:" + c.digest,
                      "model.activate:refused:" + a.digest, "model.rollback:ok:" + b.digest,
                      "model.rollback:ok:" + a.digest, "model.rollback:refused:" + a.digest,
                      "model.activate:ok:" + c.digest, "model.activate:ok:" + b.digest}));
}

TEST_F(ModelStoreTest, RemoveIsRefusedForTheActiveVersionAndNumbersNeverRepeat) {
  std::string a_src = fx_.MakeSignedModel("medium/a", "alpha");
  std::string b_src = fx_.MakeSignedModel("medium/b", "bravo");
  auto store = fx_.OpenStore();
  ASSERT_TRUE(store.ok());
  ModelStore& s = **store;
  ModelVersion a = MustImport(s, a_src), b = MustImport(s, b_src);
  ASSERT_TRUE(s.Activate("k3", b.digest, actor_).ok());
  Status refused = s.Remove("k3", b.digest, actor_);
  EXPECT_EQ(refused.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(refused.message().find("active"), std::string::npos);
  EXPECT_EQ(fx_.AuditTrail().back(), "model.remove:refused");

  ASSERT_TRUE(s.Remove("k3", a.digest, actor_).ok());
  EXPECT_FALSE(fs::exists(s.VersionDirectory("k3", a.digest)));
  EXPECT_EQ(Row(s, a.digest).state, VersionState::kRemoved);
  EXPECT_EQ(fx_.AuditTrail().back(), "model.remove:ok");
  EXPECT_EQ(s.Remove("k3", a.digest, actor_).code(), Status::Code::kNotFound);
  EXPECT_EQ(s.Activate("k3", a.digest, actor_).status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(StagingEmpty(s.models_dir()));

  ModelVersion again = MustImport(s, a_src);
  EXPECT_EQ(again.digest, a.digest);
  EXPECT_EQ(again.version, 3);  // a new number: re-importing is not a way to downgrade silently
}

TEST_F(ModelStoreTest, ALoadFailureLeavesTheActiveVersionServing) {
  std::string a_src = fx_.MakeSignedModel("medium/a", "alpha");
  std::string b_src = fx_.MakeSignedModel("medium/b", "bravo");
  RecordingListener listener;
  auto store = fx_.OpenStore(&listener);
  ASSERT_TRUE(store.ok());
  ModelVersion a = MustImport(**store, a_src), b = MustImport(**store, b_src);
  ASSERT_TRUE((*store)->Activate("k3", a.digest, actor_).ok());
  listener.fail_prepare = true;
  Result<ModelVersion> failed = (*store)->Activate("k3", b.digest, actor_);
  EXPECT_EQ(failed.status().code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(Row(**store, a.digest).state, VersionState::kActive);
  EXPECT_EQ(Row(**store, b.digest).state, VersionState::kVerified);
  EXPECT_EQ(listener.events.back(), "prepare " + b.digest);
  EXPECT_EQ(fx_.AuditTrail().back(), "model.activate:error");
}

TEST_F(ModelStoreTest, AnAuditFailureUndoesTheImport) {
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  auto store = fx_.OpenStore();
  ASSERT_TRUE(store.ok());
  fx_.FailAudits(true);
  Result<ModelVersion> v = (*store)->Import({"k3", source}, actor_);
  EXPECT_EQ(v.status().code(), Status::Code::kUnavailable);
  EXPECT_TRUE((*store)->List()->empty());
  EXPECT_TRUE(VersionDirs((*store)->models_dir()).empty());
}

TEST_F(ModelStoreTest, OneProcessOwnsTheStore) {
  auto first = fx_.OpenStore();
  ASSERT_TRUE(first.ok());
  auto second = fx_.OpenStore();  // a second open file description: the flock conflicts
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(second.status().message().find("admin API"), std::string::npos);
  // The owner's pid, so an operator knows which process holds it.
  EXPECT_NE(second.status().message().find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.status().message();
  first->reset();
  EXPECT_TRUE(fx_.OpenStore().ok());
}

// A medium larger than the free space is refused before a byte is copied: the error names
// the bytes needed and available, the refusal is audited, and nothing is left behind.
TEST_F(ModelStoreTest, ImportRefusesAMediumThatDoesNotFitAndWritesNothing) {
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  uint64_t available = 1000;
  auto store = fx_.OpenStore(nullptr, [&](ModelStoreOptions& o) {
    o.free_bytes = [&](const std::string&) -> Result<uint64_t> { return available; };
    o.import_margin_bytes = 4096;
  });
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  uint64_t model_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(source))
    if (e.is_regular_file()) model_bytes += e.file_size();
  const std::string needed = std::to_string(model_bytes + 4096);

  int progress_calls = 0;
  ImportRequest request{"k3", source};
  request.progress = [&](const ImportProgress&) { ++progress_calls; };
  Result<ModelVersion> v = (*store)->Import(request, actor_);
  ASSERT_EQ(v.status().code(), Status::Code::kFailedPrecondition) << v.status().ToString();
  EXPECT_NE(v.status().message().find("needs " + needed + " bytes"), std::string::npos) << v.status().message();
  EXPECT_NE(v.status().message().find("1000 bytes available"), std::string::npos) << v.status().message();
  EXPECT_EQ(progress_calls, 0);  // refused before the copy began
  EXPECT_TRUE((*store)->List()->empty());
  EXPECT_TRUE(VersionDirs((*store)->models_dir()).empty());
  EXPECT_TRUE(StagingEmpty((*store)->models_dir()));
  EXPECT_EQ(fx_.AuditTrail(), std::vector<std::string>{"model.import:refused"});

  // Exactly enough room: the import goes ahead.
  available = model_bytes + 4096;
  EXPECT_EQ(MustImport(**store, source).version, 1);
}

// A copy that fails (here on a symlink in the medium) leaves neither staging files nor a
// version.
TEST_F(ModelStoreTest, ACopyThatFailsPartWayLeavesNothing) {
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  fs::create_symlink(source + "/config.json", source + "/sub/zz-link.json");
  auto store = fx_.OpenStore();
  ASSERT_TRUE(store.ok());
  Result<ModelVersion> v = (*store)->Import({"k3", source}, actor_);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("zz-link.json"), std::string::npos) << v.status().message();
  EXPECT_TRUE((*store)->List()->empty());
  EXPECT_TRUE(VersionDirs((*store)->models_dir()).empty());
  EXPECT_TRUE(StagingEmpty((*store)->models_dir()));
}

// `mkfifo <medium>/model.sig`: reading the signature's shard size before the copy waited in
// open() for a writer, so the import job ran for ever and every later import got 429. Now the
// import is refused at once, naming the file, and leaves nothing.
TEST_F(ModelStoreTest, ImportRefusesAFifoSignatureWithoutWaiting) {
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  const std::string signature = source + "/model.sig";
  ASSERT_EQ(::unlink(signature.c_str()), 0);
  ASSERT_EQ(::mkfifo(signature.c_str(), 0600), 0);
  auto store = fx_.OpenStore();
  ASSERT_TRUE(store.ok());
  Result<ModelVersion> v = Status::Internal("not run");
  EXPECT_TRUE(testing::ReturnsWithin(
      std::chrono::seconds(20),
      [&] {
        v = (*store)->Import({"k3", source}, actor_);
      },
      [&] { testing::ReleaseFifoReaders(signature); }));
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("model.sig"), std::string::npos) << v.status().message();
  EXPECT_TRUE((*store)->List()->empty());
  EXPECT_TRUE(StagingEmpty((*store)->models_dir()));
  EXPECT_EQ(fx_.AuditTrail(), std::vector<std::string>{"model.import:refused"});
}

// A reader (kimictl beside the running daemon) takes no lock, lists and checks versions, and
// can change nothing; the owner keeps working meanwhile.
TEST_F(ModelStoreTest, AReaderWorksBesideTheOwnerAndChangesNothing) {
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  auto owner = fx_.OpenStore();
  ASSERT_TRUE(owner.ok());
  ModelVersion v = MustImport(**owner, source);
  auto reader = fx_.OpenStore(nullptr, [](ModelStoreOptions& o) { o.access = StoreAccess::kReader; });
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_EQ((*reader)->List()->size(), 1u);
  Result<ModelVersion> checked = (*reader)->CheckInstalled("k3", v.digest);
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->version, 1);
  const size_t records = fx_.AuditRecords().size();

  for (Status refused : {(*reader)->Import({"k3", source}, actor_).status(),
                         (*reader)->Activate("k3", v.digest, actor_).status(),
                         (*reader)->Rollback("k3", actor_).status(), (*reader)->Remove("k3", v.digest, actor_),
                         (*reader)->VerifyInstalled("k3", v.digest, actor_).status()}) {
    EXPECT_EQ(refused.code(), Status::Code::kFailedPrecondition) << refused.ToString();
    EXPECT_NE(refused.message().find("reading only"), std::string::npos) << refused.message();
  }

  // Tampering is reported to the reader but not recorded: the owner's state is untouched.
  models::testing::FlipByte(VersionDirs((*owner)->models_dir())[0] + "/model-00001.safetensors", 11);
  Result<ModelVersion> tampered = (*reader)->CheckInstalled("k3", v.digest);
  ASSERT_FALSE(tampered.ok());
  EXPECT_NE(tampered.status().message().find("model-00001.safetensors"), std::string::npos);
  EXPECT_EQ(Row(**owner, v.digest).state, VersionState::kVerified);
  EXPECT_EQ(fx_.AuditRecords().size(), records);
  EXPECT_EQ((*owner)->Activate("k3", v.digest, actor_).status().code(), Status::Code::kCorruption);
}

// Runs in the death test's child: opens its own database connection (SQLite connections do
// not cross fork()) and store, and dies with status 42 when the import reaches `crash_at`.
[[noreturn]] void ImportAndCrash(StoreFixture& fx, const std::string& source, const std::string& crash_at) {
  auto db = store::Store::Open(fx.data_dir());
  if (!db.ok()) _exit(3);
  ModelStoreOptions options;
  options.data_dir = fx.data_dir();
  options.db = db->get();
  options.trust = &fx.trust();
  options.audit = [](audit::AuditRecord) { return Status::OK(); };
  options.audit_in_transaction = [](sqlite3*, audit::AuditRecord) { return Status::OK(); };
  auto store = ModelStore::Open(std::move(options));
  if (!store.ok()) _exit(4);
  ImportRequest request{"k3", source};
  request.on_step = [&](std::string_view step) {
    if (step == crash_at) _exit(42);
  };
  (void)(*store)->Import(request, Actor{});
  _exit(5);
}

// A crash at any step of an import (the process dies: no destructor, no cleanup) leaves no
// version: the next Open() sweeps staging and the directory that has no row.
TEST_F(ModelStoreTest, CrashMidImportLeavesNoVersion) {
  GTEST_FLAG_SET(death_test_style, "fast");
  std::string source = fx_.MakeSignedModel("medium/k3", "alpha");
  for (std::string crash_at : {"copied", "verified", "renamed"}) {
    SCOPED_TRACE(crash_at);
    EXPECT_EXIT(ImportAndCrash(fx_, source, crash_at), ::testing::ExitedWithCode(42), "");
    std::string models_dir = fx_.data_dir() + "/models";
    EXPECT_FALSE(StagingEmpty(models_dir) && VersionDirs(models_dir).empty()) << "the crash left nothing to sweep";
    auto store = fx_.OpenStore();
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_TRUE((*store)->List()->empty());
    EXPECT_TRUE(VersionDirs(models_dir).empty());
    EXPECT_TRUE(StagingEmpty(models_dir));
  }
  auto store = fx_.OpenStore();
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(MustImport(**store, source).version, 1);
}

// The serving side's view: requests run continuously while versions are activated and rolled
// back. No request finds the slot empty, and each one is served by one whole version whose
// digest is the one the store activated.
TEST_F(ModelStoreTest, SwapUnderLoadServesEveryRequestFromOneVersion) {
  struct LoadedModel {
    std::string digest;
    std::vector<std::string> files;  // what the loader read, from the verified manifest
  };
  std::string a_src = fx_.MakeSignedModel("medium/a", "alpha");
  std::string b_src = fx_.MakeSignedModel("medium/b", "bravo");
  ModelSlot<LoadedModel> slot;
  std::atomic<int> loads{0};
  SlotSwitcher<LoadedModel> switcher("k3", &slot, [&](const ActiveVersion& v) -> Result<std::shared_ptr<LoadedModel>> {
    loads.fetch_add(1);
    auto m = std::make_shared<LoadedModel>();
    m->digest = v.manifest->subject_digest_hex();
    m->files = v.manifest->files();
    return m;
  });
  auto store = fx_.OpenStore(&switcher);
  ASSERT_TRUE(store.ok());
  ModelVersion a = MustImport(**store, a_src), b = MustImport(**store, b_src);
  ASSERT_TRUE((*store)->Activate("k3", a.digest, actor_).ok());

  std::atomic<bool> stop{false};
  std::atomic<int> failed{0}, mismatched{0};
  std::atomic<long> served{0};
  std::mutex seen_mu;
  std::set<std::string> seen;
  std::vector<std::thread> clients;
  for (int i = 0; i < 3; ++i) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        auto lease = slot.Acquire();
        if (!lease) {
          failed.fetch_add(1);
          continue;
        }
        if (lease->digest != lease.digest() || lease->files.size() != 3) mismatched.fetch_add(1);
        std::this_thread::yield();  // the request "runs" while a swap may happen
        if (lease->digest != lease.digest()) mismatched.fetch_add(1);
        served.fetch_add(1);
        std::lock_guard<std::mutex> lock(seen_mu);
        seen.insert(lease.digest());
      }
    });
  }
  for (int round = 0; round < 5; ++round) {
    ASSERT_TRUE((*store)->Activate("k3", b.digest, actor_).ok());
    ASSERT_TRUE((*store)->Rollback("k3", actor_).ok());
  }
  stop.store(true);
  for (auto& t : clients) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(mismatched.load(), 0);
  EXPECT_GT(served.load(), 0);
  EXPECT_EQ(loads.load(), 11);
  EXPECT_EQ(slot.Acquire().digest(), a.digest);
  EXPECT_EQ(slot.generation(), 11u);
  EXPECT_TRUE(seen.count(a.digest));
}

}  // namespace
}  // namespace kimi::models
