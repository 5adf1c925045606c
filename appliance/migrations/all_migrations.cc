// The ordered list of every module's migrations (all_migrations.h). A module adds its list
// here; see store/store.h for the rules.
#include "migrations/all_migrations.h"

#include <vector>

#include "auth/auth_migrations.h"
#include "models/model_migrations.h"
#include "policy/policy_migrations.h"

namespace kimi::store {

std::span<const Migration> AllMigrations() {
  static const std::vector<Migration> all = [] {
    std::vector<Migration> out;
    out.insert(out.end(), std::begin(auth::kAuthMigrations), std::end(auth::kAuthMigrations));
    for (const Migration& m : models::kModelMigrations) out.push_back(m);
    for (const Migration& m : policy::kPolicyMigrations) out.push_back(m);
    return out;
  }();
  return all;
}

}  // namespace kimi::store
