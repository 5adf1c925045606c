// Opening the appliance database (<data_dir>/appliance.db) for a kimictl command: the one
// place kimictl opens it, so one rule decides which commands may create it.
//
// store::Store::Open creates a missing data directory and database, which the daemon wants
// on its first start. A kimictl command that reads or edits the store must not: given a
// mistyped --data-dir it would create an empty store there, report success on it (an empty
// key list, a revocation of nothing) and leave a stray data directory behind. So commands open
// the store kOpenExisting, and only those whose job is to set a fresh data directory up pass
// kCreate (admin bootstrap; key create, which makes the first key before a first start).
//
// Thread safety: each call is independent.
#pragma once

#include <memory>
#include <string>

#include "kimi/status.h"
#include "store/store.h"

namespace kimi::cli {

enum class StoreMode {
  kOpenExisting,  // NotFound, nothing created, when data_dir holds no appliance database
  kCreate,        // creates the directory and the database when they are missing
};

// Opens <data_dir>/appliance.db and applies every module's migrations. With kOpenExisting,
// a directory that is missing or holds neither appliance.db nor its creation marker is
// refused with "no appliance data in DATA_DIR (is --data-dir right?)".
Result<std::unique_ptr<store::Store>> OpenApplianceStore(const std::string& data_dir, StoreMode mode);

}  // namespace kimi::cli
