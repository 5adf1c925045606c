#include "cli/appliance_store.h"

#include <filesystem>
#include <string_view>

#include "migrations/all_migrations.h"

namespace kimi::cli {
namespace {

namespace fs = std::filesystem;

// True only when `path` is certainly absent. Another error (EACCES on a data directory of the
// service account) is left to Store::Open, whose message names the real problem.
bool Missing(const fs::path& path) {
  std::error_code ec;
  return fs::symlink_status(path, ec).type() == fs::file_type::not_found;
}

// A data directory holds an appliance database once appliance.db or its creation marker is
// there; a marker alone is Store::Open's case to report (the database was removed).
bool HoldsApplianceData(const std::string& data_dir) {
  return !Missing(fs::path(data_dir) / "appliance.db") ||
         !Missing(fs::path(data_dir) / std::string(store::kDatabaseMarkerFile));
}

}  // namespace

Result<std::unique_ptr<store::Store>> OpenApplianceStore(const std::string& data_dir, StoreMode mode) {
  if (mode == StoreMode::kOpenExisting && !HoldsApplianceData(data_dir)) {
    return Status::NotFound("no appliance data in " + data_dir + " (is --data-dir right?)");
  }
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> db, store::Store::Open(data_dir));
  KIMI_RETURN_IF_ERROR(db->Migrate(store::AllMigrations()).status());
  return db;
}

}  // namespace kimi::cli
