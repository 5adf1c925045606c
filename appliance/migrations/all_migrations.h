// The whole schema of appliance.db: every module's migrations (store/store.h explains the
// rules), in the order they are applied: auth, models, policy. Each module keeps its own
// list beside its code (auth/auth_migrations.h, models/model_migrations.h,
// policy/policy_migrations.h) and its tests migrate only that list; the daemon and kimictl
// open the database with this one. It lives above the modules so that store/ depends on none
// of them. The function keeps the store's namespace, where Migration and Migrate() are.
// Public header of migrations/: other folders include it.
// Thread safety: the list is built once, on first use, and immutable afterwards.
#pragma once

#include <span>

#include "store/store.h"

namespace kimi::store {

// The migrations of every module of the daemon, in the order they are applied.
std::span<const Migration> AllMigrations();

}  // namespace kimi::store
