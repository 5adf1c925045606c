// The outbox moves auth events and other modules' whole records into the audit log.
#include "auth/audit_outbox.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "audit/audit_sink.h"
#include "audit/record_builder.h"
#include "audit/test_util.h"
#include "auth/auth_migrations.h"
#include "store/store.h"

namespace kimi::auth {
namespace {


// A change of another module commits its whole record with it; the outbox moves that record as
// it was made (request ids, model and digest included), auth's own events as before, and a row
// whose record was damaged still reaches the log, saying so.
TEST(AuditOutbox, MovesWholeRecordsAsTheyWereMade) {
  audit::testing::TempDir dir;
  Result<std::unique_ptr<store::Store>> db = store::Store::Open(dir.path());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Migrate(kAuthMigrations).ok());
  audit::AuditSinkOptions options;
  options.data_dir = dir.path();
  Result<std::unique_ptr<audit::AuditSink>> sink = audit::AuditSink::Open(options);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  AuthStore auth(db->get());

  const audit::AuditRecord made =
      audit::RecordBuilder::ModelEvent(audit::Actor{"alice", "admin", "127.0.0.1:1", "req_1", "client-9"},
                                       "model.activate", "k3", Status::OK(), "version 2 re-verified and active")
          .Model("k3", "4c70cfb01cd2")
          .Build();
  ASSERT_TRUE((*db)->Write([&](sqlite3* conn) { return InsertAuditRecord(conn, made); }).ok());
  ASSERT_TRUE(auth.AppendEvent(AuthEvent{0, 5, "bob", "admin", "local", "auth.key_created", "key_1", "ok", "", ""}).ok());
  ASSERT_TRUE((*db)->Write([&](sqlite3* conn) {
                     AuthEvent damaged{0, 6, "carol", "admin", "local", "policy.update", "policy/3", "ok", "d", "{"};
                     return InsertAuthEvent(conn, damaged);
                   }).ok());

  AuditOutbox outbox(&auth, sink->get());
  ASSERT_TRUE(outbox.Drain().ok());
  EXPECT_TRUE(auth.PendingEvents(10)->empty());
  ASSERT_TRUE((*sink)->Close().ok());

  const std::vector<audit::AuditRecord> log = audit::testing::RecordsIn(dir.path());
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ((log[0].actor + " " + log[0].action + " " + log[0].target + " " + log[0].request_id + " " +
             log[0].client_request_id + " " + log[0].model_digest + " " + log[0].detail),
            "alice model.activate k3 req_1 client-9 4c70cfb01cd2 version 2 re-verified and active");
  EXPECT_GT(log[0].time_ms, 0);  // stamped when the act was made
  EXPECT_EQ(log[1].action + " " + log[1].target, "auth.key_created key_1");
  EXPECT_EQ(log[2].action + " " + log[2].target, "policy.update policy/3");
  EXPECT_NE(log[2].detail.find("could not be read"), std::string::npos) << log[2].detail;
}

}  // namespace
}  // namespace kimi::auth
