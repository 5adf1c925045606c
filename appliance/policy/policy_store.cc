#include "policy/policy_store.h"

#include "store/sql_statement.h"

namespace kimi::policy {
namespace {

using store::SqlStatement;

StoredPolicy Row(const SqlStatement& st, bool with_document) {
  StoredPolicy p;
  p.version = st.Int(0);
  p.created_ms = st.Int(1);
  p.actor = st.Text(2);
  p.name = st.Text(3);
  if (with_document) p.document = st.Text(4);
  return p;
}

}  // namespace

Result<int64_t> PolicyStore::Append(const StoredPolicy& document,
                                    const std::function<Status(sqlite3* db, int64_t version)>& before_commit) {
  int64_t version = 0;
  KIMI_RETURN_IF_ERROR(store_->Write([&](sqlite3* db) -> Status {
    SqlStatement next(db, "SELECT COALESCE(MAX(version), 0) + 1 FROM policy_versions");
    KIMI_RETURN_IF_ERROR(next.ForEachRow([&] { version = next.Int(0); }));
    SqlStatement insert(db, "INSERT INTO policy_versions(version, created_ms, actor, name, document) VALUES(?,?,?,?,?)");
    KIMI_RETURN_IF_ERROR(
        insert.Bind(1, version).Bind(2, document.created_ms).Bind(3, document.actor).Bind(4, document.name)
            .Bind(5, document.document).Run());
    return before_commit(db, version);
  }));
  return version;
}

Result<std::vector<StoredPolicy>> PolicyStore::List() {
  std::vector<StoredPolicy> out;
  KIMI_RETURN_IF_ERROR(store_->Read([&](sqlite3* db) -> Status {
    SqlStatement st(db, "SELECT version, created_ms, actor, name FROM policy_versions ORDER BY version");
    return st.ForEachRow([&] { out.push_back(Row(st, false)); });
  }));
  return out;
}

Result<std::optional<StoredPolicy>> PolicyStore::GetWhere(const char* sql, int64_t version) {
  std::optional<StoredPolicy> out;
  KIMI_RETURN_IF_ERROR(store_->Read([&](sqlite3* db) -> Status {
    SqlStatement st(db, sql);
    if (version > 0) st.Bind(1, version);
    KIMI_ASSIGN_OR_RETURN(bool row, st.Step());
    if (row) out = Row(st, true);
    return Status::OK();
  }));
  return out;
}

Result<std::optional<StoredPolicy>> PolicyStore::Get(int64_t version) {
  if (version <= 0) return std::optional<StoredPolicy>();
  return GetWhere("SELECT version, created_ms, actor, name, document FROM policy_versions WHERE version = ?", version);
}

Result<std::optional<StoredPolicy>> PolicyStore::Latest() {
  return GetWhere("SELECT version, created_ms, actor, name, document FROM policy_versions ORDER BY version DESC LIMIT 1", 0);
}

}  // namespace kimi::policy
