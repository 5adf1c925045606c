// The model store's records in SQLite: the rows of model_versions and model_activations
// (model_migrations.h), read and written through the daemon's store::Store.
//
// Pure data access: no policy here. ModelStore (model_store.h) decides what may change and
// calls these inside one store::Store::Write() transaction per administrative act, so the
// versions table and the activation history never disagree.
//
// Thread safety: the functions take the sqlite3* that Store::Read()/Write() hand out, and so
// run under the Store's mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/status.h"

struct sqlite3;

namespace kimi::models {

enum class VersionState { kVerified, kActive, kRetired, kFailed, kRemoved };

std::string_view VersionStateName(VersionState state);
Result<VersionState> ParseVersionState(std::string_view name);

struct ModelVersion {
  std::string model_id;
  std::string digest;      // the OMS subject digest (hex): the version's name
  int64_t version = 0;     // 1, 2, 3... per model id in import order; never reused
  VersionState state = VersionState::kVerified;
  std::string signer;      // the verified signer's description
  std::string source;      // where it was imported from
  int64_t files = 0;        // files the signature names
  int64_t bytes = 0;        // their total size
  std::string imported_by;
  std::string imported_at;  // UTC, "2026-11-30T02:10:00.000Z"
  std::string verified_at;  // the last successful verification
  std::string detail;       // why it failed, when state is kFailed
};

struct Activation {
  int64_t seq = 0;
  std::string model_id;
  std::string digest;
  std::string previous_digest;  // "" when nothing was active before
  std::string kind;             // "activate" or "rollback"
  std::string actor;
  std::string at;
};

// The row as JSON for `kimictl model list --json` and GET /admin/v1/models.
nlohmann::json VersionToJson(const ModelVersion& v);

namespace versions {

// Every row, removed ones included, ordered by model id then version.
Result<std::vector<ModelVersion>> List(sqlite3* db);
Result<std::optional<ModelVersion>> Find(sqlite3* db, std::string_view model_id, std::string_view digest);
Result<std::optional<ModelVersion>> FindActive(sqlite3* db, std::string_view model_id);
// The highest version number ever given to model_id; 0 when none.
Result<int64_t> MaxVersion(sqlite3* db, std::string_view model_id);

// Inserts the row, or replaces a removed row of the same (model id, digest).
Status Put(sqlite3* db, const ModelVersion& row);
Status SetState(sqlite3* db, std::string_view model_id, std::string_view digest, VersionState state,
                std::string_view detail);
Status SetVerified(sqlite3* db, std::string_view model_id, std::string_view digest, std::string_view verified_at);

Status AddActivation(sqlite3* db, const Activation& activation);
// The newest activation of model_id, and the newest one that made `digest` active.
Result<std::optional<Activation>> LastActivation(sqlite3* db, std::string_view model_id);
Result<std::optional<Activation>> LastActivationOf(sqlite3* db, std::string_view model_id, std::string_view digest);

}  // namespace versions
}  // namespace kimi::models
