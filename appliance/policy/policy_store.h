// PolicyStore: every accepted policy version in the policy_versions table of appliance.db
// (policy_migrations.h). Versions are dense from 1 and never change or disappear; the
// highest one is the active policy.
// Public header of policy/: other folders include it.
// Thread safety: every method may be called from any thread (the Store serialises them).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kimi/status.h"
#include "store/store.h"

namespace kimi::policy {

struct StoredPolicy {
  int64_t version = 0;
  int64_t created_ms = 0;
  std::string actor;     // who stored it: a key id, a user name or "kimi-appliance"
  std::string name;      // the document's "name"
  std::string document;  // the JSON text as accepted
};

class PolicyStore {
 public:
  // `store` is migrated with kPolicyMigrations and outlives this object.
  explicit PolicyStore(store::Store* store) : store_(store) {}

  // Stores `document` as the next version inside one transaction, calls before_commit with the
  // transaction's connection and that version, and commits only when it returns OK (the audit
  // record goes into the outbox there, so the version and its record commit together). Returns
  // the version.
  Result<int64_t> Append(const StoredPolicy& document,
                         const std::function<Status(sqlite3* db, int64_t version)>& before_commit);
  // Every version, oldest first, without their documents.
  Result<std::vector<StoredPolicy>> List();
  // One version with its document; nullopt when there is none.
  Result<std::optional<StoredPolicy>> Get(int64_t version);
  // The highest version with its document; nullopt when the table is empty.
  Result<std::optional<StoredPolicy>> Latest();

 private:
  Result<std::optional<StoredPolicy>> GetWhere(const char* sql, int64_t version);
  store::Store* store_;
};

}  // namespace kimi::policy
