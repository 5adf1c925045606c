// The ordered list of every module's migrations. A module adds its migrations here as
// entries {component, version, name, sql}; see store.h for the rules. The list is empty
// until a module needs tables: the store itself keeps only schema_migrations.
#include "store/store.h"

namespace kimi::store {

std::span<const Migration> AllMigrations() {
  return {};
}

}  // namespace kimi::store
