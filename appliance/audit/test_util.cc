#include "audit/test_util.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <filesystem>

#include "audit/audit_key.h"
#include "audit/audit_store.h"
#include "audit/merkle.h"

namespace kimi::audit::testing {

std::vector<AuditRecord> RecordsIn(const std::string& dir) {
  std::vector<AuditRecord> out;
  AuditStoreOptions read_only;
  read_only.read_only = true;
  Result<std::unique_ptr<AuditStore>> store = AuditStore::Open(dir + "/audit.db", read_only);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return out;
  Status scanned = (*store)->ScanRecords(RecordQuery{}, [&](StoredRecord& r) {
    out.push_back(r.record);
    return Status::OK();
  });
  EXPECT_TRUE(scanned.ok()) << scanned.ToString();
  return out;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/kimi-audit-test-XXXXXX";
  char* made = ::mkdtemp(tmpl.data());
  if (made == nullptr) ADD_FAILURE() << "mkdtemp failed";
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

AuditRecord SampleRecord(int i) {
  AuditRecord r;
  r.time_ms = 1'790'000'000'000 + i * 1000;
  r.actor = "key_" + std::to_string(i % 3);
  r.role = "user";
  r.source = "127.0.0.1:" + std::to_string(40000 + i);
  r.request_id = "req-" + std::to_string(i);
  r.client_request_id = "client-" + std::to_string(i % 5);
  r.action = "chat.completions";
  r.model = "kimi-k3";
  r.model_digest = "sha256:0f3c";
  r.outcome = "ok";
  r.http_status = 200;
  r.prompt_tokens = 10 + i;
  r.completion_tokens = 20 + i;
  r.ttft_us = 1500 + i;
  r.total_us = 90000 + i;
  r.policy = {"allow", "redact:email"};
  r.backend = "embedded";
  r.route_decision = "embedded (only candidate)";
  r.attempts = 1;
  r.request_sha256 = ToHex(Sha256("request " + std::to_string(i)));
  r.response_sha256 = ToHex(Sha256("response " + std::to_string(i)));
  if (i % 4 == 1) r.content = AuditContent{"prompt " + std::to_string(i), "completion " + std::to_string(i)};
  return r;
}

AuditSinkOptions TestSinkOptions(const std::string& dir) {
  AuditSinkOptions o;
  o.data_dir = dir;
  o.sign_interval_ms = 3'600'000;
  o.probe_interval_ms = 20;
  auto ticks = std::make_shared<std::atomic<int64_t>>(1'790'000'000'000);
  o.clock_ms = [ticks] { return ticks->fetch_add(1); };
  return o;
}

PublicKey BuildLog(const std::string& dir, int count, const std::vector<uint64_t>& head_sizes) {
  Result<std::unique_ptr<AuditSink>> sink = AuditSink::Open(TestSinkOptions(dir));
  EXPECT_TRUE(sink.ok()) << sink.status().ToString();
  if (!sink.ok()) return PublicKey{};
  // Records between two heads are queued together and committed in a few group commits
  // (one thread queues them, so their order is the sequence order).
  size_t next_head = 0;
  std::vector<Ticket> queued;
  for (int i = 0; i < count; ++i) {
    queued.push_back((*sink)->Record(SampleRecord(i)));
    const bool head_here = next_head < head_sizes.size() && head_sizes[next_head] == static_cast<uint64_t>(i + 1);
    if (!head_here && i + 1 < count) continue;
    for (const Ticket& t : queued) {
      const Status s = t.WaitCommitted();
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    queued.clear();
    while (next_head < head_sizes.size() && head_sizes[next_head] == static_cast<uint64_t>(i + 1)) {
      EXPECT_TRUE((*sink)->SignHeadNow().ok());
      ++next_head;
    }
  }
  const PublicKey key = (*sink)->public_key();
  EXPECT_TRUE((*sink)->Close().ok());
  return key;
}

void TamperSql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "") << " in: " << sql;
  sqlite3_free(err);
  sqlite3_close(db);
}

void ForgeRow(const std::string& db_path, AuditRecord r) {
  Result<std::unique_ptr<AuditStore>> opened = AuditStore::Open(db_path, AuditStoreOptions{});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  AuditStore& store = **opened;
  const std::string seq = std::to_string(r.seq);
  ASSERT_TRUE(store.ExecForTest("DELETE FROM audit_records WHERE seq = " + seq + "; DELETE FROM audit_content WHERE seq = " + seq).ok());
  NormalizeRecord(&r);
  PendingRow row;
  row.record = &r;
  row.leaf_hash = HashLeaf(CanonicalRecordBytes(r));
  ASSERT_TRUE(store.AppendBatch(std::span<const PendingRow>(&row, 1), CompactTree()).ok());
  Result<uint64_t> count = store.RecordCount();
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  CompactTree tree;
  ASSERT_TRUE(store.ScanLeafHashes(0, *count, [&](const Hash& leaf) { tree.AppendLeafHash(leaf); }).ok());
  const std::string edge = tree.SerializeEdge();
  const std::string edge_hex = ToHex(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(edge.data()), edge.size()));
  ASSERT_TRUE(store.ExecForTest("UPDATE audit_tree SET size = " + std::to_string(tree.size()) + ", edge = x'" +
                                edge_hex + "' WHERE id = 1")
                  .ok());
}

void CopyLogFiles(const std::string& from_dir, const std::string& to_dir) {
  namespace fs = std::filesystem;
  for (const std::string& name : {std::string(kAuditDbFile), std::string(kAuditDbFile) + "-wal",
                                 std::string(kAuditKeyFile), std::string(kAuditPublicKeyFile)}) {
    if (!fs::exists(from_dir + "/" + name)) continue;
    fs::copy_file(from_dir + "/" + name, to_dir + "/" + name, fs::copy_options::overwrite_existing);
    fs::permissions(to_dir + "/" + name, fs::perms::owner_read | fs::perms::owner_write);
  }
}

DatabaseWriteLock::DatabaseWriteLock(const std::string& db_path) {
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db_), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db_, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
}

void DatabaseWriteLock::Release() {
  if (db_ == nullptr) return;
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db_);
  db_ = nullptr;
}

bool Eventually(const std::function<bool()>& cond) {
  for (int i = 0; i < 2000 && !cond(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return cond();
}

bool RunThenKill9(const std::function<bool()>& work) {
  const pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) {
    if (!work()) ::_exit(3);
    ::kill(::getpid(), SIGKILL);
    ::_exit(4);
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child) return false;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

int RunStandaloneVerifier(const std::string& args) {
  const char* build = std::getenv("KIMI_BUILD_DIR");
  if (build == nullptr) return -1;
  const std::string cmd = std::string(build) + "/appliance/audit/kimi-audit-verify " + args + " > /dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace kimi::audit::testing
