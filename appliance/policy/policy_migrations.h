// The policy module's table in appliance.db (component "policy" of migrations/all_migrations.h).
// Released migrations never change; a new column is a new migration.
// Public header of policy/: other folders include it.
//   policy_versions  every accepted policy document, numbered from 1; the highest version is
//                    the active one. Refused documents are never stored.
#pragma once

#include "store/store.h"

namespace kimi::policy {

inline constexpr store::Migration kPolicyMigrations[] = {
    {"policy", 1, "create policy_versions",
     "CREATE TABLE policy_versions("
     " version INTEGER PRIMARY KEY,"
     " created_ms INTEGER NOT NULL,"
     " actor TEXT NOT NULL,"
     " name TEXT NOT NULL,"
     " document TEXT NOT NULL);"},
};

}  // namespace kimi::policy
