// KeyChange: an admin's edit of an existing API key (PATCH /admin/v1/keys/{id},
// `kimictl key update`): a new role, a new list of allowed models, and new values for any of
// its own limits (key_limits.h). What the change leaves out keeps its value. The secret, the
// name, the owner and the expiry are not editable: a different credential is a new key.
//
// ApplyKeyChange() writes a change over a key record; DescribeKeyChange() names what differs
// between two records as "before -> after" for the one audit record of the edit, and never
// mentions anything secret (a record holds no secret).
//
// Thread safety: value types and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "auth/auth_store.h"
#include "auth/key_limits.h"
#include "auth/roles.h"

namespace kimi::auth {

struct KeyChange {
  std::optional<Role> role;
  std::optional<std::vector<std::string>> models;  // an empty list: every model
  // New values of the key's own limits, by their index in kKeyLimitFields.
  std::array<std::optional<int64_t>, std::size(kKeyLimitFields)> limits;

  bool empty() const;
};

// `key` with the change written over it.
KeyRecord ApplyKeyChange(KeyRecord key, const KeyChange& change);
// `limits` with the change's limits written over them (its role and models do not apply).
KeyLimits ApplyLimitChange(KeyLimits limits, const KeyChange& change);

// "role user -> operator; models * -> m-a,m-b; requests_per_minute 0 -> 60": the fields that
// differ, in a fixed order ("*" stands for every model, 0 for no limit); "" when none does.
std::string DescribeKeyChange(const KeyRecord& before, const KeyRecord& after);

}  // namespace kimi::auth
