// The model store's tables in the daemon's database (appliance.db), as migrations of the
// component "models" (store/store.h explains the migration rules; migrations/all_migrations.h lists
// them with every other module's). Header-only, so the store library needs no link to this
// folder.
//
//   model_versions     one row per (model id, version digest) ever imported; a removed
//                      version keeps its row (state 'removed') so version numbers never repeat
//   model_activations  the history of what was made active, newest last; rollback walks it
// Public header of models/: other folders include it.
// Thread safety: constants.
#pragma once

#include "store/store.h"

namespace kimi::models {

inline constexpr store::Migration kModelMigrations[] = {
    {"models", 1, "create model_versions and model_activations",
     "CREATE TABLE model_versions("
     " model_id TEXT NOT NULL,"
     " digest TEXT NOT NULL,"
     " version INTEGER NOT NULL,"
     " state TEXT NOT NULL CHECK(state IN ('verified','active','retired','failed','removed')),"
     " signer TEXT NOT NULL,"
     " source TEXT NOT NULL,"
     " files INTEGER NOT NULL,"
     " bytes INTEGER NOT NULL,"
     " imported_by TEXT NOT NULL,"
     " imported_at TEXT NOT NULL,"
     " verified_at TEXT NOT NULL,"
     " detail TEXT NOT NULL DEFAULT '',"
     " PRIMARY KEY(model_id, digest),"
     " UNIQUE(model_id, version));"
     "CREATE UNIQUE INDEX model_versions_one_active ON model_versions(model_id) WHERE state = 'active';"
     "CREATE TABLE model_activations("
     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     " model_id TEXT NOT NULL,"
     " digest TEXT NOT NULL,"
     " previous_digest TEXT NOT NULL,"
     " kind TEXT NOT NULL CHECK(kind IN ('activate','rollback')),"
     " actor TEXT NOT NULL,"
     " at TEXT NOT NULL)"},
};

}  // namespace kimi::models
