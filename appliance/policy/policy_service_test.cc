// The policy store and service: versions kept, the active one loaded at start, a change
// taking effect at once and audited with its diff, an invalid policy changing nothing.
#include "policy/policy_service.h"

#include <gtest/gtest.h>

#include "auth/auth_migrations.h"
#include "auth/auth_store.h"
#include "policy/policy_test_util.h"

namespace kimi::policy {
namespace {

using nlohmann::json;
using testing::LoadShipped;
using testing::ScratchStore;

struct Recorder {
  std::vector<audit::AuditRecord> records;
  Status result = Status::OK();
  AuditAct Act() {
    return [this](sqlite3*, audit::AuditRecord r) {
      records.push_back(std::move(r));
      return result;
    };
  }
};

const PolicyActor kAdmin{"alice", "admin", "127.0.0.1:1", "req-1"};

TEST(PolicyServiceTest, FirstStartStoresTheDefaultAsVersionOne) {
  ScratchStore db;
  PolicyStore store(db.get());
  Recorder audit;
  PolicyService service(&store, nullptr, audit.Act());
  ASSERT_TRUE(service.Start(LoadShipped("default.json"), {"kimi-appliance", "system", "", ""}).ok());
  ASSERT_NE(service.Active(), nullptr);
  EXPECT_EQ(service.Active()->version, 1);
  EXPECT_EQ(service.Active()->policy.name, "default");
  ASSERT_EQ(audit.records.size(), 1u);
  EXPECT_EQ(audit.records[0].action, "policy.update");
  EXPECT_EQ(audit.records[0].actor, "kimi-appliance");
}

// A revert installs the older document as the next version (versions never change), audited
// as a policy change that names the version it restores.
TEST(PolicyServiceTest, RestoreReactivatesAnOlderVersionAsTheNextOneAndAuditsIt) {
  ScratchStore db;
  PolicyStore store(db.get());
  Recorder audit;
  PolicyService service(&store, nullptr, audit.Act());
  ASSERT_TRUE(service.Start(LoadShipped("default.json"), kAdmin).ok());
  json changed = LoadShipped("default.json");
  changed["content_logging"]["retention_days"] = 90;
  ASSERT_TRUE(service.Submit(changed, kAdmin).ok());

  Result<int64_t> restored = service.Restore(1, kAdmin);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(*restored, 3);
  EXPECT_EQ(service.Active()->version, 3);
  EXPECT_EQ(service.Active()->policy.content_logging.retention_days, 30);
  EXPECT_EQ(service.Active()->document, LoadShipped("default.json"));
  ASSERT_EQ(audit.records.size(), 3u);
  EXPECT_EQ(audit.records[2].action, "policy.update");
  EXPECT_EQ(audit.records[2].target, "policy/3");
  const json detail = json::parse(audit.records[2].detail);
  EXPECT_EQ(detail["restores"], 1);
  EXPECT_EQ(detail["previous"], 2);
  EXPECT_EQ(detail["diff"], json::parse(R"([{"op":"replace","path":"/content_logging/retention_days","value":30}])"));

  EXPECT_EQ(service.Restore(3, kAdmin).status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(service.Restore(9, kAdmin).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(service.Active()->version, 3);
  EXPECT_EQ(audit.records.size(), 3u);  // a refused revert stores and audits nothing
}

TEST(PolicyServiceTest, ChangeTakesEffectAtOnceIsAuditedWithItsDiffAndSurvivesRestart) {
  ScratchStore db;
  PolicyStore store(db.get());
  Recorder audit;
  const auth::ServerSecret secret = auth::ServerSecret::FromBytes({});
  {
    PolicyService service(&store, &secret, audit.Act());
    ASSERT_TRUE(service.Start(LoadShipped("default.json"), kAdmin).ok());
    std::shared_ptr<const ActivePolicy> before = service.Active();
    json changed = LoadShipped("default.json");
    changed["content_logging"]["retention_days"] = 90;
    Result<int64_t> v = service.Submit(changed, kAdmin);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(*v, 2);
    EXPECT_EQ(service.Active()->policy.content_logging.retention_days, 90);
    EXPECT_EQ(before->policy.content_logging.retention_days, 30);  // a snapshot stays as it was
    ASSERT_EQ(audit.records.size(), 2u);
    const audit::AuditRecord& r = audit.records[1];
    EXPECT_EQ(r.actor, "alice");
    EXPECT_EQ(r.role, "admin");
    EXPECT_EQ(r.request_id, "req-1");
    EXPECT_EQ(r.target, "policy/2");
    const json detail = json::parse(r.detail);
    EXPECT_EQ(detail["version"], 2);
    EXPECT_EQ(detail["previous"], 1);
    EXPECT_EQ(detail["diff"], json::parse(R"([{"op":"replace","path":"/content_logging/retention_days","value":90}])"));
  }
  PolicyService restarted(&store, &secret, audit.Act());
  ASSERT_TRUE(restarted.Start(LoadShipped("default.json"), kAdmin).ok());
  EXPECT_EQ(restarted.Active()->version, 2);
  EXPECT_EQ(restarted.Active()->policy.content_logging.retention_days, 90);
  EXPECT_EQ(audit.records.size(), 2u);  // nothing new stored at the restart
  Result<std::vector<StoredPolicy>> versions = store.List();
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[1].actor, "alice");
}

// A policy stored by an earlier version with a pattern this one refuses (a lookahead, which
// std::regex ran): the start goes on, the pattern matching every text (fail closed) until a
// corrected policy is submitted; the document is kept as it was stored.
TEST(PolicyServiceTest, AStoredPatternThatNoLongerCompilesMatchesEveryTextAndTheStartGoesOn) {
  ScratchStore db;
  PolicyStore store(db.get());
  Recorder audit;
  json stored = LoadShipped("default.json");
  stored["redaction"]["before_model"] = true;
  stored["redaction"]["custom_patterns"] = json::parse(R"j([{"name":"ticket","pattern":"T-[0-9]+(?=x)","action":"mask"}])j");
  StoredPolicy row;
  row.actor = "alice";
  row.name = stored["name"];
  row.document = stored.dump();
  ASSERT_TRUE(store.Append(row, [](sqlite3*, int64_t) { return Status::OK(); }).ok());
  PolicyService service(&store, nullptr, audit.Act());
  const Status started = service.Start(LoadShipped("default.json"), kAdmin);
  ASSERT_TRUE(started.ok()) << started.ToString();
  std::shared_ptr<const ActivePolicy> active = service.Active();
  ASSERT_NE(active, nullptr);
  EXPECT_EQ(active->version, 1);
  EXPECT_EQ(active->document["redaction"]["custom_patterns"][0]["pattern"], "T-[0-9]+(?=x)");
  RedactionTally tally;
  EXPECT_EQ(active->redactor->Redact("nothing sensitive here", &tally), "[REDACTED:TICKET]");
  // A policy submitted now is checked as always: the lookahead is refused.
  Result<int64_t> again = service.Submit(stored, kAdmin);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("lookahead"), std::string::npos) << again.status().ToString();
}

TEST(PolicyServiceTest, InvalidPolicyChangesNothingAndListsEveryPath) {
  ScratchStore db;
  PolicyStore store(db.get());
  Recorder audit;
  PolicyService service(&store, nullptr, audit.Act());
  ASSERT_TRUE(service.Start(LoadShipped("default.json"), kAdmin).ok());
  json bad = LoadShipped("default.json");
  bad["content_logging"]["retention_days"] = -1;
  bad["redaction"]["rules"][0]["action"] = "shred";
  Result<int64_t> v = service.Submit(bad, kAdmin);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(v.status().message().find("/content_logging/retention_days"), std::string::npos);
  EXPECT_NE(v.status().message().find("/redaction/rules/0/action"), std::string::npos);
  EXPECT_EQ(service.Active()->version, 1);
  EXPECT_EQ(store.List()->size(), 1u);
  EXPECT_EQ(audit.records.size(), 1u);
}

TEST(PolicyServiceTest, HashRuleWithoutSecretIsRefused) {
  ScratchStore db;
  PolicyStore store(db.get());
  PolicyService service(&store, nullptr, nullptr);
  ASSERT_TRUE(service.Start(LoadShipped("default.json"), kAdmin).ok());
  EXPECT_FALSE(service.Submit(LoadShipped("examples/bank.json"), kAdmin).ok());
  EXPECT_EQ(service.Active()->version, 1);
}

TEST(PolicyServiceTest, FailedAuditRecordStoresNothing) {
  ScratchStore db;
  PolicyStore store(db.get());
  Recorder audit;
  PolicyService service(&store, nullptr, audit.Act());
  ASSERT_TRUE(service.Start(LoadShipped("default.json"), kAdmin).ok());
  audit.result = Status::Unavailable("audit store down");
  json changed = LoadShipped("default.json");
  changed["name"] = "changed";
  EXPECT_FALSE(service.Submit(changed, kAdmin).ok());
  EXPECT_EQ(service.Active()->policy.name, "default");
  EXPECT_EQ(store.List()->size(), 1u);
  Result<std::optional<StoredPolicy>> latest = store.Latest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->version, 1);
  EXPECT_FALSE(store.Get(2)->has_value());
}

// A version and its record commit together: the record goes into the outbox in the version's
// transaction and reaches the log when moved after the commit. A version whose transaction does
// not commit leaves no record behind (an "ok" record of a version never stored, whose number was
// then used again, was what recording before the commit left after a full disk or a kill).
TEST(PolicyServiceTest, AVersionAndItsRecordCommitTogetherThroughTheOutbox) {
  ScratchStore db;
  std::vector<store::Migration> both(std::begin(kPolicyMigrations), std::end(kPolicyMigrations));
  both.insert(both.end(), std::begin(auth::kAuthMigrations), std::end(auth::kAuthMigrations));
  const Result<int> migrated = db.get()->Migrate(both);
  ASSERT_TRUE(migrated.ok()) << migrated.status().ToString();
  PolicyStore store(db.get());
  auth::AuthStore outbox(db.get());
  bool fail_after_record = false;
  PolicyService service(&store, nullptr, [&](sqlite3* conn, audit::AuditRecord r) -> Status {
    KIMI_RETURN_IF_ERROR(auth::InsertAuditRecord(conn, r));
    return fail_after_record ? Status::IOError("disk full (test)") : Status::OK();
  });
  int moved = 0;
  service.SetAfterCommit([&] {
    ++moved;
    return Status::OK();
  });
  ASSERT_TRUE(service.Start(LoadShipped("default.json"), kAdmin).ok());
  auto pending_targets = [&] {
    std::vector<std::string> targets;
    const Result<std::vector<auth::AuthEvent>> pending = outbox.PendingEvents(10);
    EXPECT_TRUE(pending.ok());
    for (const auth::AuthEvent& e : pending.ok() ? *pending : std::vector<auth::AuthEvent>{}) {
      const Result<audit::AuditRecord> r = audit::RecordFromJson(json::parse(e.record));
      EXPECT_TRUE(r.ok()) << e.record;
      if (r.ok()) targets.push_back(r->action + " " + r->target + " " + r->request_id);
    }
    return targets;
  };
  EXPECT_EQ(pending_targets(), (std::vector<std::string>{"policy.update policy/1 req-1"}));
  EXPECT_EQ(moved, 1);

  json changed = LoadShipped("default.json");
  changed["name"] = "changed";
  fail_after_record = true;
  EXPECT_FALSE(service.Submit(changed, kAdmin).ok());
  EXPECT_EQ(pending_targets().size(), 1u);  // rolled back with its version
  EXPECT_EQ(store.List()->size(), 1u);
  EXPECT_EQ(moved, 1);

  fail_after_record = false;
  ASSERT_TRUE(service.Submit(changed, kAdmin).ok());
  EXPECT_EQ(pending_targets(), (std::vector<std::string>{"policy.update policy/1 req-1", "policy.update policy/2 req-1"}));
  EXPECT_EQ(moved, 2);
}

}  // namespace
}  // namespace kimi::policy
