// The ordered list of every module's migrations. A module adds its migrations here as
// entries {component, version, name, sql}; see store.h for the rules. Each module keeps its
// own list beside its code and this file concatenates them.
#include <vector>

#include "auth/auth_migrations.h"
#include "models/model_migrations.h"
#include "policy/policy_migrations.h"
#include "store/store.h"

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
