// The five limit columns, in one order, as the auth tables hold them (auth_keys and
// auth_role_limits): binding and reading a KeyLimits through a store::SqlStatement. Internal
// to the auth module's store.
//
// Thread safety: as SqlStatement.
#pragma once

#include "auth/key_limits.h"
#include "store/sql_statement.h"

namespace kimi::auth {

// The column names, for SQL text: "requests_per_minute, tokens_per_minute, ...".
inline constexpr const char* kLimitColumns =
    "requests_per_minute, tokens_per_minute, tokens_per_day, tokens_per_month, max_concurrent_streams";

// Binds the limits to parameters first..first+4, in kLimitColumns order.
inline void BindLimitColumns(store::SqlStatement& s, int first, const KeyLimits& l) {
  s.Bind(first, l.requests_per_minute).Bind(first + 1, l.tokens_per_minute).Bind(first + 2, l.tokens_per_day);
  s.Bind(first + 3, l.tokens_per_month).Bind(first + 4, l.max_concurrent_streams);
}

// Reads the limits from columns first..first+4, in kLimitColumns order.
inline KeyLimits ReadLimitColumns(const store::SqlStatement& s, int first) {
  KeyLimits l;
  l.requests_per_minute = s.Int(first);
  l.tokens_per_minute = s.Int(first + 1);
  l.tokens_per_day = s.Int(first + 2);
  l.tokens_per_month = s.Int(first + 3);
  l.max_concurrent_streams = s.Int(first + 4);
  return l;
}

}  // namespace kimi::auth
