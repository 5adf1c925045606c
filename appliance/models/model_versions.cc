#include "models/model_versions.h"

#include <initializer_list>
#include <variant>

#include "store/sql_statement.h"

namespace kimi::models {
namespace {

constexpr std::string_view kStateNames[] = {"verified", "active", "retired", "failed", "removed"};

using store::SqlStatement;
using Param = std::variant<std::string_view, int64_t>;

// A statement on `sql` with `params` bound to ?1, ?2, ... in order.
SqlStatement Prepare(sqlite3* db, const char* sql, std::initializer_list<Param> params) {
  SqlStatement s(db, sql);
  int i = 1;
  for (const Param& p : params) std::visit([&](auto value) { s.Bind(i++, value); }, p);
  return s;
}

constexpr const char* kVersionColumns =
    "model_id, digest, version, state, signer, source, files, bytes, imported_by, imported_at, verified_at, detail";

Result<ModelVersion> ReadVersion(const SqlStatement& s) {
  ModelVersion v;
  v.model_id = s.Text(0);
  v.digest = s.Text(1);
  v.version = s.Int(2);
  KIMI_ASSIGN_OR_RETURN(v.state, ParseVersionState(s.Text(3)));
  v.signer = s.Text(4);
  v.source = s.Text(5);
  v.files = s.Int(6);
  v.bytes = s.Int(7);
  v.imported_by = s.Text(8);
  v.imported_at = s.Text(9);
  v.verified_at = s.Text(10);
  v.detail = s.Text(11);
  return v;
}

Result<std::vector<ModelVersion>> QueryVersions(sqlite3* db, const std::string& where, std::initializer_list<Param> params) {
  std::string sql = std::string("SELECT ") + kVersionColumns + " FROM model_versions " + where;
  SqlStatement s = Prepare(db, sql.c_str(), params);
  std::vector<ModelVersion> out;
  KIMI_RETURN_IF_ERROR(s.ForEachRow([&]() -> Status {
    KIMI_ASSIGN_OR_RETURN(ModelVersion v, ReadVersion(s));
    out.push_back(std::move(v));
    return Status::OK();
  }));
  return out;
}

Result<std::optional<ModelVersion>> First(Result<std::vector<ModelVersion>> rows) {
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<ModelVersion>();
  return std::optional<ModelVersion>(std::move(rows->front()));
}

Result<std::optional<Activation>> QueryActivation(sqlite3* db, const char* sql, std::initializer_list<Param> params) {
  SqlStatement s = Prepare(db, sql, params);
  KIMI_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<Activation>();
  Activation a;
  a.seq = s.Int(0);
  a.model_id = s.Text(1);
  a.digest = s.Text(2);
  a.previous_digest = s.Text(3);
  a.kind = s.Text(4);
  a.actor = s.Text(5);
  a.at = s.Text(6);
  return std::optional<Activation>(std::move(a));
}

}  // namespace

std::string_view VersionStateName(VersionState state) { return kStateNames[static_cast<int>(state)]; }

Result<VersionState> ParseVersionState(std::string_view name) {
  for (size_t i = 0; i < std::size(kStateNames); ++i) {
    if (kStateNames[i] == name) return static_cast<VersionState>(i);
  }
  return Status::Corruption("unknown model version state \"" + std::string(name) + "\"");
}

nlohmann::json VersionToJson(const ModelVersion& v) {
  return {{"model", v.model_id},       {"digest", v.digest},           {"version", v.version},
          {"state", VersionStateName(v.state)}, {"signer", v.signer}, {"source", v.source},
          {"files", v.files},          {"bytes", v.bytes},             {"imported_by", v.imported_by},
          {"imported_at", v.imported_at}, {"verified_at", v.verified_at}, {"detail", v.detail}};
}

namespace versions {

Result<std::vector<ModelVersion>> List(sqlite3* db) { return QueryVersions(db, "ORDER BY model_id, version", {}); }

Result<std::optional<ModelVersion>> Find(sqlite3* db, std::string_view model_id, std::string_view digest) {
  return First(QueryVersions(db, "WHERE model_id = ?1 AND digest = ?2", {model_id, digest}));
}

Result<std::optional<ModelVersion>> FindActive(sqlite3* db, std::string_view model_id) {
  return First(QueryVersions(db, "WHERE model_id = ?1 AND state = 'active'", {model_id}));
}

Result<int64_t> MaxVersion(sqlite3* db, std::string_view model_id) {
  SqlStatement s = Prepare(db, "SELECT coalesce(max(version), 0) FROM model_versions WHERE model_id = ?1", {model_id});
  KIMI_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : int64_t{0};
}

Status Put(sqlite3* db, const ModelVersion& v) {
  return Prepare(db,
                 "INSERT OR REPLACE INTO model_versions(model_id, digest, version, state, signer, source, files, bytes,"
                 " imported_by, imported_at, verified_at, detail) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
                 {v.model_id, v.digest, v.version, VersionStateName(v.state), v.signer, v.source, v.files, v.bytes,
                  v.imported_by, v.imported_at, v.verified_at, v.detail})
      .Run();
}

Status SetState(sqlite3* db, std::string_view model_id, std::string_view digest, VersionState state,
                std::string_view detail) {
  return Prepare(db, "UPDATE model_versions SET state = ?3, detail = ?4 WHERE model_id = ?1 AND digest = ?2",
                 {model_id, digest, VersionStateName(state), detail})
      .Run();
}

Status SetVerified(sqlite3* db, std::string_view model_id, std::string_view digest, std::string_view verified_at) {
  return Prepare(db, "UPDATE model_versions SET verified_at = ?3 WHERE model_id = ?1 AND digest = ?2",
                 {model_id, digest, verified_at})
      .Run();
}

Status AddActivation(sqlite3* db, const Activation& a) {
  return Prepare(db,
                 "INSERT INTO model_activations(model_id, digest, previous_digest, kind, actor, at)"
                 " VALUES(?1,?2,?3,?4,?5,?6)",
                 {a.model_id, a.digest, a.previous_digest, a.kind, a.actor, a.at})
      .Run();
}

Result<std::optional<Activation>> LastActivation(sqlite3* db, std::string_view model_id) {
  return QueryActivation(db,
                         "SELECT seq, model_id, digest, previous_digest, kind, actor, at FROM model_activations"
                         " WHERE model_id = ?1 ORDER BY seq DESC LIMIT 1",
                         {model_id});
}

Result<std::optional<Activation>> LastActivationOf(sqlite3* db, std::string_view model_id, std::string_view digest) {
  return QueryActivation(db,
                         "SELECT seq, model_id, digest, previous_digest, kind, actor, at FROM model_activations"
                         " WHERE model_id = ?1 AND digest = ?2 ORDER BY seq DESC LIMIT 1",
                         {model_id, digest});
}

}  // namespace versions
}  // namespace kimi::models
