// Principal: who a request acts as, once authenticated, and the credentials it came with.
// The HTTP layer builds Credentials from headers, the Authenticator turns them into a
// Principal, and the audit record takes the principal's id (a key id or a user name, never
// a secret) and role.
// Public header of auth/: other folders include it.
// Thread safety: value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "auth/key_limits.h"
#include "auth/roles.h"
#include "auth/server_secret.h"

namespace kimi::auth {

// Owners of API keys that are not console users: "system" (keys kimictl makes without
// --owner, and keys whose owner was free text before owners were checked: migration auth 5)
// and "installer". No user may take one of these names (CheckUsername), so a key's owner is
// either an existing user, whose state it follows, or one of these.
inline constexpr std::string_view kSystemPrincipal = "system";
inline constexpr std::string_view kSystemPrincipals[] = {"system", "installer"};
inline bool IsSystemPrincipal(std::string_view name) {
  for (std::string_view p : kSystemPrincipals) {
    if (p == name) return true;
  }
  return false;
}

struct Credentials {
  std::string_view bearer;      // the token of "Authorization: Bearer <token>"
  std::string_view api_key;     // the x-api-key header
  std::string_view session_id;  // the session cookie
  std::string_view csrf_token;  // the X-CSRF-Token header
  bool state_changing = false;  // the method is not GET, HEAD or OPTIONS
  bool Empty() const { return bearer.empty() && api_key.empty() && session_id.empty(); }
};

struct Principal {
  enum class Kind { kApiKey, kSession };
  Kind kind = Kind::kApiKey;
  std::string id;    // key id ("key_...") or user name: the audit actor
  Role role = Role::kUser;
  std::string owner;                // the key's owner; the user name for a session
  std::vector<std::string> models;  // allowed models of a key; empty: all
  bool must_change_password = false;
  KeyLimits limits;                 // keys: rate, quotas, streams (0: none); sessions: none
  Digest session_hash{};            // sessions: the stored hash of the session id
};

}  // namespace kimi::auth
